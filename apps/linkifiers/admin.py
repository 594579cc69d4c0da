"""Admin pages for linkifiers: listed in the order they apply, checked by the code the API checks
them with (apps.linkifiers.patterns), and added, changed, moved and removed through the actions
(audit log, events, the cache)."""

import contextlib

from django import forms
from django.contrib import admin

from apps.core.admin import ModelAdmin, ReadOnlyAdmin
from apps.core.errors import JsonableError
from apps.linkifiers.actions import (
    DUPLICATE_PATTERN,
    check_reorder_linkifiers,
    do_add_linkifier,
    do_remove_linkifier,
    do_update_linkifier,
)
from apps.linkifiers.models import Linkifier, Playground
from apps.linkifiers.patterns import LinkifierFields, LinkifierInvalid, check_linkifier_fields
from apps.linkifiers.playgrounds import do_remove_playground
from apps.linkifiers.selectors import linkifiers_in_order, pattern_in_use


class LinkifierForm(forms.ModelForm):
    alternative_url_templates = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Extra URL templates, one per line, used only to turn pasted URLs back into the pattern's text.",
    )
    position = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Where it applies among the organization's linkifiers (1: first). Empty: last, or where it is.",
    )

    class Meta:
        model = Linkifier
        fields = ("realm", "pattern", "url_template", "example_input", "reverse_template")
        help_texts = {
            "pattern": r"An RE2 regular expression; its named groups fill the URL template: #(?P<id>[0-9]+)",
            "url_template": "An RFC 6570 URL template using every group: https://github.com/org/repo/issues/{id}",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.initial["alternative_url_templates"] = "\n".join(self.instance.alternative_url_templates)
            ids = [linkifier.id for linkifier in linkifiers_in_order(self.instance.realm_id)]
            self.initial["position"] = ids.index(self.instance.id) + 1

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        fields = LinkifierFields(
            pattern=data.get("pattern") or "",
            url_template=data.get("url_template") or "",
            example_input=data.get("example_input"),
            reverse_template=data.get("reverse_template"),
            alternative_url_templates=tuple(
                line for line in data["alternative_url_templates"].splitlines() if line.strip()
            ),
        )
        try:
            data["checked"] = check_linkifier_fields(fields)
        except LinkifierInvalid as invalid:
            for name, messages in invalid.errors.items():
                self.add_error(None if name == "__all__" else name, messages)
            return data
        realm = data.get("realm") or self.instance.realm
        if pattern_in_use(realm, data["checked"].pattern, exclude=self.instance if self.instance.pk else None):
            self.add_error("pattern", DUPLICATE_PATTERN)
        return data


@admin.register(Linkifier)
class LinkifierAdmin(ModelAdmin):
    form = LinkifierForm
    list_display = ("pattern", "url_template", "realm", "order")
    list_filter = ("realm",)
    list_select_related = ("realm",)
    search_fields = ("pattern", "url_template", "realm__string_id")
    ordering = ("realm", "order", "id")
    fields = (
        "realm",
        "pattern",
        "url_template",
        "example_input",
        "reverse_template",
        "alternative_url_templates",
        "position",
    )

    def get_readonly_fields(self, request, obj=None):
        return ("realm",) if obj is not None else ()

    def save_model(self, request, obj: Linkifier, form, change: bool) -> None:
        checked = form.cleaned_data["checked"]
        if change:
            do_update_linkifier(obj, fields=checked, acting_user=request.user)
        else:
            obj.pk = do_add_linkifier(obj.realm, fields=checked, acting_user=request.user).pk
        position = form.cleaned_data.get("position")
        if position is not None:
            ids = [linkifier.id for linkifier in linkifiers_in_order(obj.realm_id) if linkifier.id != obj.pk]
            ids.insert(position - 1, obj.pk)
            check_reorder_linkifiers(obj.realm, ordered_ids=ids, acting_user=request.user)

    def delete_model(self, request, obj: Linkifier) -> None:
        do_remove_linkifier(obj, acting_user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for linkifier in queryset.select_related("realm"):
            do_remove_linkifier(linkifier, acting_user=request.user)


@admin.register(Playground)
class PlaygroundAdmin(ReadOnlyAdmin):
    """Code playgrounds: listed, and removed through the action (audit log, events); added with the
    API's POST /realm/playgrounds."""

    list_display = ("name", "pygments_language", "url_template", "realm")
    list_filter = ("realm",)
    list_select_related = ("realm",)
    search_fields = ("name", "pygments_language", "realm__string_id")
    ordering = ("realm", "pygments_language", "name")
    readonly_fields = ("realm", "name", "pygments_language", "url_template")
    actions = ("remove",)

    @admin.action(description="Remove the selected playgrounds")
    def remove(self, request, queryset):
        playgrounds = list(queryset.select_related("realm"))
        for playground in playgrounds:
            with contextlib.suppress(JsonableError):  # removed meanwhile
                do_remove_playground(playground, acting_user=request.user)
        self.message_user(request, f"Removed {len(playgrounds)} playground(s).")
