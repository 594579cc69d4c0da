"""POST /typing: typing to people and to a channel's topic (and POST /messages/{id}/typing: editing
one of one's messages), Zulip's errors, who is told (active people who receive typing notifications;
for channels, subscribers whose client declared stream_typing_notifications), and that nothing is
stored."""

from datetime import timedelta

import pytest

from apps.messages.models import Message
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import User
from tests.api import api_for, assert_error, assert_success

STREAM_TYPING = {"client_capabilities": {"stream_typing_notifications": True, "empty_topic_name": True}}


def typing(user, **params):
    return api_for(user).post("/typing", params)


def sender_of(user) -> dict:
    return {"user_id": user.id, "email": user.delivery_email}


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def test_typing_to_people_reaches_them(member, admin, owner, guest, capture_events):
    with capture_events(admin, member, owner, guest) as received:
        assert_success(typing(member, op="start", to=[admin.id, owner.id]))
        assert_success(typing(member, op="stop", to=[admin.id, owner.id]))
    start = {
        "type": "typing",
        "op": "start",
        "message_type": "direct",
        "sender": sender_of(member),
        "recipients": [sender_of(u) for u in sorted([member, admin, owner], key=lambda u: u.id)],
    }
    assert received[admin.id] == [start, {**start, "op": "stop"}]
    assert received[owner.id] == received[admin.id]
    assert received[member.id] == received[admin.id]  # the sender's other clients too
    assert received[guest.id] == []
    assert not Message.objects.exists()


def test_typing_to_a_topic_reaches_subscribers_with_the_capability(design, member, admin, owner, capture_events):
    with capture_events(admin, owner, **STREAM_TYPING) as received:
        assert_success(typing(member, type="stream", op="start", stream_id=design.id, topic="plans"))
    assert received[admin.id] == [{"type": "typing", "op": "start", "message_type": "stream",
                                   "sender": sender_of(member), "stream_id": design.id, "topic": "plans"}]  # fmt: skip
    assert received[owner.id] == []  # not subscribed
    with capture_events(admin) as received:  # an older client: no stream typing
        assert_success(typing(member, type="channel", op="start", stream_id=design.id, topic="plans"))
    assert received[admin.id] == []


def test_the_empty_topic_is_named_for_older_clients(design, member, admin, capture_events):
    with capture_events(admin, client_capabilities={"stream_typing_notifications": True}) as received:
        assert_success(typing(member, type="stream", op="start", stream_id=design.id, topic=""))
    assert received[admin.id][0]["topic"] == "general chat"


def test_typing_to_no_topic_is_the_empty_topic(design, member, admin, capture_events):
    capabilities = {"stream_typing_notifications": True, "empty_topic_name": True}
    with capture_events(admin, client_capabilities=capabilities) as received:
        assert_success(typing(member, type="stream", op="start", stream_id=design.id, topic="(no topic)"))
    assert received[admin.id][0]["topic"] == ""


def test_people_who_turned_typing_notifications_off(member, admin, capture_events):
    User.objects.filter(id=admin.id).update(receives_typing_notifications=False)
    with capture_events(admin) as received:
        assert_success(typing(member, op="start", to=[admin.id]))
    assert received[admin.id] == []
    member.send_private_typing_notifications = False
    member.save(update_fields=["send_private_typing_notifications"])  # forgets cached credentials too
    assert_error(typing(member, op="start", to=[admin.id]), 400, "BAD_REQUEST",
                 "User has disabled typing notifications for direct messages")  # fmt: skip


def test_typing_to_a_channel_with_channel_typing_notifications_off(design, member, admin, capture_events):
    member.send_stream_typing_notifications = False
    member.save(update_fields=["send_stream_typing_notifications"])
    with capture_events(admin, client_capabilities={"stream_typing_notifications": True}) as received:
        assert_error(typing(member, type="stream", op="start", stream_id=design.id, topic="t"), 400, "BAD_REQUEST",
                     "User has disabled typing notifications for channel messages")  # fmt: skip
    assert received[admin.id] == []


def test_deactivated_people_are_not_told(member, admin, capture_events):
    with capture_events(admin) as received:
        do_deactivate_user(admin, acting_user=None)
        assert_success(typing(member, op="start", to=[admin.id]))
    assert [e for e in received[admin.id] if e["type"] == "typing"] == []


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"op": "start"}, "BAD_REQUEST", "Missing 'to' argument"),
        ({"op": "start", "to": []}, "BAD_REQUEST", "Empty 'to' list"),
        ({"op": "start", "to": [99999]}, "BAD_REQUEST", "Invalid user ID 99999"),
        ({"op": "start", "type": "stream", "topic": "x"}, "BAD_REQUEST", "Missing 'stream_id' argument"),
        ({"op": "start", "type": "stream", "stream_id": 1}, "BAD_REQUEST", "Missing topic"),
        ({"op": "typing", "to": [1]}, "REQUEST_VARIABLE_INVALID", None),
        ({"to": [1]}, "REQUEST_VARIABLE_MISSING", "Missing 'op' argument"),
    ],
)
def test_malformed_requests(member, params, code, msg):
    assert_error(typing(member, **params), 400, code, msg)


def test_other_organizations_people_and_hidden_channels_are_refused(make_stream, member, admin, foreign_user):
    assert_error(
        typing(member, op="start", to=[foreign_user.id]), 400, "BAD_REQUEST", f"Invalid user ID {foreign_user.id}"
    )
    secret = make_stream("secret", admin, private=True)
    assert_error(typing(member, op="start", type="stream", stream_id=secret.id, topic="x"), 400,
                 "STREAM_DOES_NOT_EXIST", f"Channel with ID '{secret.id}' does not exist")  # fmt: skip


# --- while editing a message (POST /messages/{id}/typing; POST /message_edit_typing) ---------------


def sent(user, to, **params) -> int:
    if isinstance(to, list):
        params.update(type="private", to=[u.id for u in to])
    else:
        params.update(type="stream", to=to.name, topic=params.get("topic", "plans"))
    return assert_success(api_for(user).post("/messages", {"content": "hi", **params}))["id"]


def test_editing_a_channel_message_reaches_its_subscribers(design, member, admin, owner, capture_events):
    message_id = sent(member, design, topic="")
    with capture_events(admin, owner) as received:
        assert_success(api_for(member).post(f"/messages/{message_id}/typing", {"op": "start"}))
        assert_success(api_for(member).post("/message_edit_typing", {"message_id": message_id, "op": "stop"}))
    start = {"type": "typing_edit_message", "op": "start", "sender_id": member.id, "message_id": message_id,
             "recipient": {"type": "channel", "channel_id": design.id, "topic": "general chat"}}  # fmt: skip
    assert received[admin.id] == [start, {**start, "op": "stop"}]
    assert received[owner.id] == []  # not subscribed
    with capture_events(admin, client_capabilities={"empty_topic_name": True}) as received:
        assert_success(api_for(member).post(f"/messages/{message_id}/typing", {"op": "start"}))
    assert received[admin.id][0]["recipient"]["topic"] == ""


def test_editing_a_direct_message_reaches_its_people(member, admin, owner, moderator, capture_events):
    message_id = sent(member, [admin, owner])
    owner.receives_typing_notifications = False
    owner.save(update_fields=["receives_typing_notifications"])
    with capture_events(admin, owner, moderator) as received:
        assert_success(api_for(member).post(f"/messages/{message_id}/typing", {"op": "start"}))
    told = sorted([member.id, admin.id])
    recipient = {"type": "direct", "user_ids": told}
    assert received[admin.id] == [{"type": "typing_edit_message", "op": "start", "sender_id": member.id,
                                   "message_id": message_id, "recipient": recipient}]  # fmt: skip
    assert received[owner.id] == received[moderator.id] == []


@pytest.mark.parametrize(
    ("who", "params", "code"),
    [
        ("admin", {"op": "start"}, "BAD_REQUEST"),  # "You don't have permission to edit this message"
        ("member", {"op": "begin"}, "REQUEST_VARIABLE_INVALID"),
        ("member", {}, "REQUEST_VARIABLE_MISSING"),
    ],
)
def test_only_a_message_one_may_edit_and_a_valid_op(design, member, admin, capture_events, who, params, code):
    message_id = sent(member, design)
    user = {"member": member, "admin": admin}[who]
    with capture_events(admin, member) as received:
        response = api_for(user).post(f"/messages/{message_id}/typing", params)
    assert_error(response, 400, code)
    assert received == {admin.id: [], member.id: []}


def test_a_message_one_cannot_see_or_past_the_edit_limit_is_refused(make_stream, design, member, admin, realm):
    secret = make_stream("secret", admin, private=True)
    hidden = sent(admin, secret)
    assert_error(api_for(member).post(f"/messages/{hidden}/typing", {"op": "start"}), 400, "BAD_REQUEST",
                 "Invalid message(s)")  # fmt: skip
    message_id = sent(member, design)
    realm.message_content_edit_limit_seconds = 60
    realm.save(update_fields=["message_content_edit_limit_seconds"])
    Message.objects.filter(id=message_id).update(
        date_sent=Message.objects.get(id=message_id).date_sent - timedelta(seconds=61)
    )
    assert_error(api_for(member).post(f"/messages/{message_id}/typing", {"op": "start"}), 400, "BAD_REQUEST",
                 "The time limit for editing this message has passed")  # fmt: skip


@pytest.mark.parametrize(
    ("setting", "to_channel", "msg"),
    [
        ("send_stream_typing_notifications", True, "User has disabled typing notifications for channel messages"),
        ("send_private_typing_notifications", False, "User has disabled typing notifications for direct messages"),
    ],
)
def test_editing_typing_follows_the_users_typing_settings(design, member, admin, setting, to_channel, msg):
    message_id = sent(member, design if to_channel else [admin])
    setattr(member, setting, False)
    member.save(update_fields=[setting])
    assert_error(api_for(member).post(f"/messages/{message_id}/typing", {"op": "start"}), 400, "BAD_REQUEST", msg)


def test_typing_to_more_people_than_the_limit_tells_nobody(design, member, admin, owner, capture_events, monkeypatch):
    """As Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS (a channel of more subscribers), and for
    direct messages to more people too (the QA pass: each notice lists them all, to each of them)."""
    monkeypatch.setattr("apps.messages.actions.typing.MAX_PEOPLE_FOR_TYPING_NOTIFICATIONS", 2)
    with capture_events(admin, owner, **STREAM_TYPING) as received:
        assert_success(typing(member, op="start", to=[admin.id]))  # two people, the sender included
        assert_success(typing(member, op="start", to=[admin.id, owner.id]))
        assert_success(typing(member, type="stream", op="start", stream_id=design.id, topic="plans"))  # two
        assert_success(api_for(admin).post("/users/me/subscriptions", {"subscriptions": '[{"name": "design"}]',
                                                                       "principals": f"[{owner.id}]"}))  # fmt: skip
        assert_success(typing(member, type="stream", op="start", stream_id=design.id, topic="plans"))
    typed = [event for event in received[admin.id] if event["type"] == "typing"]
    assert [(e["message_type"], len(e.get("recipients", []))) for e in typed] == [("direct", 2), ("stream", 0)]
    assert [e for e in received[owner.id] if e["type"] == "typing"] == []
