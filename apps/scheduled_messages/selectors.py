"""Reads of scheduled messages and reminders. A user sees only their own: another's does not exist
for them; nor does a reminder as a scheduled message, or the other way round."""

from collections.abc import Iterable
from typing import Any

from apps.scheduled_messages.errors import ReminderDoesNotExistError, ScheduledMessageDoesNotExistError
from apps.scheduled_messages.models import ScheduledMessage
from apps.scheduled_messages.serializers import reminder_to_dict, scheduled_message_to_dict
from apps.users.models import User


def access_scheduled_message(user: User, scheduled_message_id: int, *, lock: bool = False) -> ScheduledMessage:
    """The user's scheduled message ("Scheduled message does not exist", 404, for any other id);
    with `lock` (in a transaction), its row locked against the worker sending it meanwhile."""
    scheduled = _own(user, scheduled_message_id, ScheduledMessage.DeliveryType.SEND_LATER, lock=lock)
    if scheduled is None:
        raise ScheduledMessageDoesNotExistError()
    return scheduled


def access_reminder(user: User, reminder_id: int, *, lock: bool = False) -> ScheduledMessage:
    """The user's reminder ("Reminder does not exist", 404, for any other id); `lock` as above."""
    reminder = _own(user, reminder_id, ScheduledMessage.DeliveryType.REMIND, lock=lock)
    if reminder is None:
        raise ReminderDoesNotExistError()
    return reminder


def _own(user: User, scheduled_id: int, delivery_type: int, *, lock: bool) -> ScheduledMessage | None:
    rows = ScheduledMessage.objects.filter(id=scheduled_id, sender=user, delivery_type=delivery_type)
    scheduled = (rows.select_for_update() if lock else rows).first()
    if scheduled is not None:
        scheduled.sender = user
    return scheduled


def unsent(user: User, delivery_type: int | None = None):
    """The user's scheduled messages not sent yet (failed ones too: they show them), of one kind or
    both, soonest first."""
    rows = ScheduledMessage.objects.filter(sender=user, delivered=False)
    if delivery_type is not None:
        rows = rows.filter(delivery_type=delivery_type)
    return rows.order_by("scheduled_timestamp", "id")


def unsent_scheduled_messages(user: User, rows: Iterable[ScheduledMessage] | None = None) -> list[dict[str, Any]]:
    """Zulip's objects of the user's unsent scheduled messages; from `rows` (unsent(user)) if given."""
    kind = ScheduledMessage.DeliveryType.SEND_LATER
    rows = unsent(user, kind) if rows is None else rows
    return [scheduled_message_to_dict(row) for row in rows if row.delivery_type == kind]


def unsent_reminders(user: User, rows: Iterable[ScheduledMessage] | None = None) -> list[dict[str, Any]]:
    """Zulip's objects of the user's unsent reminders; from `rows` (unsent(user)) if given."""
    kind = ScheduledMessage.DeliveryType.REMIND
    rows = unsent(user, kind) if rows is None else rows
    return [reminder_to_dict(row) for row in rows if row.delivery_type == kind]
