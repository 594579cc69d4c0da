"""Reads of outgoing webhooks."""

from collections.abc import Iterable

from apps.users.models import BotService, BotType, User


def triggered_bot_ids(realm_id: int, user_ids: Iterable[int]) -> list[int]:
    """The active outgoing-webhook bots with a service among these users, by id."""
    ids = set(user_ids)
    if not ids:
        return []
    bots = User.objects.filter(
        realm_id=realm_id, id__in=ids, is_active=True, bot_type=BotType.OUTGOING_WEBHOOK, services__isnull=False
    )
    return sorted(set(bots.values_list("id", flat=True)))


def bot_service(bot: User) -> BotService | None:
    """The bot's service (a bot has one: create_user makes it; the first, were there more)."""
    return BotService.objects.filter(bot=bot).order_by("id").first()
