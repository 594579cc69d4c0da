"""What the apps' Django admin pages share."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """A page to look at rows, never to add, change or delete them (changes go through the API or
    the actions, which tell clients and the audit log)."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
