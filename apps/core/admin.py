"""What the apps' Django admin pages share."""

import functools

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.template.response import TemplateResponse
from django_tasks.base import TaskResultStatus
from django_tasks_db.admin import DBTaskResultAdmin
from django_tasks_db.models import DBTaskResult

from apps.core.tasks import is_retried_result

# Fields holding what acts as someone (an API key, a password's hash, an invitation's or an email
# change's key, a push device's token or key): never shown whole, and never filtered on either.
SECRET_FIELDS = frozenset({"password", "api_key", "key", "key_digest", "token", "push_key"})


class ModelAdmin(admin.ModelAdmin):
    """Every Parley admin page's base: Django's, with the rows an action is asked for checked first
    (Django's own lets a forged `_selected_action` that is not an id fail the query: a 500), and no
    list filtered on a secret field."""

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        # Django allows any lookup on a model's own fields: `?api_key__startswith=a` counted the rows
        # it matched, and a key came out a character at a time (the verify QA pass: 844 requests).
        if SECRET_FIELDS.intersection(lookup.split("__")):
            return False
        return super().lookup_allowed(lookup, value, request)

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


# --- background tasks' results (django-tasks-db's page, with each run's outcome) -------------------

admin.site.unregister(DBTaskResult)


class OutcomeFilter(admin.SimpleListFilter):
    """By what became of a run: "failed" lists the retried runs that failed too (Django's status
    filter calls those SUCCESSFUL)."""

    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return [("failed", "failed"), ("done", "done")]

    def queryset(self, request, queryset):
        retried = Q(status=TaskResultStatus.SUCCESSFUL, return_value__has_key="retry")
        if self.value() == "failed":
            return queryset.filter(retried | Q(status=TaskResultStatus.FAILED))
        if self.value() == "done":
            return queryset.filter(status=TaskResultStatus.SUCCESSFUL).exclude(retried)
        return queryset


@admin.register(DBTaskResult)
class TaskResultAdmin(DBTaskResultAdmin):
    """django-tasks-db's Task Results, with what became of each run: a run of a retried_task that
    failed and queued itself again is SUCCESSFUL to Django (apps/core/tasks.py), and says here that
    it failed, why, and which attempt comes next."""

    list_display = (*DBTaskResultAdmin.list_display[:3], "outcome", *DBTaskResultAdmin.list_display[3:])
    list_filter = (OutcomeFilter, *DBTaskResultAdmin.list_filter)

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        """A result's own page says its outcome too, beside its status (the verify QA pass)."""
        fields = super().get_readonly_fields(request, obj)
        fields.insert(fields.index("status") + 1, "outcome")
        return fields

    @admin.display(description="outcome")
    def outcome(self, result: DBTaskResult) -> str:
        value = result.return_value
        if result.status == TaskResultStatus.SUCCESSFUL and is_retried_result(value):
            return f"failed ({value.get('error', 'no reason kept')}); attempt {value['retry']} queued"
        if result.status == TaskResultStatus.FAILED:
            return f"failed ({result.exception_class_path.rsplit('.', 1)[-1]}): see its traceback"
        return {TaskResultStatus.SUCCESSFUL: "done"}.get(result.status, "-")
