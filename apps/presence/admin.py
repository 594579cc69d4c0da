"""Admin pages for presence (the embedded mode's rows; with Redis, presence lives there) and user
statuses: read-only, for server staff looking into a problem. Both are the user's clients' own."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.presence.models import UserPresence, UserStatus


@admin.register(UserPresence)
class UserPresenceAdmin(ReadOnlyAdmin):
    list_display = ("user", "last_connected_time", "last_active_time", "last_update_id")
    list_filter = ("realm",)
    search_fields = ("user__delivery_email", "user__full_name")
    list_select_related = ("user",)
    ordering = ("-last_connected_time",)


@admin.register(UserStatus)
class UserStatusAdmin(ReadOnlyAdmin):
    list_display = ("user", "status_text", "emoji_name", "away", "timestamp")
    list_filter = ("realm",)
    search_fields = ("status_text", "user__delivery_email", "user__full_name")
    list_select_related = ("user",)
    ordering = ("-timestamp",)
