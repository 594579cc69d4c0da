"""The task worker's job of sending scheduled messages when they are due, and what the apps below
are told of them (registered in ScheduledMessagesConfig.ready)."""

from apps.core.tasks import periodic
from apps.messages.hooks import contents_to_send
from apps.scheduled_messages.actions import deliver_due_scheduled_messages
from apps.scheduled_messages.models import ScheduledMessage

# How often the worker looks for due messages: one is sent at most this late (plus the worker's
# TASK_POLL_SECONDS), well within Zulip's minute.
DELIVERY_CHECK_SECONDS = 5


@periodic(DELIVERY_CHECK_SECONDS)
def send_due_scheduled_messages() -> int:
    return deliver_due_scheduled_messages()


@contents_to_send.register
def unsent_contents() -> list[tuple[int, str]]:
    """The scheduled messages and reminders not sent yet (failed ones too: their senders may edit
    them and try again): their files are kept."""
    unsent = ScheduledMessage.objects.filter(delivered=False)
    return list(unsent.values_list("realm_id", "content"))
