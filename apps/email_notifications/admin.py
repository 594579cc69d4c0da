"""The pending email notifications, to look at (they are sent, or dropped once read, by the task
worker's job)."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.email_notifications.models import EmailNotification


@admin.register(EmailNotification)
class EmailNotificationAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "message", "trigger", "scheduled_at")
    list_select_related = ("user", "message")
    list_filter = ("trigger",)
    search_fields = ("user__delivery_email", "user__full_name")
    date_hierarchy = "scheduled_at"
