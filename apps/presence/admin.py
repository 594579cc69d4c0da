"""Admin page for presence (the embedded mode's rows; with Redis, presence lives there): read-only,
for server staff looking into a problem. Pings are the user's clients' own."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.presence.models import UserPresence


@admin.register(UserPresence)
class UserPresenceAdmin(ReadOnlyAdmin):
    list_display = ("user", "last_connected_time", "last_active_time", "last_update_id")
    list_filter = ("realm",)
    search_fields = ("user__delivery_email", "user__full_name")
    list_select_related = ("user",)
    ordering = ("-last_connected_time",)
