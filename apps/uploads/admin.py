"""Admin pages for uploaded files (to look at, and to delete through do_delete_attachment) and
custom emoji (to look at, and to deactivate through do_deactivate_realm_emoji)."""

from django.contrib import admin, messages

from apps.core.admin import ReadOnlyAdmin, confirmed_action
from apps.uploads.actions import do_deactivate_realm_emoji, do_delete_attachment
from apps.uploads.models import Attachment, RealmEmoji


@admin.register(Attachment)
class AttachmentAdmin(ReadOnlyAdmin):
    list_display = ("id", "file_name", "owner", "realm", "size", "content_type", "create_time")
    list_filter = ("realm",)
    search_fields = ("file_name", "path_id", "owner__delivery_email", "owner__full_name")
    list_select_related = ("owner", "realm")
    readonly_fields = ("messages",)
    ordering = ("-id",)
    actions = ["delete_files"]

    @confirmed_action(
        description="Delete the selected files (messages keep their links)",
        consequence="The files are deleted for good; the links to them in messages stop working.",
    )
    def delete_files(self, request, queryset) -> None:
        count = 0
        for attachment in queryset.select_related("owner"):
            do_delete_attachment(attachment, acting_user=None)
            count += 1
        self.message_user(request, f"{count} file(s) deleted.", messages.SUCCESS)


@admin.register(RealmEmoji)
class RealmEmojiAdmin(ReadOnlyAdmin):
    list_display = ("id", "name", "realm", "author", "is_animated", "deactivated", "date_created")
    list_filter = ("realm", "deactivated")
    search_fields = ("name",)
    list_select_related = ("realm", "author")
    ordering = ("-id",)
    actions = ["deactivate"]

    @admin.action(description="Deactivate the selected custom emoji")
    def deactivate(self, request, queryset) -> None:
        count = 0
        for emoji in queryset.filter(deactivated=False):
            do_deactivate_realm_emoji(emoji, acting_user=None)
            count += 1
        self.message_user(request, f"{count} custom emoji deactivated.", messages.SUCCESS)
