"""What outgoing webhooks register with the hooks of the apps below: a message that triggers a bot
queues its delivery (apps/webhooks/delivery.py), in the message's transaction.

Triggers, as in Zulip (zerver/actions/message_send.py, get_service_bot_events):
- a channel message that mentions the bot (`mention`; apps.messages makes a mentioned service bot a
  recipient even when it is not subscribed);
- a direct message, one-on-one or to a group, that includes the bot (`direct_message`);
never a message sent by a bot, the bot's own answers included: no bot can trigger another, or
itself, so there are no loops. Deactivated bots are not triggered.
"""

from apps.messages.hooks import message_sent
from apps.messages.models import Message, UserMessage
from apps.webhooks.delivery import deliver_message
from apps.webhooks.selectors import triggered_bot_ids


@message_sent.register
def queue_outgoing_webhooks(message: Message, flags: dict[int, int]) -> None:
    if message.sender.is_bot:
        return
    if message.stream_id is not None:
        trigger = "mention"
        candidates = [uid for uid, bits in flags.items() if bits & UserMessage.MENTIONED]
    else:
        trigger = "direct_message"
        candidates = list(flags)
    candidates = [uid for uid in candidates if uid != message.sender_id]
    for bot_id in triggered_bot_ids(message.realm_id, candidates):
        deliver_message.enqueue(bot_id, message.id, trigger)
