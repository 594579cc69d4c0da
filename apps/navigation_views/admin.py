"""Admin page for navigation views: read-only (they are their owner's own; only the owner's clients
change them, through the API)."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.navigation_views.models import NavigationView


@admin.register(NavigationView)
class NavigationViewAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "fragment", "name", "is_pinned")
    list_filter = ("user__realm", "is_pinned")
    search_fields = ("fragment", "name", "user__delivery_email", "user__full_name")
    list_select_related = ("user",)
    ordering = ("-id",)
