"""Reads of outgoing webhooks."""

from apps.core.cache import cached
from apps.users.models import BotService, BotType, User

# Which bots of an organization have a webhook is asked for every direct message and mention, inside
# the message's transaction: cached, dropped when such a bot is created, deactivated or reactivated
# (receivers.py), and kept no longer than this (where the drop does not reach: another process with
# the cache in its own memory, no Redis).
WEBHOOK_BOTS_CACHE_SECONDS = 60


def webhook_bots_cache_key(realm_id: int) -> str:
    return f"webhooks:bots:{realm_id}"


def realm_webhook_bot_ids(realm_id: int) -> list[int]:
    """The organization's active outgoing-webhook bots with a service, by id."""

    def compute() -> list[int]:
        bots = User.objects.filter(
            realm_id=realm_id, is_active=True, bot_type=BotType.OUTGOING_WEBHOOK, services__isnull=False
        )
        return sorted(set(bots.values_list("id", flat=True)))

    return cached(webhook_bots_cache_key(realm_id), compute, WEBHOOK_BOTS_CACHE_SECONDS)


def bot_service(bot: User) -> BotService | None:
    """The bot's service (a bot has one: create_user makes it; the first, were there more)."""
    return BotService.objects.filter(bot=bot).order_by("id").first()
