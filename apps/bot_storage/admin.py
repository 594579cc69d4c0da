"""Admin page for bot storage: read-only, for server staff looking into a bot's state (a bot's
storage is its own; only the bot changes it, through the API)."""

from django.contrib import admin

from apps.bot_storage.models import BotStorageEntry
from apps.core.admin import ReadOnlyAdmin


@admin.register(BotStorageEntry)
class BotStorageEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "bot", "short_key", "short_value")
    list_filter = ("bot__realm",)
    search_fields = ("bot__delivery_email", "bot__full_name", "key")
    list_select_related = ("bot",)
    exclude = ("key_digest",)
    ordering = ("bot", "key")

    @admin.display(description="key")
    def short_key(self, entry: BotStorageEntry) -> str:
        return _shortened(entry.key)

    @admin.display(description="value")
    def short_value(self, entry: BotStorageEntry) -> str:
        return _shortened(entry.value)


def _shortened(text: str) -> str:
    """At most 80 characters of `text` (a key or value may have millions: the list shows many)."""
    return text if len(text) <= 80 else text[:79] + "…"
