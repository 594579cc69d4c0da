"""What the apps' Django admin pages share."""

import functools

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.template.response import TemplateResponse


class ModelAdmin(admin.ModelAdmin):
    """Every Parley admin page's base: Django's, with the rows an action is asked for checked first
    (Django's own lets a forged `_selected_action` that is not an id fail the query: a 500)."""

    def response_action(self, request, queryset):
        pk = self.model._meta.pk
        try:
            for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME):
                pk.run_validators(pk.to_python(value))
        except ValidationError:
            self.message_user(request, "The rows chosen are not rows of this list.", messages.ERROR)
            return None  # Django then shows the list again
        return super().response_action(request, queryset)


class ReadOnlyAdmin(ModelAdmin):
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
