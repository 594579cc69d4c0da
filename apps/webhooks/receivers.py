"""What outgoing webhooks register with the hooks of the apps below: a message that triggers a bot
queues its delivery (apps/webhooks/delivery.py), in the message's transaction; and the cached list
of an organization's webhook bots is dropped when one is created, deactivated or reactivated.

Triggers, as in Zulip (zerver/actions/message_send.py, get_service_bot_events):
- a channel message that mentions the bot (`mention`; apps.messages makes a mentioned service bot a
  recipient even when it is not subscribed);
- a direct message, one-on-one or to a group, that includes the bot (`direct_message`);
never a message sent by a bot, the bot's own answers included: no bot can trigger another, or
itself, so there are no loops. Deactivated bots are not triggered (nor delivered to, should the
cached list be behind: the delivery checks again).

Failed deliveries are kept for the operator as long as failed tasks are (prune_failed_deliveries).
"""

from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.cache import forget
from apps.core.tasks import periodic
from apps.messages.hooks import message_sent
from apps.messages.models import Message, UserMessage
from apps.users.hooks import user_created, user_reactivated, users_deactivated
from apps.users.models import BotType, User
from apps.webhooks.delivery import deliver_message
from apps.webhooks.models import FailedDelivery
from apps.webhooks.selectors import realm_webhook_bot_ids, webhook_bots_cache_key


@message_sent.register
def queue_outgoing_webhooks(message: Message, flags: dict[int, int]) -> None:
    if message.sender.is_bot:
        return
    # Asked for every message (the cache, nearly always), so that a mention does not find it empty
    # and read the database inside the message's transaction.
    bot_ids = realm_webhook_bot_ids(message.realm_id)
    if not bot_ids:
        return
    if message.stream_id is not None:
        trigger = "mention"
        candidates = {uid for uid, bits in flags.items() if bits & UserMessage.MENTIONED}
    else:
        trigger = "direct_message"
        candidates = set(flags)
    candidates.discard(message.sender_id)
    for bot_id in bot_ids:
        if bot_id in candidates:
            deliver_message.enqueue(bot_id, message.id, trigger)


def _forget_bots_of(users: Iterable[User]) -> None:
    for realm_id in {user.realm_id for user in users if user.bot_type == BotType.OUTGOING_WEBHOOK}:
        key = webhook_bots_cache_key(realm_id)
        forget(key)
        transaction.on_commit(lambda key=key: forget(key))


@user_created.register
def forget_bots_on_creation(user: User) -> None:
    _forget_bots_of([user])


@users_deactivated.register
def forget_bots_on_deactivation(users: list[User]) -> None:
    _forget_bots_of(users)


@user_reactivated.register
def forget_bots_on_reactivation(user: User) -> None:
    _forget_bots_of([user])


@periodic(3600)
def prune_failed_deliveries() -> int:
    """Deletes the failed deliveries older than TASK_KEEP_FAILED_SECONDS (30 days unless set), as
    failed tasks are. Returns how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.TASK_KEEP_FAILED_SECONDS)
    return FailedDelivery.objects.filter(failed_at__lt=cutoff).delete()[0]
