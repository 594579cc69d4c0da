"""What outgoing webhooks register with the hooks of the apps below: a message that triggers a bot
queues its delivery (apps/webhooks/delivery.py), in the message's transaction.

Triggers, as in Zulip (zerver/actions/message_send.py, get_service_bot_events):
- a channel message that mentions the bot (`mention`; apps.messages makes a mentioned service bot a
  recipient even when it is not subscribed);
- a direct message, one-on-one or to a group, that includes the bot (`direct_message`);
never a message sent by a bot, the bot's own answers included: no bot can trigger another, or
itself, so there are no loops. Deactivated bots are not triggered (the delivery checks again).

Which of a message's people are such bots is read from the database, for the messages that have
candidates (direct messages, and channel messages that mention someone): a list kept in a
process's memory missed the bots created by another process, such as `manage.py create_user`
beside an embedded server, whose messages were then never delivered.

Failed deliveries are kept for the operator as long as failed tasks are (prune_failed_deliveries).
"""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.core.tasks import periodic
from apps.messages.hooks import message_sent
from apps.messages.models import Message, UserMessage
from apps.messages.rendering import live_mentions
from apps.webhooks.delivery import deliver_message
from apps.webhooks.models import FailedDelivery
from apps.webhooks.selectors import webhook_bot_ids_among


@message_sent.register
def queue_outgoing_webhooks(message: Message, flags: dict[int, int], *, external_notifications: bool) -> None:
    if message.sender.is_bot:
        return
    if message.stream_id is not None:
        trigger = "mention"
        candidates = {uid for uid, bits in flags.items() if bits & UserMessage.MENTIONED}
        # A bot mentioned in a channel it is not subscribed to, which has no row of it (send).
        candidates |= live_mentions(message.rendered_content)[0] - flags.keys()
    else:
        trigger = "direct_message"
        candidates = set(flags)
    candidates.discard(message.sender_id)
    if not candidates:
        return
    for bot_id in webhook_bot_ids_among(message.realm_id, candidates):
        deliver_message.enqueue(bot_id, message.id, trigger)


@periodic(3600)
def prune_failed_deliveries() -> int:
    """Deletes the failed deliveries older than TASK_KEEP_FAILED_SECONDS (30 days unless set), as
    failed tasks are. Returns how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.TASK_KEEP_FAILED_SECONDS)
    return FailedDelivery.objects.filter(failed_at__lt=cutoff).delete()[0]
