"""GET /messages/{id}/read_receipts (who read a message, as Zulip tells it) and POST
/messages/{id}/report: the Notification Bot's report in the organization's moderation request
channel (PATCH /realm moderation_request_channel_id), in Zulip's words; refused, changing nothing,
without one."""

import pytest

from apps.messages.models import Message
from apps.realms.models import Realm
from tests.api import api_for, assert_error, assert_success
from tests.messages.conftest import db_state


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def read(user, message_id):
    assert_success(api_for(user).post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "read"}))


def receipts(user, message_id):
    return assert_success(api_for(user).get(f"/messages/{message_id}/read_receipts"))["user_ids"]


def test_read_receipts_list_who_read_the_message(make_stream, send, member, admin, moderator, bot):
    stream = make_stream("review", member, admin, moderator, bot)
    message_id = send(member, stream)
    assert receipts(admin, message_id) == []
    read(moderator, message_id)
    read(bot, message_id)
    assert receipts(admin, message_id) == sorted([moderator.id, bot.id])
    # Never the sender (their copy is read), nor those who keep their reads to themselves.
    assert_success(api_for(moderator).patch("/settings", {"send_read_receipts": False}))
    assert receipts(admin, message_id) == [bot.id]
    # Nor those the requester muted.
    assert_success(api_for(admin).post(f"/users/me/muted_users/{bot.id}"))
    assert receipts(admin, message_id) == []


def test_muters_of_the_requester_are_not_listed(design, send, member, admin):
    message_id = send(member, design)
    read(admin, message_id)
    assert receipts(member, message_id) == [admin.id]
    assert_success(api_for(admin).post(f"/users/me/muted_users/{member.id}"))
    assert receipts(member, message_id) == []


def test_read_receipts_can_be_disabled(design, send, member, admin, foreign_user):
    message_id = send(member, design)
    assert_success(api_for(admin).patch("/realm", {"enable_read_receipts": False}))
    assert_error(api_for(admin).get(f"/messages/{message_id}/read_receipts"), 400, "BAD_REQUEST",
                 "Read receipts are disabled in this organization.")  # fmt: skip
    assert_error(api_for(foreign_user).get(f"/messages/{message_id}/read_receipts"), 400, "BAD_REQUEST",
                 "Invalid message(s)")  # fmt: skip


def test_reports_need_a_moderation_channel(design, send, member, admin):
    message_id = send(member, design)
    before = db_state()
    assert_error(api_for(admin).post(f"/messages/{message_id}/report", {"report_type": "spam"}), 400, "BAD_REQUEST",
                 "Message reporting is not enabled in this organization.")  # fmt: skip
    assert_error(api_for(admin).post(f"/messages/{message_id}/report", {"report_type": "lies"}), 400,
                 "REQUEST_VARIABLE_INVALID")  # fmt: skip
    assert_error(api_for(admin).post(f"/messages/{message_id}/report", {"report_type": "other"}), 400,
                 "BAD_REQUEST", "An explanation is required.")  # fmt: skip
    assert db_state() == before


@pytest.fixture
def moderation(make_stream, admin, moderator):
    channel = make_stream("moderation", admin, moderator, private=True)
    assert_success(api_for(admin).patch("/realm", {"moderation_request_channel_id": channel.id}))
    return channel


def latest_in(channel):
    return Message.objects.filter(stream=channel).order_by("-id").select_related("sender").first()


def test_a_report_reaches_the_moderators(design, send, member, admin, moderator, moderation, capture_events):
    message_id = send(member, design, content="buy\n```\ncheap pills\n```", topic="offers")
    with capture_events(moderator) as received:
        assert_success(api_for(admin).post(f"/messages/{message_id}/report",
                                           {"report_type": "spam", "description": "Again."}))  # fmt: skip
    report = latest_in(moderation)
    assert report.sender.full_name == "Notification Bot"
    assert report.topic == "Mel Member's moderation requests"
    assert report.content == (
        f"@_**{admin.full_name}|{admin.id}** reported #**design>offers@{message_id}** sent by "
        f"@_**Mel Member|{member.id}**.\n"
        "- Reason: **spam**\n- Notes:\n```quote\nAgain.\n```\n"
        f"```` spoiler **Message sent by @_**Mel Member|{member.id}****\n"
        "buy\n```\ncheap pills\n```\n````"
    )
    assert [e["message"]["id"] for e in received[moderator.id] if e["type"] == "message"] == [report.id]


def test_reports_of_direct_messages(send, member, admin, moderator, guest, moderation):
    one_on_one = send(member, [guest])
    assert_success(api_for(guest).post(f"/messages/{one_on_one}/report", {"report_type": "harassment"}))
    assert latest_in(moderation).content.startswith(
        f"@_**{guest.full_name}|{guest.id}** reported a DM sent by @_**Mel Member|{member.id}**.\n"
    )
    group = send(member, [guest, admin])
    assert_success(api_for(guest).post(f"/messages/{group}/report", {"report_type": "other", "description": "Rude"}))
    names = sorted([member, guest, admin], key=lambda user: user.id)
    mentions = [f"@_**{user.full_name}|{user.id}**" for user in names]
    assert latest_in(moderation).content.startswith(
        f"@_**{guest.full_name}|{guest.id}** reported a DM sent by @_**Mel Member|{member.id}** to "
        f"{', '.join(mentions[:-1])}, and {mentions[-1]}.\n"
    )


def test_only_messages_the_reporter_sees(make_stream, send, member, admin, guest, moderation):
    secret = make_stream("secret", member, private=True)
    message_id = send(member, secret)
    before = db_state()
    assert_error(api_for(guest).post(f"/messages/{message_id}/report", {"report_type": "spam"}), 400,
                 "BAD_REQUEST", "Invalid message(s)")  # fmt: skip
    assert db_state() == before


def test_the_moderation_channel_must_stay_private_and_active(make_stream, admin, member, moderation, realm):
    public = make_stream("lobby", admin)
    assert_error(api_for(admin).patch("/realm", {"moderation_request_channel_id": public.id}), 400,
                 "BAD_REQUEST", "Moderation request channel must be private.")  # fmt: skip
    assert_error(api_for(admin).patch(f"/streams/{moderation.id}", {"is_private": False}), 400,
                 "BAD_REQUEST", "Moderation request channel must be private.")  # fmt: skip
    assert_error(api_for(admin).patch("/realm", {"moderation_request_channel_id": 999999}), 400,
                 "BAD_REQUEST", "Invalid channel ID")  # fmt: skip
    assert Realm.objects.get(id=realm.id).moderation_request_channel_id == moderation.id
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_moderation_request_channel_id"] == moderation.id
    # Archiving it turns reporting off, and everyone is told.
    assert_success(api_for(admin).delete(f"/streams/{moderation.id}"))
    assert Realm.objects.get(id=realm.id).moderation_request_channel_id is None
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_moderation_request_channel_id"] == -1


def test_turning_reporting_off(admin, member, moderation, realm, capture_events):
    with capture_events(member) as received:
        answer = assert_success(api_for(admin).patch("/realm", {"moderation_request_channel_id": -1}))
    assert answer["moderation_request_channel_id"] == -1
    assert received[member.id] == [
        {"type": "realm", "op": "update", "property": "moderation_request_channel_id", "value": -1}
    ]
    assert Realm.objects.get(id=realm.id).moderation_request_channel_id is None


def test_register_lists_the_reasons_a_report_may_give(design, send, member, moderation):
    """Zulip's server_report_message_types (feature level 435): every key is one a report takes."""
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": '["realm"]'}))
    types = state["server_report_message_types"]
    assert [t["key"] for t in types] == ["spam", "harassment", "inappropriate", "norms", "other"]
    assert all(isinstance(t["name"], str) and t["name"] for t in types)
    assert (state["realm_send_channel_events_messages"], state["realm_require_e2ee_push_notifications"]) == (
        False, False)  # fmt: skip
    message_id = send(member, design, "buy now")
    for report_type in [t["key"] for t in types if t["key"] != "other"]:
        assert_success(api_for(member).post(f"/messages/{message_id}/report", {"report_type": report_type}))
