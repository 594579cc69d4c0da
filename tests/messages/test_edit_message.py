"""PATCH /messages/{id} and GET /messages/{id}/history: editing content (the sender, within the
organization's limit; mentions and alert words re-evaluated), moving to another topic (one, later
or all messages; who may, until when; resolving), the edit history as the organization shows it,
update_message events, and refusals that change nothing."""

import hashlib
from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import UserGroup
from apps.messages.actions.alert_words import check_add_alert_words
from apps.messages.models import Message, UserMessage
from apps.realms.models import Realm
from tests.api import api_for, assert_error, assert_success
from tests.factories import realm_admin_form
from tests.messages.conftest import db_state


def edit(user, message_id, **params):
    return api_for(user).patch(f"/messages/{message_id}", params)


def refused(user, message_id, msg, code="BAD_REQUEST", **params) -> dict:
    before = db_state()
    body = assert_error(edit(user, message_id, **params), 400, code, msg)
    assert db_state() == before
    return body


def shown(user, message_id) -> dict:
    return assert_success(api_for(user).get(f"/messages/{message_id}"))["message"]


def sent_ago(message_id: int, seconds: int) -> None:
    Message.objects.filter(id=message_id).update(date_sent=timezone.now() - timedelta(seconds=seconds))


def set_group(realm, setting: str, group_name: str) -> None:
    group = UserGroup.objects.get(realm=realm, name=group_name)
    do_change_realm_permission_group_setting(realm, setting, group.id, acting_user=None)


def topic_ids(stream, topic) -> list[int]:
    return list(Message.objects.filter(stream=stream, topic=topic).order_by("id").values_list("id", flat=True))


@pytest.fixture
def design(make_stream, member, admin, moderator):
    return make_stream("design", member, admin, moderator)


# --- content --------------------------------------------------------------------------------------


def test_the_sender_edits_the_content_and_everyone_is_told(design, send, member, admin, capture_events):
    message_id = send(member, design, "Lunch at noon")
    with capture_events(admin) as received:
        body = assert_success(edit(member, message_id, content="Lunch at **one**"))
    assert body["detached_uploads"] == []
    [event] = received[admin.id]
    assert {k: event[k] for k in ("type", "user_id", "message_id", "message_ids", "orig_content", "content",
                                  "rendered_content", "stream_id", "rendering_only", "flags")} == {
        "type": "update_message", "user_id": member.id, "message_id": message_id, "message_ids": [message_id],
        "orig_content": "Lunch at noon", "content": "Lunch at **one**",
        "rendered_content": "<p>Lunch at <strong>one</strong></p>", "stream_id": design.id,
        "rendering_only": False, "flags": [],
    }  # fmt: skip
    message = shown(admin, message_id)
    assert message["content"] == "<p>Lunch at <strong>one</strong></p>"
    assert "last_edit_timestamp" in message
    assert "last_moved_timestamp" not in message
    [entry] = message["edit_history"]
    assert entry["prev_content"] == "Lunch at noon"
    assert entry["user_id"] == member.id


def test_a_subscriber_who_joined_later_is_told_with_the_read_flag(design, send, member, owner, capture_events):
    """They have no row of the message: Zulip's subscriber_info sends them `read` (the permissions
    QA pass: Parley sent no flags, as if unread), for an edit and a topic move alike."""
    from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions

    message_id = send(member, design, "Lunch at noon", topic="lunch")
    bulk_add_subscriptions(design.realm, [design], [owner], acting_user=None)
    with capture_events(owner) as received:
        assert_success(edit(member, message_id, content="Lunch at one"))
        assert_success(edit(member, message_id, topic="food"))
    updates = [event for event in received[owner.id] if event["type"] == "update_message"]
    assert [event["flags"] for event in updates] == [["read"], ["read"]]


def test_an_edit_re_evaluates_mentions_and_alert_words(design, send, member, admin, moderator):
    check_add_alert_words(moderator, ["deploy"], acting_user=moderator)
    message_id = send(member, design, "hi @**Adam Admin**")
    assert UserMessage.objects.get(user=admin, message_id=message_id).flags & UserMessage.MENTIONED
    assert_success(edit(member, message_id, content="hi @**Mona Moderator**, deploy"))
    assert not UserMessage.objects.get(user=admin, message_id=message_id).flags & UserMessage.MENTIONED
    flags = UserMessage.objects.get(user=moderator, message_id=message_id).flags
    assert flags & UserMessage.MENTIONED
    assert flags & UserMessage.HAS_ALERT_WORD


def test_flags_changed_while_an_edit_recomputes_mentions_are_kept(design, send, member, admin, monkeypatch):
    """The load QA pass: a mark-as-read committed between the edit's read of the recipients' flags
    and its write was undone (the whole value written back), the message unread again. Here the
    other request's change is made at that moment, in the database, as its commit would."""
    from apps.messages.actions import edit as edit_module

    message_id = send(member, design, "hi @**Adam Admin**")
    recompute = edit_module.alerted_user_ids

    def meanwhile(*args, **kwargs):
        marked = UserMessage.objects.filter(user=admin, message_id=message_id)
        marked.update(flags=F("flags").bitor(UserMessage.READ | UserMessage.STARRED))
        return recompute(*args, **kwargs)

    monkeypatch.setattr(edit_module, "alerted_user_ids", meanwhile)
    assert_success(edit(member, message_id, content="hi everyone"))
    flags = UserMessage.objects.get(user=admin, message_id=message_id).flags
    assert flags & UserMessage.READ
    assert flags & UserMessage.STARRED
    assert not flags & UserMessage.MENTIONED


def test_only_the_sender_edits_content_within_the_limit(realm, design, send, member, admin):
    message_id = send(member, design, "mine")
    refused(admin, message_id, "You don't have permission to edit this message", content="theirs")
    sent_ago(message_id, 600 + 21)
    refused(member, message_id, "The time limit for editing this message has passed", content="late")
    sent_ago(message_id, 600 + 19)  # Zulip's 20 s of grace
    assert_success(edit(member, message_id, content="just in time"))
    realm.allow_message_editing = False
    realm.save(update_fields=["allow_message_editing"])
    refused(member, message_id, "Your organization has turned off message editing", content="again")
    # Zulip's order: the organization's switch before whose message it is.
    refused(admin, message_id, "Your organization has turned off message editing", content="theirs")


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({}, "Nothing to change"),
        ({"topic": "lunch"}, "Nothing to change"),
        ({"propagate_mode": "change_all", "content": "x"}, "Invalid propagate_mode without topic edit"),
        ({"stream_id": 99999, "content": "x"}, "Cannot change message content while changing channel"),
        ({"stream_id": 99999}, "Invalid channel ID"),
    ],
)
def test_malformed_edits_are_refused(design, send, member, params, msg):
    message_id = send(member, design, "hello")
    refused(member, message_id, msg, **params)


def test_content_edited_to_nothing_reads_deleted(design, send, member):
    message_id = send(member, design, "hello")
    assert_success(edit(member, message_id, content="  \n "))
    message = shown(member, message_id)
    assert message["content"] == "<p>(deleted)</p>"
    assert message["edit_history"][0]["prev_content"] == "hello"


def test_the_expected_content_digest_is_checked(design, send, member, admin):
    message_id = send(member, design, "hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    wrong = "'prev_content_sha256' value does not match the expected value."
    # As Zulip's: after whether the user may edit it; for moves too.
    refused(admin, message_id, "You don't have permission to edit this message", content="x", prev_content_sha256="0")
    # Zulip's code for it (the mobile QA pass: BAD_REQUEST).
    refused(member, message_id, wrong, "EXPECTATION_MISMATCH", content="x", prev_content_sha256="0" * 64)
    refused(member, message_id, wrong, "EXPECTATION_MISMATCH", topic="elsewhere", prev_content_sha256=digest[::-1])
    assert_success(edit(member, message_id, content="hello!", prev_content_sha256=digest))
    new_digest = hashlib.sha256(b"hello!").hexdigest()
    assert_success(edit(member, message_id, topic="elsewhere", prev_content_sha256=new_digest))


def test_widgets_and_others_messages_cannot_be_edited(design, send, member, admin, foreign_user):
    poll = send(member, design, "/poll Lunch?")
    refused(member, poll, "Widgets cannot be edited.", content="/poll Dinner?")
    refused(foreign_user, poll, "Invalid message(s)", content="x")


def test_direct_messages_have_no_topic(send, member, admin):
    message_id = send(member, [admin])
    refused(member, message_id, "Direct messages cannot have topics.", topic="a topic")
    refused(member, message_id, "Direct messages cannot be moved to channels.", stream_id=1)
    assert_success(edit(member, message_id, content="edited"))


# --- topics ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "moved"), [("change_one", [1]), ("change_later", [1, 2]), ("change_all", [0, 1, 2])])
def test_moving_one_later_or_all_messages_of_a_topic(design, send, member, admin, capture_events, mode, moved):
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(3)]
    other = send(member, design, "elsewhere", topic="other")
    with capture_events(admin) as received:
        assert_success(edit(admin, ids[1], topic="food", propagate_mode=mode, send_notification_to_new_thread="false"))
    assert topic_ids(design, "food") == [ids[n] for n in moved]
    assert topic_ids(design, "other") == [other]
    [event] = received[admin.id]
    keys = ("message_id", "message_ids", "orig_subject", "subject", "propagate_mode", "topic_links")
    assert {k: event[k] for k in keys} == {
        "message_id": ids[1], "message_ids": [ids[n] for n in moved], "orig_subject": "lunch", "subject": "food",
        "propagate_mode": mode, "topic_links": [],
    }  # fmt: skip
    assert "orig_content" not in event
    message = shown(admin, ids[moved[0]])
    assert message["subject"] == "food"
    assert "last_moved_timestamp" in message
    assert message["edit_history"][0] == {"user_id": admin.id, "timestamp": message["last_moved_timestamp"],
                                          "prev_topic": "lunch", "topic": "food"}  # fmt: skip


def test_content_and_topic_in_one_edit(design, send, member):
    message_id = send(member, design, "hello", topic="lunch")
    assert_success(edit(member, message_id, content="hello!", topic="food"))
    [entry] = shown(member, message_id)["edit_history"]
    assert (entry["prev_content"], entry["prev_topic"], entry["topic"]) == ("hello", "lunch", "food")


def test_who_may_move_and_resolve_topics(realm, design, send, member, admin, moderator):
    message_id = send(admin, design, topic="lunch")
    set_group(realm, "can_move_messages_between_topics_group", "role:moderators")
    refused(member, message_id, "You don't have permission to edit this message", topic="food")
    assert_success(edit(moderator, message_id, topic="food"))
    # Resolving is its own permission.
    assert_success(edit(member, message_id, topic="✔ food", propagate_mode="change_all"))
    set_group(realm, "can_resolve_topics_group", "role:nobody")
    refused(member, message_id, "You don't have permission to resolve topics in this channel.", topic="food")


def test_topic_moves_within_the_limit_except_for_moderators_and_administrators(
    realm, design, send, member, moderator, admin
):
    message_id, later = send(member, design, topic="lunch"), send(member, design, topic="lunch")
    sent_ago(message_id, 604800 + 21)
    refused(member, message_id, "The time limit for editing this message's topic has passed.", topic="food")
    assert_success(edit(moderator, message_id, topic="food"))
    # "The time limit will never apply to administrators and moderators" (Zulip's help center):
    assert_success(edit(admin, message_id, topic="lunch"))
    assert_success(edit(admin, later, topic="supper", propagate_mode="change_all"))
    assert Message.objects.get(id=message_id).topic == "supper"


def test_a_whole_topic_moves_only_if_every_message_is_within_the_limit(design, send, member):
    old, new = send(member, design, topic="lunch"), send(member, design, topic="lunch")
    sent_ago(old, 604800 + 21)
    body = refused(member, new, "You only have permission to move the 1/2 most recent messages in this topic.",
                   code="MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", topic="food", propagate_mode="change_all")  # fmt: skip
    assert (body["first_message_id_allowed_to_move"], body["total_messages_in_topic"],
            body["total_messages_allowed_to_move"]) == (new, 2, 1)  # fmt: skip
    assert_success(edit(member, new, topic="food", propagate_mode="change_later"))


def test_older_clients_see_the_empty_topic_named(design, send, member, admin, capture_events):
    message_id = send(member, design, topic="lunch")
    with capture_events(admin) as received:
        assert_success(edit(member, message_id, topic=""))
    assert received[admin.id][0]["subject"] == "general chat"


def test_older_clients_see_the_empty_topic_named_in_a_messages_edit_history(design, send, member):
    """GET /messages and GET /messages/{id}: the edit history's topics as the message's own (the
    conformance QA pass: "" stayed in `edit_history` for clients without allow_empty_topic_name)."""
    message_id = send(member, design, topic="lunch")
    assert_success(edit(member, message_id, topic=""))
    assert_success(edit(member, message_id, topic="food"))
    message = assert_success(api_for(member).get(f"/messages/{message_id}"))["message"]
    topics = [(e["prev_topic"], e["topic"]) for e in message["edit_history"]]
    assert topics == [("general chat", "food"), ("lunch", "general chat")]
    newest = {"anchor": message_id, "num_before": 0, "num_after": 0}
    [shown] = assert_success(api_for(member).get("/messages", newest))["messages"]
    assert [(e["prev_topic"], e["topic"]) for e in shown["edit_history"]] == topics
    raw = assert_success(api_for(member).get(f"/messages/{message_id}", {"allow_empty_topic_name": "true"}))
    assert [(e["prev_topic"], e["topic"]) for e in raw["message"]["edit_history"]] == [("", "food"), ("lunch", "")]


# --- history --------------------------------------------------------------------------------------


def test_history_oldest_first(design, send, member, admin):
    message_id = send(member, design, "one", topic="lunch")
    assert_success(edit(member, message_id, content="two"))
    assert_success(edit(admin, message_id, topic="food"))
    history = assert_success(api_for(admin).get(f"/messages/{message_id}/history"))["message_history"]
    assert [(v["content"], v["topic"], v["user_id"]) for v in history] == [
        ("one", "lunch", member.id),
        ("two", "lunch", member.id),
        ("two", "food", admin.id),
    ]
    assert history[1]["prev_content"] == "one"
    assert history[2]["prev_topic"] == "lunch"
    assert [("content_html_diff" in version) for version in history] == [False, True, False]


def test_a_content_edit_has_zulips_html_diff(design, send, member):
    message_id = send(member, design, "content before edit")
    assert_success(edit(member, message_id, content="content after edit"))
    history = assert_success(api_for(member).get(f"/messages/{message_id}/history"))["message_history"]
    assert history[1]["content_html_diff"] == (
        '<div><p>content <span class="highlight_text_inserted">after</span> '
        '<span class="highlight_text_deleted">before</span> edit</p></div>'
    )  # Zulip's own test's


def test_history_by_the_organizations_policy(realm, design, send, member, admin):
    message_id = send(member, design, "one", topic="lunch")
    assert_success(edit(member, message_id, content="two"))
    assert_success(edit(member, message_id, topic="food"))
    realm.message_edit_history_visibility_policy = "moves"
    realm.save(update_fields=["message_edit_history_visibility_policy"])
    assert [e.get("prev_topic") for e in shown(admin, message_id)["edit_history"]] == ["lunch"]
    assert "prev_content" not in shown(admin, message_id)["edit_history"][0]
    realm.message_edit_history_visibility_policy = "none"
    realm.save(update_fields=["message_edit_history_visibility_policy"])
    assert "edit_history" not in shown(admin, message_id)
    assert_error(api_for(admin).get(f"/messages/{message_id}/history"), 400, "BAD_REQUEST",
                 "Message edit history is disabled in this organization")  # fmt: skip


def test_register_has_the_editing_settings(realm, member):
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_allow_message_editing"] is True
    assert state["realm_message_content_edit_limit_seconds"] == 600
    assert state["realm_move_messages_within_stream_limit_seconds"] == 604800
    assert state["realm_message_edit_history_visibility_policy"] == "all"
    groups = {g.name: g.id for g in UserGroup.objects.filter(realm=realm, is_system_group=True)}
    assert state["realm_can_move_messages_between_topics_group"] == groups["role:everyone"]
    assert state["realm_can_resolve_topics_group"] == groups["role:everyone"]
    assert state["realm_can_move_messages_between_channels_group"] == groups["role:members"]


def test_staff_set_the_editing_limits_in_the_admin(staff, realm):
    form = realm_admin_form(
        realm,
        message_content_edit_limit_seconds="60",
        message_content_delete_limit_seconds="",  # no limit
        message_edit_history_visibility_policy="moves",
    )
    del form["allow_message_editing"]  # an unticked box
    assert staff.post(f"/admin/realms/realm/{realm.id}/change/", form).status_code == 302
    realm = Realm.objects.get(id=realm.id)
    assert (realm.message_content_edit_limit_seconds, realm.allow_message_editing) == (60, False)
    assert realm.message_content_delete_limit_seconds is None
    assert realm.message_edit_history_visibility_policy == "moves"
