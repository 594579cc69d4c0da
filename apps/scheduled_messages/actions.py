"""Scheduled messages: a user's messages for the server to send later (Zulip's "send later"), and
their reminders about messages (the Notification Bot's direct message to them, when they asked).

Each scheduled message is checked as sending checks a message (where it goes, whether the user may post there, its
content, the groups it mentions) when it is scheduled and when it is edited, and again when the
task worker sends it: what changed meanwhile (a channel archived, a permission taken away) makes it
fail, with why, and the Notification Bot tells its sender. A user's scheduled messages are their
own (apps/messages/actions/acting.py); the events go to the sender's queues only. A reminder that
cannot be sent (its user deactivated) fails silently, as Zulip's: it stays listed, failed.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.core.errors import JsonableError, dependency_error
from apps.events.publish import send_event_on_commit
from apps.linkifiers.selectors import linkifier_rules
from apps.messages.actions.acting import check_acting_for
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.send import (
    check_send_message,
    default_read_by_sender,
    do_send_message,
    normalize_content,
    normalize_topic,
    render_content,
)
from apps.messages.addressing import (
    access_dm_recipients,
    access_stream_for_sending,
    check_can_create_topic,
    check_can_send_direct_message,
)
from apps.messages.models import Message
from apps.messages.selectors import access_message
from apps.messages.wildcard_mentions import check_wildcard_mentions_allowed
from apps.scheduled_messages.errors import DeliveryTimeNotInFutureError, TooManyScheduledMessagesError
from apps.scheduled_messages.models import ScheduledMessage
from apps.scheduled_messages.reminders import normalize_note, reminder_content
from apps.scheduled_messages.selectors import access_reminder, access_scheduled_message, unsent
from apps.scheduled_messages.serializers import reminder_to_dict, scheduled_message_to_dict
from apps.subscriptions.errors import StreamWithIdDoesNotExistError
from apps.subscriptions.models import Stream
from apps.users.models import User

logger = logging.getLogger(__name__)

# Timestamps from here on have no date (after the year 9999).
TIMESTAMP_LIMIT = 253_402_300_800
# How late the worker still sends a message (after a worker that was stopped): Zulip's cutoff.
LATE_CUTOFF = timedelta(minutes=10)


@dataclass(frozen=True)
class Addressed:
    """Where a scheduled message goes and what it says, checked: a channel and topic, or people."""

    stream: Stream | None
    dm_user_ids: list[int]
    topic: str
    content: str
    rendered_content: str


# --- checking what is scheduled -------------------------------------------------------------------


def check_delivery_time(timestamp: int) -> datetime:
    """When to send it: UNIX seconds in the future ("Scheduled delivery time must be in the future.")."""
    if timestamp >= TIMESTAMP_LIMIT:
        raise JsonableError("Timestamp is too large.")
    deliver_at = datetime.fromtimestamp(max(timestamp, 0), tz=UTC)
    if deliver_at <= timezone.now():
        raise DeliveryTimeNotInFutureError()
    return deliver_at


def check_addressed(sender: User, kind: str, to: Any, topic: str | None, content: str) -> Addressed:
    """The message as POST /messages would check it: a channel the sender may post in (`to` its id,
    or a list of that one id) and its topic, or people of the organization (`to` their ids)."""
    content = normalize_content(content)
    if kind in ("stream", "channel"):
        stream_id = to[0] if isinstance(to, list) and len(to) == 1 else to
        if not isinstance(stream_id, int) or isinstance(stream_id, bool):
            raise JsonableError("Invalid data type for channel ID")
        if topic is None:
            raise JsonableError("Missing topic")
        stream = access_stream_for_sending(sender, stream_id)
        topic = normalize_topic(topic, stream, sender.realm)
        check_can_create_topic(sender, stream, topic)
        dm_user_ids: list[int] = []
    else:
        if not isinstance(to, list):  # people are named by a list of ids (Zulip's rule)
            raise JsonableError("Invalid data type for recipients")
        people = access_dm_recipients(sender, to)
        check_can_send_direct_message(sender, people)
        stream, topic = None, ""
        dm_user_ids = sorted({person.id for person in people} - {sender.id}) or [sender.id]
    rendered = render_content(sender, content, linkifier_rules(sender.realm_id))
    check_wildcard_mentions_allowed(sender, stream, topic, rendered)
    return Addressed(stream, dm_user_ids, topic, content, rendered.html)


# --- scheduling, editing, deleting ----------------------------------------------------------------


def check_schedule_message(
    sender: User,
    *,
    kind: str,
    to: Any,
    topic: str | None,
    content: str,
    scheduled_delivery_timestamp: int,
    read_by_sender: bool | None = None,
    client: str = "API",
    acting_user: User | None,
) -> ScheduledMessage:
    """POST /scheduled_messages: checked (the time, then the message), then stored. At most
    ScheduledMessage.MAX_PER_USER unsent ones per user, counted under a lock on the user.

    Emits: scheduled_messages/add {scheduled_messages: [it]} to the sender."""
    check_acting_for(sender, acting_user)
    deliver_at = check_delivery_time(scheduled_delivery_timestamp)
    addressed = check_addressed(sender, kind, to, topic, content)
    if read_by_sender is None:
        # As Zulip decides it when scheduling: read for a client a person types into, but a message
        # to oneself only (a reminder) arrives unread.
        read_by_sender = default_read_by_sender(client) and addressed.dm_user_ids != [sender.id]
    with transaction.atomic():
        _check_room(sender, ScheduledMessage.DeliveryType.SEND_LATER)
        scheduled = ScheduledMessage.objects.create(
            realm_id=sender.realm_id,
            sender=sender,
            **_addressed_fields(addressed),
            scheduled_timestamp=deliver_at,
            read_by_sender=read_by_sender,
            sending_client=client,
        )
        _send_event(scheduled, "add", scheduled_messages=[scheduled_message_to_dict(scheduled)])
    return scheduled


def check_edit_scheduled_message(
    sender: User,
    scheduled_message_id: int,
    *,
    kind: str | None = None,
    to: Any = None,
    topic: str | None = None,
    content: str | None = None,
    scheduled_delivery_timestamp: int | None = None,
    client: str = "API",
    acting_user: User | None,
) -> None:
    """PATCH /scheduled_messages/{id}, with Zulip's rules: something to change; a new type with its
    recipients (and, for a channel, its topic); a failed one only with a new time (which makes it
    scheduled again). What changes is checked again with what stays; a topic alone changes the
    topic of a channel message (and nothing for a direct message).

    Emits: scheduled_messages/update {scheduled_message} to the sender."""
    check_acting_for(sender, acting_user)
    if all(value is None for value in (kind, to, topic, content, scheduled_delivery_timestamp)):
        raise JsonableError("Nothing to change")
    if kind is not None and to is None:
        raise JsonableError("Recipient required when updating type of scheduled message.")
    if kind in ("stream", "channel") and topic is None:
        raise JsonableError("Topic required when updating scheduled message type to channel.")
    deliver_at = None if scheduled_delivery_timestamp is None else check_delivery_time(scheduled_delivery_timestamp)
    with transaction.atomic():
        scheduled = access_scheduled_message(sender, scheduled_message_id, lock=True)
        if scheduled.delivered:
            raise JsonableError("Scheduled message was already sent")
        if scheduled.failed and deliver_at is None:
            raise DeliveryTimeNotInFutureError()
        fields: dict[str, Any] = {}
        if kind is not None or to is not None or content is not None:
            was_channel = scheduled.stream_id is not None
            addressed = check_addressed(
                sender,
                kind or ("stream" if was_channel else "private"),
                to if to is not None else (scheduled.stream_id if was_channel else scheduled.dm_user_ids),
                topic if topic is not None else scheduled.topic,
                content if content is not None else scheduled.content,
            )
            fields = _addressed_fields(addressed)
        elif topic is not None and scheduled.stream is not None:
            fields["topic"] = normalize_topic(topic, scheduled.stream, sender.realm)
        if deliver_at is not None:
            fields["scheduled_timestamp"] = deliver_at
        fields.update(sending_client=client, failed=False, failure_message="")
        for name, value in fields.items():
            setattr(scheduled, name, value)
        scheduled.save(update_fields=list(fields))
        _send_event(scheduled, "update", scheduled_message=scheduled_message_to_dict(scheduled))


@transaction.atomic
def do_delete_scheduled_message(sender: User, scheduled_message_id: int, *, acting_user: User | None) -> None:
    """DELETE /scheduled_messages/{id}: "Scheduled message was already sent" once it was, as PATCH
    says (the race QA pass: a cancel at its time was answered success while the message went out,
    and its remove event sent twice). Emits: scheduled_messages/remove {scheduled_message_id} to
    the sender."""
    check_acting_for(sender, acting_user)
    scheduled = access_scheduled_message(sender, scheduled_message_id, lock=True)
    if scheduled.delivered:
        raise JsonableError("Scheduled message was already sent")
    scheduled.delete()
    _send_event(scheduled, "remove", scheduled_message_id=scheduled_message_id)


def _check_room(sender: User, delivery_type: int) -> None:
    """At most ScheduledMessage.MAX_PER_USER unsent ones of a kind, counted under a lock on the
    user (call in a transaction)."""
    User.objects.select_for_update().filter(id=sender.id).first()
    if unsent(sender, delivery_type).count() >= ScheduledMessage.MAX_PER_USER:
        raise TooManyScheduledMessagesError(ScheduledMessage.MAX_PER_USER)


def _addressed_fields(addressed: Addressed) -> dict[str, Any]:
    return {
        "stream": addressed.stream,
        "dm_user_ids": addressed.dm_user_ids,
        "topic": addressed.topic,
        "content": addressed.content,
        "rendered_content": addressed.rendered_content,
    }


def _send_event(scheduled: ScheduledMessage, op: str, **data: Any) -> None:
    """Emits: scheduled_messages/`op` {data} to the scheduled message's sender."""
    event = {"type": "scheduled_messages", "op": op, **data}
    send_event_on_commit(scheduled.realm_id, event, [scheduled.sender_id])


# --- reminders -------------------------------------------------------------------------------------


def check_schedule_reminder(
    user: User,
    message_id: int,
    *,
    scheduled_delivery_timestamp: int,
    note: str | None = None,
    client: str = "API",
    acting_user: User | None,
) -> ScheduledMessage:
    """POST /reminders: a reminder about a message the user may read, checked in Zulip's order (the
    time, the message, the note). Its content is written now (GET /reminders shows it) and again
    when it is sent, from the message as it is then.

    Emits: reminders/add {reminders: [it]} to the user."""
    check_acting_for(user, acting_user)
    deliver_at = check_delivery_time(scheduled_delivery_timestamp)
    message, _ = access_message(user, message_id)
    note = normalize_note(note)
    content = reminder_content(user, message, note)
    rendered = render_content(user, content, linkifier_rules(user.realm_id))
    with transaction.atomic():
        _check_room(user, ScheduledMessage.DeliveryType.REMIND)
        reminder = ScheduledMessage.objects.create(
            realm_id=user.realm_id,
            sender=user,
            dm_user_ids=[user.id],
            content=content,
            rendered_content=rendered.html,
            scheduled_timestamp=deliver_at,
            read_by_sender=False,
            sending_client=client,
            delivery_type=ScheduledMessage.DeliveryType.REMIND,
            reminder_target_message_id=message.id,
            reminder_note=note,
        )
        _send_reminders_event(reminder, "add", reminders=[reminder_to_dict(reminder)])
    return reminder


@transaction.atomic
def do_delete_reminder(user: User, reminder_id: int, *, acting_user: User | None) -> None:
    """DELETE /reminders/{id}: it will not be sent ("Reminder was already sent" once it was). Emits:
    reminders/remove {reminder_id} to the user."""
    check_acting_for(user, acting_user)
    reminder = access_reminder(user, reminder_id, lock=True)
    if reminder.delivered:
        raise JsonableError("Reminder was already sent")
    reminder.delete()
    _send_reminders_event(reminder, "remove", reminder_id=reminder_id)


def _send_reminders_event(reminder: ScheduledMessage, op: str, **data: Any) -> None:
    send_event_on_commit(reminder.realm_id, {"type": "reminders", "op": op, **data}, [reminder.sender_id])


def _send_reminder(reminder: ScheduledMessage) -> Message:
    """The Notification Bot's direct message to the reminder's user: about the message as it is
    now, or, when they may no longer read it (deleted, moved away from them), as it was."""
    user = reminder.sender
    try:
        message, _ = access_message(user, reminder.reminder_target_message_id)
        content = reminder_content(user, message, reminder.reminder_note)
    except JsonableError:
        content = reminder.content
    bot = do_create_notification_bot(user.realm)
    if not bot.is_active:
        raise JsonableError("Reminder could not be sent.")
    return do_send_message(bot, dm_with=[user], content=content, client="Internal", acting_user=None)


# --- sending them when they are due (the task worker) ---------------------------------------------


def deliver_due_scheduled_messages() -> int:
    """Send every scheduled message now due, oldest first, each in its transaction (several
    workers share them: each takes one no other holds). Returns how many were tried."""
    tried = 0
    while try_deliver_one_scheduled_message():
        tried += 1
    return tried


@transaction.atomic
def try_deliver_one_scheduled_message() -> bool:
    """Send the earliest due scheduled message (False when none is due): as its sender would send
    it now, checked again. One that cannot be sent fails, with why; its sender gets the Notification
    Bot's word of it (not when they or their organization were deactivated).

    Emits: what sending a message emits, and scheduled_messages/remove; or, failed,
    scheduled_messages/update."""
    due = ScheduledMessage.objects.filter(delivered=False, failed=False, scheduled_timestamp__lte=timezone.now())
    scheduled = (
        due.select_for_update(skip_locked=True, of=("self",))
        .select_related("sender__realm", "stream")
        .order_by("scheduled_timestamp", "id")
        .first()
    )
    if scheduled is None:
        return False
    sender = scheduled.sender
    is_reminder = scheduled.delivery_type == ScheduledMessage.DeliveryType.REMIND
    if not sender.is_active or sender.realm.deactivated:
        _fail(scheduled, "Account is deactivated" if not sender.is_active else "This organization has been deactivated")
        return True
    try:
        with transaction.atomic():  # a refusal rolls back the attempt alone
            message = _send_reminder(scheduled) if is_reminder else _send(scheduled)
    except Exception as exc:
        if dependency_error(exc) is not None:
            raise  # the worker waits for the database and tries again
        if not isinstance(exc, JsonableError):
            logger.exception("scheduled message %d could not be sent", scheduled.id)
        # A reminder fails silently (it stays listed, failed), as Zulip's.
        _fail(scheduled, exc.msg if isinstance(exc, JsonableError) else "Internal server error", notify=not is_reminder)
        return True
    scheduled.delivered, scheduled.delivered_message = True, message
    scheduled.save(update_fields=["delivered", "delivered_message"])
    if is_reminder:
        _send_reminders_event(scheduled, "remove", reminder_id=scheduled.id)
    else:
        _send_event(scheduled, "remove", scheduled_message_id=scheduled.id)
    return True


def _send(scheduled: ScheduledMessage) -> Message:
    if timezone.now() > scheduled.scheduled_timestamp + LATE_CUTOFF:
        raise JsonableError("Message could not be sent at the scheduled time.")
    is_channel = scheduled.stream_id is not None
    try:
        return check_send_message(
            scheduled.sender,
            kind="stream" if is_channel else "private",
            to=scheduled.stream_id if is_channel else list(scheduled.dm_user_ids),
            topic=scheduled.topic if is_channel else None,
            content=scheduled.content,
            client=scheduled.sending_client,
            read_by_sender=scheduled.read_by_sender,
            acting_user=None,
        )
    except StreamWithIdDoesNotExistError:
        # The channel they chose is hidden from them now (a private one they left): say so by name.
        raise JsonableError(f"Not authorized to send to channel '{scheduled.stream.name}'") from None


def _fail(scheduled: ScheduledMessage, why: str, *, notify: bool = False) -> None:
    scheduled.failed, scheduled.failure_message = True, why
    scheduled.save(update_fields=["failed", "failure_message"])
    if not notify:
        return
    sender = scheduled.sender
    _send_event(scheduled, "update", scheduled_message=scheduled_message_to_dict(scheduled))
    bot = do_create_notification_bot(sender.realm)
    if bot.is_active:
        # As Zulip's send_failed_scheduled_message_notification: the time shown in the reader's zone.
        when = f"<time:{scheduled.scheduled_timestamp.replace(microsecond=0).isoformat()}>"
        content = (
            f"The message you scheduled for {when} was not sent because of the following error:\n\n> {why}\n\n"
            "[View scheduled messages](#scheduled)"
        )
        do_send_message(bot, dm_with=[sender], content=content, client="Internal", acting_user=None)
