import hashlib

from django.db import models

from apps.users.models import User


def key_digest(key: str) -> str:
    """What a key is found by: its SHA-256 (an index entry of bounded size whatever the key's length;
    PostgreSQL's B-tree entries cannot hold a long key itself)."""
    return hashlib.sha256(key.encode()).hexdigest()


class BotStorageEntry(models.Model):
    """One key of a bot's storage (Zulip's BotStorageData): what a `zulip_bots` bot keeps between
    messages through its StateHandler. Keys and values are strings; each bot has its own keys."""

    # The most characters (keys and values together) a bot stores (Zulip's USER_STATE_SIZE_LIMIT).
    MAX_CHARACTERS_PER_BOT = 10_000_000

    # Found by the unique index below (its first column), which needs no other.
    bot = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    key_digest = models.CharField(max_length=64)
    key = models.TextField()
    value = models.TextField()

    class Meta:
        verbose_name = "bot storage entry"
        verbose_name_plural = "bot storage entries"
        constraints = [
            # One row per key of a bot: reading or writing keys is one lookup in this index, and a
            # bot's keys are one range of it.
            models.UniqueConstraint(fields=["bot", "key_digest"], name="bot_storage_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.key!r} of bot {self.bot_id}"


class BotStorageUsage(models.Model):
    """How many characters (keys and values) a bot stores, kept by every write: the limit is checked
    without adding up the bot's entries, and this row is what concurrent writes of one bot lock."""

    bot = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="+")
    characters = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"bot {self.bot_id}: {self.characters} characters"
