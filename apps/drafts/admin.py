"""Admin page for drafts: read-only, for server staff looking into a problem (drafts are their
owner's own; only the owner's clients change them, through the API)."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.drafts.models import Draft


@admin.register(Draft)
class DraftAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "recipient", "topic", "last_edit_time")
    list_filter = ("user__realm",)
    search_fields = ("user__delivery_email", "user__full_name")
    list_select_related = ("user", "recipient")
    date_hierarchy = "last_edit_time"
    ordering = ("-last_edit_time", "-id")
