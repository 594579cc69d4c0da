"""Request parameter classes of /scheduled_messages and /reminders, and Zulip's scheduled message
and reminder objects."""

from typing import Any, Literal

from apps.core.params import Id, Json, Params
from apps.scheduled_messages.models import ScheduledMessage

# Zulip's names of a message's type: "channel" and "direct" are the newer ones.
MessageType = Literal["stream", "channel", "private", "direct"]


class CreateScheduledMessageParams(Params):
    type: MessageType
    to: Json[int | list[int]]  # a channel id, or user ids
    topic: str | None = None
    content: str
    scheduled_delivery_timestamp: Json[int]
    read_by_sender: Json[bool] | None = None


class UpdateScheduledMessageParams(Params):
    type: MessageType | None = None
    to: Json[int | list[int]] | None = None
    topic: str | None = None
    content: str | None = None
    scheduled_delivery_timestamp: Json[int] | None = None


class CreateReminderParams(Params):
    message_id: Json[Id]
    scheduled_delivery_timestamp: Json[int]
    note: str | None = None


def scheduled_message_to_dict(scheduled: ScheduledMessage) -> dict[str, Any]:
    """Zulip's scheduled message object: a channel message's `to` is the channel's id (with its
    `topic`), a direct message's the ids of the people it goes to."""
    common = {
        "scheduled_message_id": scheduled.id,
        "content": scheduled.content,
        "rendered_content": scheduled.rendered_content,
        "scheduled_delivery_timestamp": int(scheduled.scheduled_timestamp.timestamp()),
        "failed": scheduled.failed,
    }
    if scheduled.stream_id is not None:
        return {"type": "stream", "to": scheduled.stream_id, "topic": scheduled.topic, **common}
    return {"type": "private", "to": list(scheduled.dm_user_ids), **common}


def reminder_to_dict(reminder: ScheduledMessage) -> dict[str, Any]:
    """Zulip's reminder object: a direct message to its sender alone (their id in `to`), with the
    message it is about."""
    return {
        "reminder_id": reminder.id,
        "type": "private",
        "to": [reminder.sender_id],
        "content": reminder.content,
        "rendered_content": reminder.rendered_content,
        "scheduled_delivery_timestamp": int(reminder.scheduled_timestamp.timestamp()),
        "failed": reminder.failed,
        "reminder_target_message_id": reminder.reminder_target_message_id,
    }
