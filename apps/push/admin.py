"""Admin pages for push registrations: to look at a user's tokens and devices, and to remove them
(through the actions: a removed device's apps hear of it). Only phones register them."""

from django.contrib import admin

from apps.core.admin import ModelAdmin
from apps.push.actions import do_remove_client_device, do_remove_push_device_tokens
from apps.push.models import Device, PushDeviceToken


class RemoveOnlyAdmin(ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PushDeviceToken)
class PushDeviceTokenAdmin(RemoveOnlyAdmin):
    list_display = ("id", "user", "kind", "short_token", "ios_app_id", "last_updated")
    list_filter = ("kind", "user__realm")
    search_fields = ("user__delivery_email", "user__full_name", "token")
    list_select_related = ("user",)
    ordering = ("-last_updated",)

    @admin.display(description="token")
    def short_token(self, obj: PushDeviceToken) -> str:
        return f"{obj.token[:12]}…" if len(obj.token) > 12 else obj.token

    def delete_model(self, request, obj: PushDeviceToken) -> None:
        do_remove_push_device_tokens([obj])

    def delete_queryset(self, request, queryset) -> None:
        do_remove_push_device_tokens(list(queryset))


@admin.register(Device)
class DeviceAdmin(RemoveOnlyAdmin):
    list_display = ("id", "user", "date_created", "push_token_kind", "push_key_id", "push_token_last_updated_timestamp")
    list_filter = ("push_token_kind", "user__realm")
    search_fields = ("user__delivery_email", "user__full_name")
    list_select_related = ("user",)
    exclude = ("push_key",)
    ordering = ("-date_created",)

    def delete_model(self, request, obj: Device) -> None:
        do_remove_client_device(obj)

    def delete_queryset(self, request, queryset) -> None:
        for device in queryset.select_related("user"):
            do_remove_client_device(device)
