from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q

from apps.core.admin import ModelAdmin, ReadOnlyAdmin, confirmed_action
from apps.core.errors import JsonableError
from apps.realms.actions import (
    CHANGEABLE_SETTINGS,
    check_realm_name,
    do_change_realm_settings,
    do_set_realm_deactivated,
)
from apps.realms.models import Realm, RealmAuditLog, RealmDomain
from apps.realms.serializers import CHANNEL_SETTINGS

# What staff edit here: every setting the action changes.
EDITABLE = CHANGEABLE_SETTINGS


class RealmForm(forms.ModelForm):
    class Meta:
        model = Realm
        fields = EDITABLE

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The moderation request channel: one of the organization's private, active channels; the
        # others: any of its active channels.
        for name in CHANNEL_SETTINGS:
            channel = self.fields[name]
            channel.queryset = channel.queryset.filter(realm_id=self.instance.id, deactivated=False)
        channel = self.fields["moderation_request_channel"]
        channel.queryset = channel.queryset.filter(invite_only=True)

    def clean_name(self):
        try:
            return check_realm_name(self.cleaned_data["name"])
        except JsonableError as exc:
            raise forms.ValidationError(exc.msg) from None

    def clean_welcome_message_custom_text(self):
        text = self.cleaned_data["welcome_message_custom_text"]
        limit = Realm.MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH
        if len(text) > limit:
            raise forms.ValidationError(f"At most {limit} characters.")
        return text


@admin.register(Realm)
class RealmAdmin(ModelAdmin):
    """Organizations are created with `manage.py create_realm` (they need an owner) and never deleted.

    apps.groups registers this admin again with the organization's group settings (who may create
    channels, ...), which belong to it."""

    form = RealmForm
    list_display = ("display_string_id", "name", "url", "active_users", "deactivated", "date_created")
    list_filter = ("deactivated", "password_auth_enabled")
    search_fields = ("string_id", "name")
    readonly_fields = ("string_id", "url", "date_created", "deactivated", "allowed_domains")
    fields = ("string_id", "url", *EDITABLE, "allowed_domains", "date_created", "deactivated")
    actions = ("deactivate", "reactivate")
    date_hierarchy = "date_created"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(_active_users=Count("users", filter=Q(users__is_active=True, users__bot_type__isnull=True)))
        )

    @admin.display(description="string id", ordering="string_id")
    def display_string_id(self, realm: Realm) -> str:
        return realm.string_id or "(default)"

    @admin.display(description="allowed email domains")
    def allowed_domains(self, realm: Realm) -> str:
        """Its owners change them (/realm/domains); shown here."""
        return ", ".join(str(row) for row in RealmDomain.objects.filter(realm=realm).order_by("id")) or "-"

    @admin.display(description="active users", ordering="_active_users")
    def active_users(self, realm: Realm) -> int:
        return realm._active_users

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj: Realm, form, change: bool) -> None:
        realm = Realm.objects.get(id=obj.id)
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in EDITABLE}
        if changes:
            do_change_realm_settings(realm, changes, acting_user=request.user)

    @confirmed_action(
        description="Deactivate the selected organizations",
        consequence="Nobody in them can log in or use the API until they are reactivated.",
    )
    def deactivate(self, request, queryset):
        for realm in queryset:
            do_set_realm_deactivated(realm, True, acting_user=request.user)
        self.message_user(request, f"Deactivated {queryset.count()} organization(s).", messages.SUCCESS)

    @admin.action(description="Reactivate the selected organizations")
    def reactivate(self, request, queryset):
        for realm in queryset:
            do_set_realm_deactivated(realm, False, acting_user=request.user)
        self.message_user(request, f"Reactivated {queryset.count()} organization(s).", messages.SUCCESS)


@admin.register(RealmAuditLog)
class RealmAuditLogAdmin(ReadOnlyAdmin):
    """The audit log, to read and filter: entries are written by the actions and never edited."""

    list_display = ("event_time", "realm", "event_type", "acting_user", "modified", "extra_data")
    list_filter = ("event_type", "realm", "event_time")
    list_select_related = ("realm", "acting_user", "modified_user", "modified_stream", "modified_user_group")
    search_fields = (
        "acting_user__delivery_email",
        "acting_user__full_name",
        "modified_user__delivery_email",
        "modified_user__full_name",
        "modified_stream__name",
        "modified_user_group__name",
    )
    date_hierarchy = "event_time"
    ordering = ("-event_time", "-id")

    @admin.display(description="changed")
    def modified(self, entry: RealmAuditLog) -> str:
        return str(entry.modified_user or entry.modified_stream or entry.modified_user_group or "")
