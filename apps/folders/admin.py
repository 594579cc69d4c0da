"""Admin page for channel folders; every change goes through apps.folders.actions (its audit entries
record the staff user as the acting user, and clients hear of it). The list edits each folder's
`order` in place (lower first; the folders are then numbered again from 0). Folders are archived,
never deleted."""

from django import forms
from django.contrib import admin, messages

from apps.core.admin import ModelAdmin
from apps.core.errors import JsonableError
from apps.folders.actions import (
    check_add_channel_folder,
    check_channel_folder_description,
    check_channel_folder_name,
    check_may_archive_channel_folder,
    check_update_channel_folder,
    do_move_channel_folder,
)
from apps.folders.models import ChannelFolder
from apps.folders.selectors import folder_name_in_use


class ChannelFolderForm(forms.ModelForm):
    class Meta:
        model = ChannelFolder
        fields = ("realm", "name", "description", "order", "is_archived")

    def clean(self):
        """Zulip's rules for names and descriptions, and a name no other folder in use has."""
        data = super().clean()
        realm = data.get("realm") or getattr(self.instance, "realm", None)
        try:
            if "name" in data:
                data["name"] = check_channel_folder_name(data["name"])
                archived = data.get("is_archived", self.instance.is_archived)
                existing = self.instance if self.instance.pk else None
                if realm is not None and not archived and folder_name_in_use(realm, data["name"], exclude=existing):
                    raise JsonableError("Channel folder name already in use")
            if "description" in data:
                data["description"] = check_channel_folder_description(data["description"])
            if self.instance.pk and data.get("is_archived") and not self.instance.is_archived:
                check_may_archive_channel_folder(self.instance)
        except JsonableError as exc:
            raise forms.ValidationError(exc.msg) from None
        return data


@admin.register(ChannelFolder)
class ChannelFolderAdmin(ModelAdmin):
    form = ChannelFolderForm
    list_display = ("name", "realm", "order", "is_archived", "creator", "date_created")
    list_editable = ("order",)
    list_filter = ("realm", "is_archived")
    list_select_related = ("realm", "creator")
    search_fields = ("name", "description", "realm__string_id")
    ordering = ("realm", "order", "id")
    readonly_fields = ("rendered_description", "creator", "date_created")
    actions = ("archive", "unarchive")

    def get_readonly_fields(self, request, obj=None):
        # A folder stays in its organization; its order is changed on the list.
        return (*self.readonly_fields, "realm", "order") if obj is not None else (*self.readonly_fields, "order")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj: ChannelFolder, form, change: bool) -> None:
        data = form.cleaned_data
        if not change:
            folder = check_add_channel_folder(
                data["realm"], name=data["name"], description=data["description"], acting_user=request.user
            )
            if data.get("is_archived"):
                check_update_channel_folder(folder, is_archived=True, acting_user=request.user)
            obj.pk = obj.id = folder.id
            return
        folder = ChannelFolder.objects.get(id=obj.id)
        if set(form.changed_data) == {"order"}:
            do_move_channel_folder(folder, data["order"], acting_user=request.user)
            return
        check_update_channel_folder(
            folder,
            name=data["name"] if "name" in form.changed_data else None,
            description=data["description"] if "description" in form.changed_data else None,
            is_archived=data["is_archived"] if "is_archived" in form.changed_data else None,
            acting_user=request.user,
        )

    @admin.action(description="Archive the selected folders")
    def archive(self, request, queryset):
        self._set_archived(request, queryset, True, "Archived", "Not archived, channels in them")

    @admin.action(description="Unarchive the selected folders")
    def unarchive(self, request, queryset):
        self._set_archived(request, queryset, False, "Unarchived", "Not unarchived, name in use")

    def _set_archived(self, request, queryset, archived: bool, done_label: str, refused_label: str) -> None:
        """Each selected folder through the action; those it refuses are named."""
        done, refused = 0, []
        for folder in queryset.filter(is_archived=not archived):
            try:
                check_update_channel_folder(folder, is_archived=archived, acting_user=request.user)
            except JsonableError:
                refused.append(folder.name)
                continue
            done += 1
        self.message_user(request, f"{done_label} {done} folder(s).", messages.SUCCESS)
        if refused:
            self.message_user(request, f"{refused_label}: {', '.join(refused)}", messages.ERROR)
