"""POST /typing: typing to people and to a channel's topic, Zulip's errors, who is told (active
people who receive typing notifications; for channels, subscribers whose client declared
stream_typing_notifications), and that nothing is stored."""

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


def test_people_who_turned_typing_notifications_off(member, admin, capture_events):
    User.objects.filter(id=admin.id).update(receives_typing_notifications=False)
    with capture_events(admin) as received:
        assert_success(typing(member, op="start", to=[admin.id]))
    assert received[admin.id] == []
    member.send_private_typing_notifications = False
    member.save(update_fields=["send_private_typing_notifications"])  # forgets cached credentials too
    assert_error(typing(member, op="start", to=[admin.id]), 400, "BAD_REQUEST",
                 "User has disabled typing notifications for direct messages")  # fmt: skip


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
        ({"op": "start", "type": "stream", "topic": "x"}, "BAD_REQUEST", "Missing stream_id"),
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
