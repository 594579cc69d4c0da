"""Bot storage: the keys and values a bot keeps on the server between messages (Zulip's
/bot_storage, used by `zulip_bots`' StateHandler).

A bot's storage is its own: changed by the bot (a request) or by the server (`acting_user=None`),
never by anyone else. A request is checked whole before anything is written: one missing key, or a
total past the limit, changes nothing. No events: a bot's storage is read on demand, as in Zulip.
"""

from collections.abc import Mapping, Sequence

from django.db import transaction
from django.db.models import F
from django.db.models.functions import Length

from apps.bot_storage.errors import KeyDoesNotExistError, StorageLimitExceededError
from apps.bot_storage.models import BotStorageEntry, BotStorageUsage, key_digest
from apps.bot_storage.selectors import check_is_bot
from apps.users.models import User


def _check_acting_for(bot: User, acting_user: User | None) -> None:
    check_is_bot(bot)
    if acting_user is not None and acting_user.id != bot.id:
        raise ValueError("a bot's storage is changed by the bot itself or by the server")


def _locked_usage(bot: User) -> BotStorageUsage:
    """The bot's usage row, locked until the transaction ends (made on the bot's first write)."""
    with transaction.atomic():
        BotStorageUsage.objects.get_or_create(bot=bot)
    return BotStorageUsage.objects.select_for_update().get(bot=bot)


def _stored_sizes(bot: User, keys: Sequence[str]) -> dict[str, int]:
    """Characters of the stored entries among these keys (key and value), by key: one indexed query."""
    rows = BotStorageEntry.objects.filter(bot=bot, key_digest__in=[key_digest(key) for key in keys])
    return dict(rows.annotate(size=Length("key") + Length("value")).values_list("key", "size"))


@transaction.atomic
def do_set_bot_storage(bot: User, *, entries: Mapping[str, str], acting_user: User | None) -> None:
    """Store these keys' values (new keys added, others replaced), in one statement. Refused
    (StorageLimitExceededError, nothing stored) when the bot's keys and values would then add up to
    more than BotStorageEntry.MAX_CHARACTERS_PER_BOT characters, counted under a lock on the bot's
    usage (two concurrent requests cannot both pass the limit).

    Emits nothing.
    """
    _check_acting_for(bot, acting_user)
    if not entries:
        return
    usage = _locked_usage(bot)
    old = _stored_sizes(bot, list(entries))
    total = usage.characters + sum(len(key) + len(value) - old.get(key, 0) for key, value in entries.items())
    limit = BotStorageEntry.MAX_CHARACTERS_PER_BOT
    if total > limit:
        raise StorageLimitExceededError(total - limit, limit)
    BotStorageEntry.objects.bulk_create(
        [BotStorageEntry(bot=bot, key_digest=key_digest(key), key=key, value=value) for key, value in entries.items()],
        update_conflicts=True,
        unique_fields=["bot", "key_digest"],
        update_fields=["value"],
    )
    BotStorageUsage.objects.filter(bot=bot).update(characters=total)


@transaction.atomic
def do_remove_bot_storage(bot: User, *, keys: Sequence[str] | None, acting_user: User | None) -> None:
    """Delete these keys of the bot's storage, or all of them for None (an empty list: none).
    Refused (KeyDoesNotExistError, nothing deleted) if one of the keys is not stored.

    Emits nothing.
    """
    _check_acting_for(bot, acting_user)
    _locked_usage(bot)
    if keys is None:
        BotStorageEntry.objects.filter(bot=bot).delete()
        BotStorageUsage.objects.filter(bot=bot).update(characters=0)
        return
    wanted = set(keys)
    sizes = _stored_sizes(bot, list(wanted))
    if sizes.keys() != wanted:
        raise KeyDoesNotExistError()
    BotStorageEntry.objects.filter(bot=bot, key_digest__in=[key_digest(key) for key in wanted]).delete()
    BotStorageUsage.objects.filter(bot=bot).update(characters=F("characters") - sum(sizes.values()))
