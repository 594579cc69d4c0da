"""Reads of bot storage. A bot sees only its own entries."""

from collections.abc import Sequence

from apps.bot_storage.errors import KeyDoesNotExistError, NotABotError
from apps.bot_storage.models import BotStorageEntry, key_digest
from apps.users.models import User


def check_is_bot(user: User) -> None:
    """Refuses (NotABotError) a user who is not a bot: bot storage is for bots only."""
    if not user.is_bot:
        raise NotABotError()


def bot_storage(bot: User, keys: Sequence[str] | None = None) -> dict[str, str]:
    """The bot's values of these keys (one indexed query), or all its entries for None; "Key does
    not exist." if one of the keys is not stored."""
    entries = BotStorageEntry.objects.filter(bot=bot)
    if keys is None:
        return dict(entries.order_by("key").values_list("key", "value"))
    wanted = set(keys)
    found = dict(entries.filter(key_digest__in=[key_digest(key) for key in wanted]).values_list("key", "value"))
    if found.keys() != wanted:
        raise KeyDoesNotExistError()
    return found
