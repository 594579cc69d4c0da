"""Deleting one message (DELETE /messages/{id}), with Zulip's rules: anyone in the organization's
can_delete_any_message_group (or, for a channel's message, the channel's) deletes any message they
can see, at any time; others delete their own messages and their bots', if they are in
can_delete_own_message_group (the organization's or the channel's), within
message_content_delete_limit_seconds of sending (none: any time)."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.access import users_told_of
from apps.messages.actions.delete_topic import do_delete_messages
from apps.messages.actions.edit import lock_message
from apps.messages.hooks import messages_deleting
from apps.messages.models import Message, UserMessage
from apps.messages.newest import newest_changed_on_commit
from apps.subscriptions.selectors import Membership, has_realm_setting
from apps.users.models import User


def check_can_delete_message(user: User, message: Message) -> None:
    """Zulip's validate_can_delete_message, for a message the user can see (access_message): the
    organization's settings, or for a channel message the channel's settings of the same names
    (feature level 407; a channel's administrators hold them only as anyone else)."""
    membership = Membership(user)

    def holds(name: str) -> bool:
        return has_realm_setting(membership, name) or (
            message.stream is not None and membership.holds(message.stream, name)
        )

    if holds("can_delete_any_message_group"):
        return
    if message.sender_id != user.id and message.sender.bot_owner_id != user.id:
        raise JsonableError("You don't have permission to delete this message")
    if not holds("can_delete_own_message_group"):
        raise JsonableError("You don't have permission to delete this message")
    limit = user.realm.message_content_delete_limit_seconds
    if limit is not None and timezone.now() - message.date_sent > timedelta(seconds=limit):
        raise JsonableError("The time limit for deleting this message has passed")


def check_delete_message(message: Message, *, acting_user: User) -> None:
    """DELETE /messages/{id}: the message, which `acting_user` can see, deleted if they may."""
    check_can_delete_message(acting_user, message)
    do_delete_message(message, acting_user=acting_user)


@transaction.atomic
def do_delete_message(message: Message, *, acting_user: User | None) -> None:
    """Delete a message; "Invalid message(s)" if another request deleted it first (its row is
    locked, after its channel's as a move locks them, so only one of them sends the events, with
    where the message is when it goes).

    Emits: delete_message, as a topic's deletion does for a channel message (with the channel's
    first_message_id kept right), and {message_ids, message_type: "private"} to the people of a
    direct message (and the acting user).
    """
    message = lock_message(message.id, with_channels=True)
    if message.stream_id is not None:
        do_delete_messages(message.stream, message.topic, [message.id], acting_user=acting_user)
        return
    recipients = users_told_of(None, [message.id])
    if acting_user is not None:
        recipients.add(acting_user.id)
    messages_deleting.call([message.id])
    newest_changed_on_commit(message.realm_id)
    UserMessage.objects.filter(message_id=message.id).delete()
    Message.objects.filter(id=message.id).delete()
    event = {"type": "delete_message", "message_type": "private", "message_ids": [message.id]}
    send_event_on_commit(message.realm_id, event, recipients)
