"""Admin pages for messages, reactions, muted users and alert words: read-only (changes go through the API, which tells
clients; a row changed here would leave them out of date)."""

from datetime import UTC, datetime

from django.contrib import admin
from django.utils.html import format_html, format_html_join

from apps.core.admin import ReadOnlyAdmin
from apps.messages.models import AlertWord, Message, MutedUser, NotificationBot, Reaction


class ReactionInline(admin.TabularInline):
    """The message's reactions, on its page (read-only, as the reactions' own list)."""

    model = Reaction
    fields = ("user", "emoji_name", "emoji_code", "reaction_type")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "sender", "stream", "topic", "date_sent", "sending_client")
    list_filter = ("realm", "stream")
    search_fields = ("content", "topic", "sender__delivery_email", "sender__full_name")
    list_select_related = ("sender", "stream")
    date_hierarchy = "date_sent"
    ordering = ("-id",)
    exclude = ("edit_history",)
    readonly_fields = ("edits",)
    inlines = (ReactionInline,)

    @admin.display(description="edit history")
    def edits(self, message: Message) -> str:
        """Each edit, newest first: when, by whom (user id), and what changed."""
        rows = [
            (datetime.fromtimestamp(entry["timestamp"], UTC).isoformat(), entry["user_id"], _changes(entry))
            for entry in message.edit_history or []
        ]
        if not rows:
            return "-"
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{} by user {}: {}</li>", rows))


def _changes(entry: dict) -> str:
    changes = []
    if "prev_content" in entry:
        changes.append("content edited")
    if "prev_topic" in entry:
        changes.append(f"topic {entry['prev_topic']!r} → {entry['topic']!r}")
    if "prev_stream" in entry:
        changes.append(f"channel {entry['prev_stream']} → {entry['stream']}")
    return ", ".join(changes)


@admin.register(NotificationBot)
class NotificationBotAdmin(ReadOnlyAdmin):
    list_display = ("realm", "bot")
    list_select_related = ("realm", "bot")


@admin.register(MutedUser)
class MutedUserAdmin(ReadOnlyAdmin):
    list_display = ("user", "muted_user", "date_muted")
    search_fields = ("user__delivery_email", "muted_user__delivery_email")
    list_select_related = ("user", "muted_user")


@admin.register(AlertWord)
class AlertWordAdmin(ReadOnlyAdmin):
    list_display = ("user", "word")
    list_filter = ("user__realm",)
    search_fields = ("word", "user__delivery_email", "user__full_name")
    list_select_related = ("user",)


@admin.register(Reaction)
class ReactionAdmin(ReadOnlyAdmin):
    list_display = ("message", "user", "emoji_name", "emoji_code", "reaction_type")
    list_filter = ("reaction_type", "user__realm")
    search_fields = ("emoji_name", "user__delivery_email", "user__full_name")
    list_select_related = ("message", "user")
    ordering = ("-id",)
