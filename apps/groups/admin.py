"""Admin pages for user groups; every change goes through apps.groups.actions (its audit entries
record the staff user as the acting user).

Groups are created through the API (they need a creator of their organization) and deactivated,
never deleted. System groups follow roles: they are shown read-only.
"""

import django.contrib.auth.admin  # noqa: F401 (see the end)
from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import Group as AuthGroup
from django.db.models import Count, Q

from apps.core.admin import ModelAdmin
from apps.core.errors import JsonableError
from apps.groups.actions.groups import (
    check_user_group_name,
    check_user_group_name_available,
    do_deactivate_user_group,
    do_reactivate_user_group,
    do_update_user_group_description,
    do_update_user_group_name,
)
from apps.groups.actions.members import (
    do_add_user_group_members,
    do_add_user_group_subgroups,
    do_remove_user_group_members,
    do_remove_user_group_subgroups,
)
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import REALM_SETTINGS, GroupGroupMembership, UserGroup, UserGroupMembership
from apps.groups.selectors import access_group_setting_value, deactivation_objections, recursive_subgroup_ids
from apps.realms.admin import EDITABLE, RealmAdmin, RealmForm
from apps.realms.models import Realm
from apps.users.models import User


def _group_of_change_page(request) -> UserGroup:
    """The group whose change page is shown or saved: inline choices come from its organization
    (an unsaved group, which has none, offers no choice)."""
    match = request.resolver_match
    object_id = match.kwargs.get("object_id", "") if match else ""
    group = UserGroup.objects.filter(id=object_id).first() if object_id.isascii() and object_id.isdigit() else None
    return group if group is not None else UserGroup(realm_id=None)


class MembersInline(admin.TabularInline):
    model = UserGroupMembership
    fields = ("user",)
    extra = 0
    verbose_name = "direct member"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            realm_id = _group_of_change_page(request).realm_id
            # Not the server's own bots: they are in no group (the API refuses them too).
            people = User.objects.filter(realm_id=realm_id, is_active=True).exclude(User.SYSTEM_BOTS)
            kwargs["queryset"] = people.order_by("full_name")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class SubgroupsFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        chosen = [f.cleaned_data["subgroup"] for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        if chosen and self.instance.id in recursive_subgroup_ids([g.id for g in chosen]):
            raise forms.ValidationError(
                f"User group {self.instance.id} is already a subgroup of one of the passed subgroups."
            )


class SubgroupsInline(admin.TabularInline):
    model = GroupGroupMembership
    formset = SubgroupsFormSet
    fk_name = "supergroup"
    fields = ("subgroup",)
    extra = 0
    verbose_name = "direct subgroup"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "subgroup":
            group = _group_of_change_page(request)
            choices = UserGroup.objects.filter(realm_id=group.realm_id, name__isnull=False, deactivated=False)
            kwargs["queryset"] = choices.exclude(id=group.id).order_by("name")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class UserGroupForm(forms.ModelForm):
    class Meta:
        model = UserGroup
        fields = ("name", "description")

    def clean_name(self):
        """Zulip's rules for names, and a name no other group of the organization has."""
        try:
            name = check_user_group_name(self.cleaned_data["name"])
            check_user_group_name_available(self.instance.realm, name, exclude=self.instance)
        except JsonableError as exc:
            raise forms.ValidationError(exc.msg) from None
        return name


@admin.register(UserGroup)
class UserGroupAdmin(ModelAdmin):
    form = UserGroupForm
    list_display = ("name", "realm", "is_system_group", "deactivated", "direct_member_count", "date_created")
    list_filter = ("realm", "is_system_group", "deactivated")
    list_select_related = ("realm",)
    search_fields = ("name", "description", "realm__string_id")
    readonly_fields = ("realm", "is_system_group", "deactivated", "creator", "date_created")
    fields = ("realm", "name", "description", "is_system_group", "deactivated", "creator", "date_created")
    inlines = (MembersInline, SubgroupsInline)
    actions = ("deactivate", "reactivate")

    def get_queryset(self, request):
        # Anonymous groups are setting values, shown with the settings that use them, not here.
        named = super().get_queryset(request).filter(name__isnull=False)
        return named.annotate(_members=Count("memberships", filter=Q(memberships__user__is_active=True)))

    @admin.display(description="direct members", ordering="_members")
    def direct_member_count(self, group: UserGroup) -> int:
        return group._members

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.is_system_group:
            return False  # kept in step with roles; change a user's role instead
        return super().has_change_permission(request, obj)

    def save_model(self, request, obj: UserGroup, form, change: bool) -> None:
        group = UserGroup.objects.select_related("realm").get(id=obj.id)
        if "name" in form.changed_data:
            do_update_user_group_name(group, form.cleaned_data["name"], acting_user=request.user)
        if "description" in form.changed_data:
            do_update_user_group_description(group, form.cleaned_data["description"], acting_user=request.user)

    def save_formset(self, request, form, formset, change: bool) -> None:
        """The inline rows' additions, changes and deletions become the actions' additions and
        removals (with their events); rows are never saved directly."""
        group = UserGroup.objects.get(id=form.instance.id)
        field = "user" if formset.model is UserGroupMembership else "subgroup"
        links = {link.pk: getattr(link, field) for link in formset.queryset}
        final = set(links.values())
        for row in formset.forms:
            if not row.cleaned_data:
                continue  # an empty extra row
            final.discard(links.get(row.instance.pk))
            if not row.cleaned_data.get("DELETE"):
                final.add(row.cleaned_data[field])
        final.discard(None)
        added = sorted(final - set(links.values()), key=lambda item: item.id)
        removed = sorted(set(links.values()) - final, key=lambda item: item.id)
        if field == "user":
            if added:
                do_add_user_group_members(group, added, acting_user=request.user)
            if removed:
                do_remove_user_group_members(group, removed, acting_user=request.user)
        else:
            if added:
                do_add_user_group_subgroups(group, added, acting_user=request.user)
            if removed:
                do_remove_user_group_subgroups(group, removed, acting_user=request.user)
        # What the admin's change message reads after a formset's save().
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

    @admin.action(description="Deactivate the selected groups")
    def deactivate(self, request, queryset):
        done, refused = 0, []
        for group in queryset.filter(deactivated=False, is_system_group=False):
            if deactivation_objections(group):
                refused.append(group.name)
                continue
            do_deactivate_user_group(group, acting_user=request.user)
            done += 1
        self.message_user(request, f"Deactivated {done} group(s).", messages.SUCCESS)
        if refused:
            self.message_user(request, f"Not deactivated, still in use: {', '.join(refused)}", messages.ERROR)

    @admin.action(description="Reactivate the selected groups")
    def reactivate(self, request, queryset):
        groups = list(queryset.filter(deactivated=True))
        for group in groups:
            do_reactivate_user_group(group, acting_user=request.user)
        self.message_user(request, f"Reactivated {len(groups)} group(s).", messages.SUCCESS)


# --- the organization's group settings, on apps.realms' organization admin ------------------------


class RealmWithGroupSettingsForm(RealmForm):
    class Meta(RealmForm.Meta):
        fields = (*EDITABLE, *REALM_SETTINGS)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        groups = UserGroup.objects.filter(realm_id=self.instance.id, name__isnull=False, deactivated=False)
        for name in REALM_SETTINGS:
            self.fields[name].queryset = groups.order_by("-is_system_group", "name")
            self.fields[name].required = True

    def clean(self):
        """Group settings are checked as the action checks them (role:everyone is refused, ...)."""
        cleaned = super().clean()
        for name, setting in REALM_SETTINGS.items():
            group = cleaned.get(name)
            if group is None:
                continue
            try:
                access_group_setting_value(self.instance, name, group.id, setting=setting)
            except JsonableError as exc:
                self.add_error(name, exc.msg)
        return cleaned


class RealmWithGroupSettingsAdmin(RealmAdmin):
    form = RealmWithGroupSettingsForm
    fields = ("string_id", "url", *EDITABLE, *REALM_SETTINGS, "allowed_domains", "date_created", "deactivated")

    def save_model(self, request, obj: Realm, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        realm = Realm.objects.get(id=obj.id)
        for name in REALM_SETTINGS:
            if name in form.changed_data:
                group = form.cleaned_data[name]
                do_change_realm_permission_group_setting(realm, name, group.id, acting_user=request.user)


admin.site.unregister(Realm)
admin.site.register(Realm, RealmWithGroupSettingsAdmin)

# Django's own permission groups are not Parley's: its user groups are above (the ops QA pass: both
# listed). Registered by django.contrib.auth's admin, imported here first so that it is unregistered.
admin.site.unregister(AuthGroup)
