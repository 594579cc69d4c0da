"""Reminders: POST and GET /reminders, DELETE /reminders/{id}, Zulip's rules and texts, who may set one
on which message, their events and the `reminders` state of POST /register, kept apart from scheduled
messages; and the task worker's delivery: the Notification Bot's direct message, about the message
as it is then."""

import time
from datetime import timedelta

from apps.messages.models import Message, UserMessage
from apps.realms.limits import MAX_MESSAGE_LENGTH, MAX_REMINDER_NOTE_LENGTH
from apps.scheduled_messages.actions import deliver_due_scheduled_messages
from apps.scheduled_messages.models import ScheduledMessage
from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions
from apps.users.actions.activation import do_deactivate_user
from tests.api import api_for, assert_error, assert_success
from tests.scheduled_messages.support import in_an_hour, make_due, refused

api = api_for


def send(user, **params) -> int:
    return assert_success(api(user).post("/messages", params))["id"]


def remind(user, message_id: int, **params) -> int:
    body = {"message_id": message_id, "scheduled_delivery_timestamp": in_an_hour(), **params}
    return assert_success(api(user).post("/reminders", body))["reminder_id"]


def listed(user) -> list[dict]:
    return assert_success(api(user).get("/reminders"))["reminders"]


def test_a_reminder_about_a_channel_message_quotes_it_and_is_listed(realm, design, member, admin):
    message_id = send(admin, type="stream", to=design.id, topic="plans", content="Ship **on friday**")
    when = in_an_hour()
    reminder_id = remind(member, message_id, scheduled_delivery_timestamp=when, note="\ncheck the build  \n")
    link = f"{realm.url}/#narrow/channel/{design.id}-design/topic/plans/near/{message_id}"
    content = (
        "You requested a reminder for the following message. Note:\n > check the build\n\n"
        f"@_**{admin.full_name}|{admin.id}** [said]({link}) in "
        f"[#design > plans](#narrow/channel/{design.id}-design/topic/plans/with/{message_id}):\n"
        "```quote\nShip **on friday**\n```"
    )
    [reminder] = listed(member)
    rendered = reminder.pop("rendered_content")
    assert reminder == {
        "reminder_id": reminder_id,
        "type": "private",
        "to": [member.id],
        "content": content,
        "scheduled_delivery_timestamp": when,
        "failed": False,
        "reminder_target_message_id": message_id,
    }
    assert "<blockquote>" in rendered
    assert "<strong>on friday</strong>" in rendered
    assert f'href="{link.removeprefix("http://testserver/")}"' in rendered  # the organization's own: relative
    # Each person's own, and never among the scheduled messages (nor they among reminders).
    assert listed(admin) == []
    assert assert_success(api(member).get("/scheduled_messages"))["scheduled_messages"] == []
    refused(member, "DELETE", f"/scheduled_messages/{reminder_id}", {}, "Scheduled message does not exist", 404)
    scheduled_id = assert_success(api(member).post("/scheduled_messages", {
        "type": "direct", "to": f"[{admin.id}]", "content": "hi", "scheduled_delivery_timestamp": when}))  # fmt: skip
    refused(member, "DELETE", f"/reminders/{scheduled_id['scheduled_message_id']}", {}, "Reminder does not exist", 404)
    assert [r["reminder_id"] for r in listed(member)] == [reminder_id]


def test_reminders_about_direct_messages_name_who_it_went_to(realm, member, admin, owner):
    group_dm = send(admin, type="direct", to=[member.id, owner.id], content="/poll Lunch?\nPizza\nSoup")
    to_me = send(member, type="direct", to=[member.id], content="buy milk")
    first, second = remind(member, group_dm), remind(member, to_me)
    contents = {r["reminder_id"]: r["content"] for r in listed(member)}
    people = ",".join(str(i) for i in sorted([member.id, admin.id, owner.id]))
    others = sorted([member, owner], key=lambda user: user.id)
    mentions = " and ".join(f"@_**{user.full_name}|{user.id}**" for user in others)
    assert contents[first] == (
        "You requested a reminder for the following direct message.\n\n"
        f"@_**{admin.full_name}|{admin.id}** [sent]({realm.url}/#narrow/dm/{people}/near/{group_dm}) "
        f"a poll to {mentions}."
    )
    assert contents[second] == (
        "You requested a reminder for the following direct message.\n\n"
        f"You [sent]({realm.url}/#narrow/dm/{member.id}/near/{to_me}) a note to yourself:\n```quote\nbuy milk\n```"
    )


def test_a_long_message_is_cut_so_the_reminder_fits(design, member, admin):
    message_id = send(admin, type="stream", to=design.id, topic="t", content="x" * MAX_MESSAGE_LENGTH)
    remind(member, message_id)
    [reminder] = listed(member)
    assert len(reminder["content"]) == MAX_MESSAGE_LENGTH
    assert reminder["content"].endswith("x\n[message truncated]\n```")


def test_only_about_a_message_one_may_read_in_the_future_with_a_short_note(
    make_stream, design, member, admin, foreign_user
):
    secret = make_stream("secret", admin, private=True)
    hidden = send(admin, type="stream", to=secret.id, topic="t", content="psst")
    dm = send(admin, type="direct", to=[admin.id], content="mine")
    visible = send(admin, type="stream", to=design.id, topic="t", content="hello")
    future = in_an_hour()
    for message_id in (hidden, dm, 10**9):
        refused(member, "POST", "/reminders", {"message_id": message_id, "scheduled_delivery_timestamp": future},
                "Invalid message(s)")  # fmt: skip
    refused(foreign_user, "POST", "/reminders", {"message_id": visible, "scheduled_delivery_timestamp": future},
            "Invalid message(s)")  # fmt: skip
    refused(member, "POST", "/reminders", {"message_id": visible, "scheduled_delivery_timestamp": int(time.time())},
            "Scheduled delivery time must be in the future.")  # fmt: skip
    too_long = {"message_id": visible, "scheduled_delivery_timestamp": future, "note": "n" * 1001}
    refused(member, "POST", "/reminders", too_long, "Maximum reminder note length: 1000 characters")
    for bad_id, msg in ((2**63, "message_id is too large"), (0, "message_id is too small")):
        refused(member, "POST", "/reminders", {"message_id": bad_id, "scheduled_delivery_timestamp": future}, msg,
                code="REQUEST_VARIABLE_INVALID")  # fmt: skip
    body = assert_error(api(member).post("/reminders", {"scheduled_delivery_timestamp": future}), 400,
                        "REQUEST_VARIABLE_MISSING", "Missing 'message_id' argument")  # fmt: skip
    assert body["var_name"] == "message_id"
    assert remind(member, visible, note="n" * MAX_REMINDER_NOTE_LENGTH)
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["max_reminder_note_length"] == MAX_REMINDER_NOTE_LENGTH


def test_deleting_is_the_owners_alone_and_the_events_and_state_follow(design, member, admin, capture_events):
    message_id = send(admin, type="stream", to=design.id, topic="t", content="hello")
    with capture_events(member, admin, event_types=["reminders"]) as received:
        reminder_id = remind(member, message_id)
        refused(admin, "DELETE", f"/reminders/{reminder_id}", {}, "Reminder does not exist", 404)
        state = assert_success(api(member).post("/register", {"fetch_event_types": '["reminders"]'}))
        assert [r["reminder_id"] for r in state["reminders"]] == [reminder_id]
        assert_success(api(member).delete(f"/reminders/{reminder_id}"))
    [added, removed] = received[member.id]
    assert (added["op"], [r["reminder_id"] for r in added["reminders"]]) == ("add", [reminder_id])
    assert removed == {"type": "reminders", "op": "remove", "reminder_id": reminder_id}
    assert received[admin.id] == []
    assert listed(member) == []
    refused(member, "DELETE", f"/reminders/{reminder_id}", {}, "Reminder does not exist", 404)


def test_a_due_reminder_comes_from_the_notification_bot_unread_with_the_message_as_it_is(
    design, member, admin, capture_events
):
    message_id = send(admin, type="stream", to=design.id, topic="plans", content="draft")
    reminder_id = remind(member, message_id, note="read it")
    assert_success(api(admin).patch(f"/messages/{message_id}", {"content": "final"}))
    make_due(reminder_id, ago=timedelta(hours=1))  # late reminders are still sent
    with capture_events(member, admin, event_types=["message", "reminders"]) as received:
        assert deliver_due_scheduled_messages() == 1
    reminder = ScheduledMessage.objects.get(id=reminder_id)
    delivered = reminder.delivered_message
    assert (reminder.delivered, reminder.failed) == (True, False)
    assert delivered.sender.full_name == "Notification Bot"
    assert delivered.recipient.type_id == member.id
    assert "```quote\nfinal\n```" in delivered.content
    assert " > read it" in delivered.content
    assert not UserMessage.objects.get(user=member, message=delivered).flags & UserMessage.READ
    notice, removed = received[member.id]
    assert notice["type"] == "message"
    assert notice["message"]["sender_full_name"] == "Notification Bot"
    assert removed == {"type": "reminders", "op": "remove", "reminder_id": reminder_id}
    assert received[admin.id] == []
    assert listed(member) == []
    assert deliver_due_scheduled_messages() == 0  # sent once
    # Too late to cancel: said so, and no second remove event (the race QA pass: answered success).
    with capture_events(member, event_types=["reminders"]) as received:
        refused(member, "DELETE", f"/reminders/{reminder_id}", {}, "Reminder was already sent")
    assert received[member.id] == []


def test_a_message_they_can_no_longer_read_is_recalled_as_it_was(make_stream, member, admin):
    lab = make_stream("lab", member, admin, private=True)
    kept = send(admin, type="stream", to=lab.id, topic="t", content="the code is 1234")
    gone = send(admin, type="stream", to=lab.id, topic="t", content="delete me")
    first, second = remind(member, kept), remind(member, gone)
    assert_success(api(admin).delete(f"/messages/{gone}"))
    bulk_remove_subscriptions(admin.realm, [member], [lab], acting_user=admin)
    assert_success(api(admin).patch(f"/messages/{kept}", {"content": "the code is 9999"}))
    make_due(first)
    make_due(second)
    assert deliver_due_scheduled_messages() == 2
    sent = {r.id: r.delivered_message.content for r in ScheduledMessage.objects.filter(id__in=[first, second])}
    assert "the code is 1234" in sent[first]
    assert "9999" not in sent[first]
    assert "delete me" in sent[second]


def test_a_deactivated_users_reminder_fails_quietly(design, member, admin):
    reminder_id = remind(member, send(admin, type="stream", to=design.id, topic="t", content="hi"))
    do_deactivate_user(member, acting_user=None)
    make_due(reminder_id)
    assert deliver_due_scheduled_messages() == 1
    reminder = ScheduledMessage.objects.get(id=reminder_id)
    assert (reminder.delivered, reminder.failed, reminder.failure_message) == (False, True, "Account is deactivated")
    assert not Message.objects.filter(sender__full_name="Notification Bot").exists()


def test_staff_see_reminders_and_delete_them_telling_the_user(staff, design, member, admin, capture_events):
    reminder_id = remind(member, send(admin, type="stream", to=design.id, topic="t", content="hi"))
    page = staff.get("/admin/scheduled_messages/scheduledmessage/?delivery_type__exact=2")
    assert page.status_code == 200
    assert "Reminder" in page.content.decode()
    with capture_events(member, event_types=["reminders"]) as received:
        staff.post("/admin/scheduled_messages/scheduledmessage/",
                   {"action": "delete_scheduled", "confirmed": "yes", "_selected_action": [reminder_id]})  # fmt: skip
    assert received[member.id] == [{"type": "reminders", "op": "remove", "reminder_id": reminder_id}]
    assert listed(member) == []
