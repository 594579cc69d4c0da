"""Typing notifications (POST /typing): someone is composing a message to people or to a channel's
topic; or editing one of their messages (POST /messages/{id}/typing). Nothing is stored: the event
tells the people concerned (those who receive typing notifications), and clients expire it
themselves if no "stop" follows."""

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.actions.edit import check_can_edit_content
from apps.messages.addressing import access_stream_for_sending
from apps.messages.models import Message
from apps.messages.recipients import direct_message_people
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import subscriber_ids_by_stream
from apps.subscriptions.topics import topic_to_send_to, truncate_topic
from apps.users.access import inaccessible_user_ids, split_by_access, unknown_user_email
from apps.users.models import User
from apps.users.selectors import api_email

# Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS: typing to a channel of more subscribers tells
# nobody (each notice goes to every subscriber's queues); Parley holds direct messages to more
# people to it too (the event lists them all, to each: the QA pass, 1.2 MB of Redis a request at
# 150). A module value, so tests can lower it.
MAX_PEOPLE_FOR_TYPING_NOTIFICATIONS = 100


def _sender(user: User) -> dict:
    return {"user_id": user.id, "email": api_email(user)}


def _receivers(realm_id: int, user_ids: set[int]) -> list[int]:
    """Of these users, the active ones who receive typing notifications; nobody when they are more
    than MAX_PEOPLE_FOR_TYPING_NOTIFICATIONS."""
    if len(user_ids) > MAX_PEOPLE_FOR_TYPING_NOTIFICATIONS:
        return []
    return list(
        User.objects.filter(
            realm_id=realm_id, id__in=user_ids, is_active=True, receives_typing_notifications=True
        ).values_list("id", flat=True)
    )


def check_send_direct_typing(sender: User, *, user_ids: list[int], op: str) -> None:
    """Typing to people (Zulip's check_send_typing_notification): every id one of the
    organization's users ("Invalid user ID N" refuses the whole request); the sender included.

    Emits: typing {op, message_type: "direct", sender, recipients} to the active people who receive
    typing notifications.
    """
    if not user_ids:
        raise JsonableError("Empty 'to' list")
    if not sender.send_private_typing_notifications:
        raise JsonableError("User has disabled typing notifications for direct messages")
    wanted = list(dict.fromkeys([*user_ids, sender.id]))
    people = {user.id: user for user in User.objects.filter(realm_id=sender.realm_id, id__in=wanted)}
    for user_id in wanted:
        if user_id not in people:
            raise JsonableError(f"Invalid user ID {user_id}")
    if inaccessible_user_ids(sender, wanted):  # as a direct message to them is refused
        raise JsonableError("You do not have permission to access some of the recipients.")
    event = {
        "type": "typing",
        "op": op,
        "message_type": "direct",
        "sender": _sender(sender),
        "recipients": [_sender(people[user_id]) for user_id in sorted(wanted)],
    }
    receivers = _receivers(sender.realm_id, set(wanted))
    # A guest who may not see some of them yet (before the first message) is told of unknown users.
    for guest in [person for person in people.values() if person.is_guest and person.id in receivers]:
        if unknown := inaccessible_user_ids(guest, wanted):
            receivers.remove(guest.id)
            masked = {
                **event,
                "sender": _seen(sender, unknown),
                "recipients": [_seen(people[user_id], unknown) for user_id in sorted(wanted)],
            }
            send_event_on_commit(sender.realm_id, masked, [guest.id])
    send_event_on_commit(sender.realm_id, event, receivers)


def _seen(user: User, unknown: set[int]) -> dict:
    return _unknown(user) if user.id in unknown else _sender(user)


def _unknown(user: User) -> dict:
    """`_sender` of someone the reader may not see."""
    return {"user_id": user.id, "email": unknown_user_email(user.realm, user.id)}


def check_send_stream_typing(sender: User, *, stream_id: int, topic: str, op: str) -> None:
    """Typing to a channel's topic the sender may post in.

    Emits: typing {op, message_type: "stream", sender, stream_id, topic} to the channel's
    subscribers who receive typing notifications (clients without the stream_typing_notifications
    capability do not see it: apps/messages/events.py).
    """
    if not sender.send_stream_typing_notifications:
        raise JsonableError("User has disabled typing notifications for channel messages")
    stream: Stream = access_stream_for_sending(sender, stream_id)
    event = {
        "type": "typing",
        "op": op,
        "message_type": "stream",
        "sender": _sender(sender),
        "stream_id": stream.id,
        "topic": truncate_topic(topic_to_send_to(topic)),
    }
    receivers = _receivers(sender.realm_id, subscriber_ids_by_stream([stream.id])[stream.id])
    # Guests who may not see a sender typing from outside the channel (apps/users/access.py).
    seeing, not_seeing = split_by_access(sender, receivers)
    send_event_on_commit(sender.realm_id, event, seeing)
    if not_seeing:
        send_event_on_commit(sender.realm_id, {**event, "sender": _unknown(sender)}, not_seeing)


def check_send_edit_typing(sender: User, message: Message, *, op: str) -> None:
    """Typing while editing one's message (Zulip's send_message_edit_notification_backend): only a
    message the sender may edit now (no grace past the time limit).

    Emits: typing_edit_message {op, sender_id, message_id, recipient} to the people who have the
    message and receive typing notifications: recipient is {type: "channel", channel_id, topic}, or
    {type: "direct", user_ids} (those told).
    """
    check_can_edit_content(sender, message, grace=False)
    if message.stream_id is not None:
        if not sender.send_stream_typing_notifications:
            raise JsonableError("User has disabled typing notifications for channel messages")
        receivers = _receivers(sender.realm_id, subscriber_ids_by_stream([message.stream_id])[message.stream_id])
        recipient = {"type": "channel", "channel_id": message.stream_id, "topic": message.topic}
    else:
        if not sender.send_private_typing_notifications:
            raise JsonableError("User has disabled typing notifications for direct messages")
        receivers = _receivers(sender.realm_id, direct_message_people(message))
        recipient = {"type": "direct", "user_ids": sorted(receivers)}
    event = {"type": "typing_edit_message", "op": op, "sender_id": sender.id, "message_id": message.id,
             "recipient": recipient}  # fmt: skip
    send_event_on_commit(sender.realm_id, event, receivers)
