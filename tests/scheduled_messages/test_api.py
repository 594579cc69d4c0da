"""Scheduled messages: GET and POST /scheduled_messages, PATCH and DELETE /scheduled_messages/{id},
their rules (Zulip's), another person's and another organization's, their events and the
`scheduled_messages` state of POST /register; and the task worker sending them when due."""

from datetime import timedelta

import pytest

from apps.messages.models import Message, UserMessage
from apps.scheduled_messages.actions import deliver_due_scheduled_messages
from apps.scheduled_messages.models import ScheduledMessage
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions
from apps.users.actions.activation import do_deactivate_user
from tests.api import api_for, assert_error, assert_success
from tests.factories import UserFactory
from tests.scheduled_messages.support import db_state, in_an_hour, make_due, refused

api = api_for


def schedule(user, **params) -> int:
    body = {"content": "hello later", "scheduled_delivery_timestamp": in_an_hour(), **params}
    return assert_success(api(user).post("/scheduled_messages", body))["scheduled_message_id"]


def listed(user) -> list[dict]:
    return assert_success(api(user).get("/scheduled_messages"))["scheduled_messages"]


# --- scheduling and listing -----------------------------------------------------------------------


def test_schedule_to_a_channel_and_to_people_and_list_them_soonest_first(design, member, admin, owner):
    when = in_an_hour()
    to_channel = schedule(member, type="channel", to=design.id, topic="plans", content="**ship** it",
                          scheduled_delivery_timestamp=when + 60)  # fmt: skip
    to_people = schedule(member, type="direct", to=[admin.id, owner.id, member.id], scheduled_delivery_timestamp=when)
    to_self = schedule(member, type="private", to=[member.id], scheduled_delivery_timestamp=when + 120)
    assert listed(member) == [
        {"scheduled_message_id": to_people, "type": "private", "to": sorted([admin.id, owner.id]),
         "content": "hello later", "rendered_content": "<p>hello later</p>", "scheduled_delivery_timestamp": when,
         "failed": False},
        {"scheduled_message_id": to_channel, "type": "stream", "to": design.id, "topic": "plans",
         "content": "**ship** it", "rendered_content": "<p><strong>ship</strong> it</p>",
         "scheduled_delivery_timestamp": when + 60, "failed": False},
        {"scheduled_message_id": to_self, "type": "private", "to": [member.id], "content": "hello later",
         "rendered_content": "<p>hello later</p>", "scheduled_delivery_timestamp": when + 120, "failed": False},
    ]  # fmt: skip
    assert listed(admin) == []  # each person's own
    assert not Message.objects.filter(content="**ship** it").exists()  # nothing sent yet


@pytest.mark.parametrize(
    ("params", "msg", "code"),
    [
        ({"scheduled_delivery_timestamp": 1}, "Scheduled delivery time must be in the future.", "BAD_REQUEST"),
        ({"scheduled_delivery_timestamp": 10**15}, "Timestamp is too large.", "BAD_REQUEST"),
        ({"topic": None}, "Missing topic", "BAD_REQUEST"),
        ({"to": [1, 2]}, "Invalid data type for channel ID", "BAD_REQUEST"),
        ({"to": 987654}, "Channel with ID '987654' does not exist", "STREAM_DOES_NOT_EXIST"),
        ({"content": "   "}, "Message must not be empty", "BAD_REQUEST"),
        ({"type": "huddle"}, "Invalid type", "REQUEST_VARIABLE_INVALID"),
        (
            {"scheduled_delivery_timestamp": "soon"},
            "scheduled_delivery_timestamp is not valid JSON",
            "REQUEST_VARIABLE_INVALID",
        ),
    ],
)
def test_what_sending_would_refuse_is_refused_and_stores_nothing(design, member, params, msg, code):
    body = {"type": "stream", "to": design.id, "topic": "t", "content": "hi",
            "scheduled_delivery_timestamp": in_an_hour(), **params}  # fmt: skip
    body = {k: v for k, v in body.items() if v is not None}
    before = db_state()
    response = api(member).post("/scheduled_messages", body)
    assert response.json()["msg"].startswith(msg), response.json()
    assert_error(response, 400, code)
    assert db_state() == before


def test_a_channel_the_user_may_not_post_in_or_see(make_stream, owner, member, foreign_user, other_realm):
    secret = make_stream("secret", owner, private=True)
    theirs = make_stream("theirs", foreign_user, in_realm=other_realm)
    for stream in (secret, theirs):
        body = {"type": "stream", "to": stream.id, "topic": "t", "content": "hi",
                "scheduled_delivery_timestamp": in_an_hour()}  # fmt: skip
        refused(member, "POST", "/scheduled_messages", body, f"Channel with ID '{stream.id}' does not exist",
                code="STREAM_DOES_NOT_EXIST")  # fmt: skip
    body = {"type": "direct", "to": [foreign_user.id], "content": "hi", "scheduled_delivery_timestamp": in_an_hour()}
    refused(member, "POST", "/scheduled_messages", body, f"Invalid user ID {foreign_user.id}")


def test_the_register_state_and_the_events_reach_the_sender_only(design, member, admin, capture_events):
    with capture_events(member, admin, event_types=["scheduled_messages"]) as received:
        scheduled_id = schedule(member, type="stream", to=design.id, topic="t")
        assert_success(api(member).patch(f"/scheduled_messages/{scheduled_id}", {"content": "edited"}))
        assert_success(api(member).delete(f"/scheduled_messages/{scheduled_id}"))
    added, updated, removed = received[member.id]
    assert (added["op"], [s["scheduled_message_id"] for s in added["scheduled_messages"]]) == ("add", [scheduled_id])
    assert (updated["op"], updated["scheduled_message"]["content"]) == ("update", "edited")
    assert removed == {"type": "scheduled_messages", "op": "remove", "scheduled_message_id": scheduled_id}
    assert received[admin.id] == []
    again = schedule(member, type="stream", to=design.id, topic="t")
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["scheduled_messages"]'}))
    assert [s["scheduled_message_id"] for s in state["scheduled_messages"]] == [again]


# --- editing and deleting -------------------------------------------------------------------------


def test_edit_content_topic_time_and_recipients(design, member, admin):
    scheduled_id = schedule(member, type="stream", to=design.id, topic="t")
    later = in_an_hour() + 999
    assert_success(api(member).patch(f"/scheduled_messages/{scheduled_id}",
                                     {"topic": "new topic", "scheduled_delivery_timestamp": later}))  # fmt: skip
    [shown] = listed(member)
    assert (shown["topic"], shown["scheduled_delivery_timestamp"]) == ("new topic", later)
    assert_success(api(member).patch(f"/scheduled_messages/{scheduled_id}", {"type": "direct", "to": [admin.id]}))
    [shown] = listed(member)
    assert (shown["type"], shown["to"], "topic" in shown) == ("private", [admin.id], False)
    assert_success(api(member).patch(f"/scheduled_messages/{scheduled_id}", {"topic": "ignored for people"}))
    assert listed(member)[0]["to"] == [admin.id]


def test_no_topic_is_the_empty_topic_when_scheduling_and_editing(design, member):
    """As Zulip documents both: "(no topic)" is interpreted as the empty topic (the conformance QA
    pass: it was kept as a topic named "(no topic)")."""
    scheduled_id = schedule(member, type="stream", to=design.id, topic="(no topic)")
    assert ScheduledMessage.objects.get(id=scheduled_id).topic == ""
    assert_success(api(member).patch(f"/scheduled_messages/{scheduled_id}", {"topic": "plans"}))
    assert_success(api(member).patch(f"/scheduled_messages/{scheduled_id}", {"topic": "(no topic)"}))
    assert ScheduledMessage.objects.get(id=scheduled_id).topic == ""


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({}, "Nothing to change"),
        ({"type": "direct"}, "Recipient required when updating type of scheduled message."),
        ({"type": "channel", "to": 1}, "Topic required when updating scheduled message type to channel."),
        ({"scheduled_delivery_timestamp": 1}, "Scheduled delivery time must be in the future."),
        ({"content": ""}, "Message must not be empty"),
    ],
)
def test_edits_sending_would_refuse_change_nothing(design, member, params, msg):
    scheduled_id = schedule(member, type="stream", to=design.id, topic="t")
    refused(member, "PATCH", f"/scheduled_messages/{scheduled_id}", params, msg)


def test_wildcard_mentions_sending_would_refuse_are_refused_when_scheduling_or_editing(make_stream, member, admin):
    """The drafts QA pass: scheduled (or edited in) without the permission, they were accepted and
    failed when due, as Zulip's check_message refuses them at once."""
    big = make_stream("all-hands", member, admin, *UserFactory.create_batch(14, realm=member.realm))  # 16 people
    mention_refused = "You do not have permission to use channel wildcard mentions in this channel."
    params = {"type": "stream", "to": big.id, "topic": "t", "content": "@**all** hi",
              "scheduled_delivery_timestamp": in_an_hour()}  # fmt: skip
    refused(member, "POST", "/scheduled_messages", params, mention_refused, code="STREAM_WILDCARD_MENTION_NOT_ALLOWED")
    scheduled_id = schedule(member, type="stream", to=big.id, topic="t")
    refused(member, "PATCH", f"/scheduled_messages/{scheduled_id}", {"content": "@**everyone** hi"}, mention_refused,
            code="STREAM_WILDCARD_MENTION_NOT_ALLOWED")  # fmt: skip
    schedule(admin, type="stream", to=big.id, topic="t", content="@**all** hi")  # administrators may


def test_another_persons_or_organizations_scheduled_message_does_not_exist(design, member, admin, foreign_user):
    scheduled_id = schedule(member, type="stream", to=design.id, topic="t")
    for user in (admin, foreign_user):
        path = f"/scheduled_messages/{scheduled_id}"
        refused(user, "PATCH", path, {"content": "mine now"}, "Scheduled message does not exist", 404)
        refused(user, "DELETE", path, {}, "Scheduled message does not exist", 404)
    assert len(listed(member)) == 1


# --- sending them when due ------------------------------------------------------------------------


def test_a_due_message_is_sent_as_its_sender_would_send_it(design, member, admin, capture_events):
    scheduled_id = schedule(member, type="stream", to=design.id, topic="plans", content="@**all** ship it")
    later_id = schedule(member, type="stream", to=design.id, topic="plans")
    make_due(scheduled_id)
    with capture_events(member, admin, event_types=["message", "scheduled_messages"]) as received:
        assert deliver_due_scheduled_messages() == 1
    scheduled = ScheduledMessage.objects.get(id=scheduled_id)
    message = scheduled.delivered_message
    assert (scheduled.delivered, scheduled.failed) == (True, False)
    assert (message.sender_id, message.stream_id, message.topic, message.content) == (
        member.id, design.id, "plans", "@**all** ship it")  # fmt: skip
    assert [e["type"] for e in received[admin.id]] == ["message"]
    assert received[member.id][-1] == {"type": "scheduled_messages", "op": "remove",
                                       "scheduled_message_id": scheduled_id}  # fmt: skip
    assert [s["scheduled_message_id"] for s in listed(member)] == [later_id]
    assert deliver_due_scheduled_messages() == 0  # sent once
    refused(member, "PATCH", f"/scheduled_messages/{scheduled_id}", {"content": "x"},
            "Scheduled message was already sent")  # fmt: skip
    # Too late to cancel: said so, and no second remove event (the race QA pass: answered success).
    with capture_events(member, event_types=["scheduled_messages"]) as received:
        refused(member, "DELETE", f"/scheduled_messages/{scheduled_id}", {}, "Scheduled message was already sent")
    assert received[member.id] == []
    assert ScheduledMessage.objects.filter(id=scheduled_id).exists()


def test_a_direct_message_to_oneself_is_sent(member):
    scheduled_id = schedule(member, type="direct", to=[member.id], content="remember the milk")
    make_due(scheduled_id)
    deliver_due_scheduled_messages()
    message = ScheduledMessage.objects.get(id=scheduled_id).delivered_message
    assert message.content == "remember the milk"
    assert message.recipient.type_id == member.id


def test_one_that_can_no_longer_be_sent_fails_and_its_sender_is_told(design, member, admin, capture_events):
    scheduled_id = schedule(member, type="stream", to=design.id, topic="plans")
    do_deactivate_stream(design, acting_user=admin)
    make_due(scheduled_id)
    with capture_events(member, event_types=["message", "scheduled_messages"]) as received:
        assert deliver_due_scheduled_messages() == 1
    scheduled = ScheduledMessage.objects.get(id=scheduled_id)
    assert (scheduled.delivered, scheduled.failed, scheduled.failure_message) == (
        False, True, "Not authorized to send to channel 'design'")  # fmt: skip
    update, notice = received[member.id]
    assert (update["op"], update["scheduled_message"]["failed"]) == ("update", True)
    assert notice["message"]["sender_full_name"] == "Notification Bot"
    content = Message.objects.get(id=notice["message"]["id"]).rendered_content
    assert content.startswith('<p>The message you scheduled for <time datetime="')  # in each reader's zone
    assert "was not sent because of the following error" in content
    assert "Not authorized to send to channel" in content
    assert '<a href="#scheduled" rel="noopener noreferrer">View scheduled messages</a>' in content
    assert notice["message"]["client"] == "Internal"
    assert listed(member)[0]["failed"] is True  # shown, to be rescheduled or deleted
    # A failed one takes a new time: it is scheduled again.
    path = f"/scheduled_messages/{scheduled_id}"
    refused(member, "PATCH", path, {"content": "x"}, "Scheduled delivery time must be in the future.")
    rescheduled = {"type": "direct", "to": [admin.id], "scheduled_delivery_timestamp": in_an_hour()}
    assert_success(api(member).patch(path, rescheduled))
    assert listed(member)[0]["failed"] is False


def test_too_late_or_from_a_deactivated_sender_fails_quietly_or_says_why(design, member, admin):
    late = schedule(member, type="stream", to=design.id, topic="t")
    make_due(late, ago=timedelta(minutes=11))
    gone = schedule(admin, type="stream", to=design.id, topic="t")
    make_due(gone)
    do_deactivate_user(admin, acting_user=None)
    assert deliver_due_scheduled_messages() == 2
    late_row, gone_row = ScheduledMessage.objects.get(id=late), ScheduledMessage.objects.get(id=gone)
    assert (late_row.failed, late_row.failure_message) == (True, "Message could not be sent at the scheduled time.")
    assert (gone_row.failed, gone_row.failure_message) == (True, "Account is deactivated")
    bot_messages = Message.objects.filter(sender__full_name="Notification Bot")
    assert [m.recipient.type_id for m in bot_messages] == [member.id]  # the deactivated are not told


# --- the Django admin -----------------------------------------------------------------------------


def test_staff_see_them_and_delete_them_telling_the_sender(staff, design, member, capture_events):
    scheduled_id = schedule(member, type="stream", to=design.id, topic="t", content="for later")
    page = staff.get("/admin/scheduled_messages/scheduledmessage/")
    assert page.status_code == 200
    assert "design" in page.content.decode()
    assert staff.get(f"/admin/scheduled_messages/scheduledmessage/{scheduled_id}/change/").status_code == 200
    with capture_events(member, event_types=["scheduled_messages"]) as received:
        staff.post("/admin/scheduled_messages/scheduledmessage/",
                   {"action": "delete_scheduled", "confirmed": "yes", "_selected_action": [scheduled_id]})  # fmt: skip
    assert received[member.id] == [{"type": "scheduled_messages", "op": "remove", "scheduled_message_id": scheduled_id}]
    assert listed(member) == []
    # A sent one is tidied away without a word to its sender.
    sent_id = schedule(member, type="stream", to=design.id, topic="t", content="sent already")
    make_due(sent_id)
    deliver_due_scheduled_messages()
    with capture_events(member, event_types=["scheduled_messages"]) as received:
        staff.post("/admin/scheduled_messages/scheduledmessage/",
                   {"action": "delete_scheduled", "confirmed": "yes", "_selected_action": [sent_id]})  # fmt: skip
    assert received[member.id] == []
    assert not ScheduledMessage.objects.filter(id=sent_id).exists()


def test_read_by_sender_is_decided_when_scheduling_and_a_message_to_oneself_arrives_unread(design, member, admin):
    typed = {"HTTP_USER_AGENT": "ZulipMobile/27.200 (Android 14)"}  # a client a person types into
    body = {"content": "x", "scheduled_delivery_timestamp": in_an_hour()}
    to_self = api(member).post("/scheduled_messages", {**body, "type": "direct", "to": [member.id]}, **typed)
    to_admin = api(member).post("/scheduled_messages", {**body, "type": "direct", "to": [admin.id]}, **typed)
    ids = [assert_success(r)["scheduled_message_id"] for r in (to_self, to_admin)]
    for scheduled_id in ids:
        make_due(scheduled_id)
    deliver_due_scheduled_messages()
    sent = [ScheduledMessage.objects.get(id=i).delivered_message_id for i in ids]
    read = [bool(UserMessage.objects.get(message_id=m, user=member).flags & UserMessage.READ) for m in sent]
    assert read == [False, True]


@pytest.mark.parametrize(
    ("to", "msg"),
    [(1, "Invalid data type for recipients"), (["me@example.com"], "to is not an integer")],
)
def test_people_are_named_by_a_list_of_ids(member, to, msg):
    body = {"type": "direct", "to": to, "content": "x", "scheduled_delivery_timestamp": in_an_hour()}
    before = db_state()
    response = api(member).post("/scheduled_messages", body)
    assert response.status_code == 400
    assert response.json()["msg"] == msg
    assert db_state() == before


def test_a_private_channel_the_sender_left_is_named_in_the_failure(make_stream, realm, owner, member):
    secret = make_stream("secret", owner, member, private=True)
    scheduled_id = schedule(member, type="stream", to=secret.id, topic="t")
    bulk_remove_subscriptions(realm, [member], [secret], acting_user=None)
    make_due(scheduled_id)
    deliver_due_scheduled_messages()
    assert ScheduledMessage.objects.get(id=scheduled_id).failure_message == "Not authorized to send to channel 'secret'"
