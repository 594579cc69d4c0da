"""Reads of outgoing webhooks."""

from collections.abc import Collection

from apps.users.models import BotService, BotType, User


def webhook_bot_ids_among(realm_id: int, user_ids: Collection[int]) -> list[int]:
    """Those of `user_ids` that are active outgoing-webhook bots of the organization with a service."""
    bots = User.objects.filter(
        realm_id=realm_id, id__in=user_ids, is_active=True, bot_type=BotType.OUTGOING_WEBHOOK, services__isnull=False
    )
    return sorted(set(bots.values_list("id", flat=True)))


def bot_service(bot: User) -> BotService | None:
    """The bot's service (a bot has one: create_user makes it; the first, were there more)."""
    return BotService.objects.filter(bot=bot).order_by("id").first()
