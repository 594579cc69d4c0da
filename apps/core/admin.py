"""What the apps' Django admin pages share."""

import functools

from django.contrib import admin
from django.contrib.admin import helpers
from django.template.response import TemplateResponse


class ReadOnlyAdmin(admin.ModelAdmin):
    """A page to look at rows, never to add, change or delete them (changes go through the API or
    the actions, which tell clients and the audit log)."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def confirmed_action(*, description: str, consequence: str):
    """An admin action that cannot be taken back by a click (deactivating, deleting, rotating keys):
    as Django's own delete, it first shows the rows chosen and what will happen, and acts once that
    page's "Yes" is pressed. `consequence` is that page's sentence."""

    def decorate(function):
        @admin.action(description=description)
        @functools.wraps(function)
        def action(modeladmin, request, queryset):
            if request.POST.get("confirmed") == "yes":
                return function(modeladmin, request, queryset)
            opts = modeladmin.model._meta
            context = {
                **modeladmin.admin_site.each_context(request),
                "title": "Are you sure?",
                "opts": opts,
                "queryset": queryset,
                "action": function.__name__,
                "description": description,
                "consequence": consequence,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/confirm_action.html", context)

        return action

    return decorate
