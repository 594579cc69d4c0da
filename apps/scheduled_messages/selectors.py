"""Reads of scheduled messages. A user sees only their own: another's does not exist for them."""

from typing import Any

from apps.scheduled_messages.errors import ScheduledMessageDoesNotExistError
from apps.scheduled_messages.models import ScheduledMessage
from apps.scheduled_messages.serializers import scheduled_message_to_dict
from apps.users.models import User


def access_scheduled_message(user: User, scheduled_message_id: int, *, lock: bool = False) -> ScheduledMessage:
    """The user's scheduled message ("Scheduled message does not exist", 404, for any other id);
    with `lock` (in a transaction), its row locked against the worker sending it meanwhile."""
    rows = ScheduledMessage.objects.filter(id=scheduled_message_id, sender=user)
    scheduled = (rows.select_for_update() if lock else rows).first()
    if scheduled is None:
        raise ScheduledMessageDoesNotExistError()
    scheduled.sender = user
    return scheduled


def unsent_scheduled_messages(user: User) -> list[dict[str, Any]]:
    """The user's scheduled messages not sent yet (failed ones too: they show them), soonest first."""
    rows = ScheduledMessage.objects.filter(sender=user, delivered=False).order_by("scheduled_timestamp", "id")
    return [scheduled_message_to_dict(row) for row in rows]
