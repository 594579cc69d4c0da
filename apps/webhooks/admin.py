"""Admin page for outgoing webhooks: the deliveries that failed, to look at."""

from django.contrib import admin

from apps.core.admin import ReadOnlyAdmin
from apps.webhooks.models import FailedDelivery


@admin.register(FailedDelivery)
class FailedDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("failed_at", "bot", "message_id", "trigger", "outcome", "status", "attempts", "url")
    list_filter = ("outcome", "bot__realm")
    list_select_related = ("bot",)
    search_fields = ("bot__delivery_email", "url", "detail")
    fields = ("failed_at", "bot", "message_id", "trigger", "url", "outcome", "status", "attempts", "detail")
