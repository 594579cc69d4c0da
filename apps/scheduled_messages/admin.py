"""Admin page for scheduled messages and reminders: staff see them (and why one failed) and delete them through
the action (their senders are told)."""

from django.contrib import admin, messages

from apps.core.admin import ModelAdmin, confirmed_action
from apps.scheduled_messages.actions import do_delete_reminder, do_delete_scheduled_message
from apps.scheduled_messages.models import ScheduledMessage


@admin.register(ScheduledMessage)
class ScheduledMessageAdmin(ModelAdmin):
    list_display = ("id", "delivery_type", "sender", "stream", "topic", "scheduled_timestamp", "delivered", "failed")
    list_filter = ("delivery_type", "delivered", "failed", "realm")
    search_fields = ("sender__full_name", "sender__delivery_email", "content")
    list_select_related = ("sender", "stream")
    readonly_fields = [field.name for field in ScheduledMessage._meta.fields]
    actions = ("delete_scheduled",)

    def has_add_permission(self, request) -> bool:
        return False  # its sender schedules it (POST /scheduled_messages)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # "delete_scheduled" tells the sender

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # its sender's to change

    @confirmed_action(
        description="Delete the selected scheduled messages",
        consequence="They will not be sent, and cannot be brought back.",
    )
    def delete_scheduled(self, request, queryset) -> None:
        rows = list(queryset.select_related("sender"))
        for scheduled in rows:
            if scheduled.delivered:  # sent: no longer its sender's to cancel, nothing to tell them
                scheduled.delete()
            elif scheduled.delivery_type == ScheduledMessage.DeliveryType.REMIND:
                do_delete_reminder(scheduled.sender, scheduled.id, acting_user=None)
            else:
                do_delete_scheduled_message(scheduled.sender, scheduled.id, acting_user=None)
        self.message_user(request, f"Deleted {len(rows)} scheduled message(s).", messages.SUCCESS)
