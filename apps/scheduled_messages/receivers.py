"""The task worker's job of sending scheduled messages when they are due (registered in
ScheduledMessagesConfig.ready)."""

from apps.core.tasks import periodic
from apps.scheduled_messages.actions import deliver_due_scheduled_messages

# How often the worker looks for due messages: one is sent at most this late (plus the worker's
# TASK_POLL_SECONDS), well within Zulip's minute.
DELIVERY_CHECK_SECONDS = 5


@periodic(DELIVERY_CHECK_SECONDS)
def send_due_scheduled_messages() -> int:
    return deliver_due_scheduled_messages()
