"""Admin page for saved snippets: read-only (they are their owner's own; only the owner's clients
change them, through the API)."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.snippets.models import SavedSnippet


@admin.register(SavedSnippet)
class SavedSnippetAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "title", "date_created")
    list_filter = ("user__realm",)
    search_fields = ("title", "user__delivery_email", "user__full_name")
    list_select_related = ("user",)
    ordering = ("-id",)
