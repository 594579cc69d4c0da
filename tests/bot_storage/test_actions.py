"""The bot storage actions: whose storage they change, and the usage they keep."""

import pytest

from apps.bot_storage.actions import do_remove_bot_storage, do_set_bot_storage
from apps.bot_storage.errors import KeyDoesNotExistError, NotABotError, StorageLimitExceededError
from apps.bot_storage.models import BotStorageEntry, BotStorageUsage
from tests.factories import BotFactory


def usage_matches_entries(bot) -> bool:
    entries = BotStorageEntry.objects.filter(bot=bot)
    return BotStorageUsage.objects.get(bot=bot).characters == sum(len(e.key) + len(e.value) for e in entries)


def test_usage_follows_every_change(bot):
    do_set_bot_storage(bot, entries={"a": "1", "bb": "22"}, acting_user=bot)
    assert usage_matches_entries(bot)
    do_set_bot_storage(bot, entries={"a": "longer value", "c": ""}, acting_user=None)
    assert usage_matches_entries(bot)
    do_remove_bot_storage(bot, keys=["bb", "bb"], acting_user=bot)
    assert usage_matches_entries(bot)
    assert BotStorageUsage.objects.get(bot=bot).characters == len("a") + len("longer value") + len("c")
    do_remove_bot_storage(bot, keys=None, acting_user=bot)
    assert BotStorageUsage.objects.get(bot=bot).characters == 0


def test_refusals_change_nothing_and_leave_the_transaction_usable(bot, monkeypatch):
    monkeypatch.setattr(BotStorageEntry, "MAX_CHARACTERS_PER_BOT", 10)
    do_set_bot_storage(bot, entries={"k": "v"}, acting_user=bot)
    with pytest.raises(StorageLimitExceededError):
        do_set_bot_storage(bot, entries={"k": "0123456789"}, acting_user=bot)
    with pytest.raises(KeyDoesNotExistError):
        do_remove_bot_storage(bot, keys=["k", "missing"], acting_user=bot)
    assert dict(BotStorageEntry.objects.values_list("key", "value")) == {"k": "v"}
    assert usage_matches_entries(bot)


def test_only_bots_have_storage(member):
    with pytest.raises(NotABotError):
        do_set_bot_storage(member, entries={"k": "v"}, acting_user=member)
    with pytest.raises(NotABotError):
        do_remove_bot_storage(member, keys=None, acting_user=None)
    assert not BotStorageEntry.objects.exists()


def test_nobody_else_changes_a_bots_storage(bot, realm, member):
    other = BotFactory(realm=realm, bot_owner=member)
    for acting_user in (member, other, bot.bot_owner):
        with pytest.raises(ValueError, match="by the bot itself or by the server"):
            do_set_bot_storage(bot, entries={"k": "v"}, acting_user=acting_user)
        with pytest.raises(ValueError, match="by the bot itself or by the server"):
            do_remove_bot_storage(bot, keys=None, acting_user=acting_user)
    assert not BotStorageEntry.objects.exists()


def test_a_deleted_bot_takes_its_storage_along(bot):
    do_set_bot_storage(bot, entries={"k": "v"}, acting_user=bot)
    bot.delete()
    assert not BotStorageEntry.objects.exists()
    assert not BotStorageUsage.objects.exists()
