"""Admin pages for users, bots, custom profile fields and organizations' defaults for new users;
every change goes through the actions."""

import json

from django import forms
from django.contrib import admin, messages

from apps.core.admin import ModelAdmin, ReadOnlyAdmin, confirmed_action
from apps.core.errors import JsonableError
from apps.users.actions.activation import do_deactivate_user, do_reactivate_user
from apps.users.actions.avatars import do_change_avatar
from apps.users.actions.bot_services import do_regenerate_service_token, do_update_bot_service
from apps.users.actions.create_user import check_full_name, check_service_url
from apps.users.actions.profile_fields import (
    check_add_realm_custom_profile_field,
    check_profile_field_definition,
    check_update_realm_custom_profile_field,
    do_remove_realm_custom_profile_field,
)
from apps.users.actions.realm_defaults import check_update_realm_user_defaults
from apps.users.actions.roles import do_change_user_role
from apps.users.actions.user_settings import (
    do_change_full_name,
    do_regenerate_api_key,
    do_set_can_change_user_emails,
    do_set_can_create_users,
    do_set_user_staff,
)
from apps.users.bots import BOT_DEFAULTS
from apps.users.errors import LastOwnerRoleError
from apps.users.models import (
    AvatarSource,
    Bot,
    BotService,
    CustomProfileField,
    EmailChangeRequest,
    RealmUserDefault,
    Role,
    User,
)
from apps.users.selectors import api_email, is_last_owner
from apps.users.settings_models import USER_SETTINGS
from apps.users.settings_values import NOTIFICATION_SOUNDS, available_languages


def as_validation_error(exc: JsonableError) -> forms.ValidationError:
    return forms.ValidationError(exc.msg)


class UserForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("full_name", "role", "can_change_user_emails", "can_create_users", "is_staff")

    def clean_full_name(self):
        name = self.cleaned_data["full_name"]
        if self.instance.pk is not None and name == self.instance.full_name:
            return name  # unchanged: older accounts keep names no longer allowed
        try:
            return check_full_name(name)
        except JsonableError as exc:
            raise as_validation_error(exc) from None

    def clean_role(self):
        role = self.cleaned_data["role"]
        if role != Role.OWNER and is_last_owner(self.instance):
            raise forms.ValidationError(LastOwnerRoleError.MSG)
        return role


class AccountAdmin(ModelAdmin):
    """What the users and bots pages share: list columns, the actions, saving through actions."""

    form = UserForm
    list_select_related = ("realm", "bot_owner")
    search_fields = ("full_name", "delivery_email", "realm__string_id")
    actions = ("deactivate", "reactivate", "rotate_api_key", "remove_avatar")
    readonly_fields = (
        "realm",
        "uuid",
        "delivery_email",
        "api_email",
        "api_key_ending",
        "date_joined",
        "last_login",
        "is_active",
        "avatar_source",
    )

    def has_add_permission(self, request) -> bool:
        return False  # manage.py create_user: a new account needs checks and prints its key

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # accounts are deactivated, never deleted

    @admin.display(description="API email")
    def api_email(self, user: User) -> str:
        return api_email(user)

    @admin.display(description="API key")
    def api_key_ending(self, user: User) -> str:
        """Its last characters, to tell which key a client has: the key itself acts as its person
        through the API, and is theirs to see (their account page), not the staff's (the operator QA
        pass: every account's key could be copied here)."""
        if user.is_system_bot:
            whose = "the server's own bot: nobody's to use"
        elif user.is_bot:
            whose = "its owner gets it with GET /bots/{id}/api_key"
        else:
            whose = "they see it on their account page"
        return f"…{user.api_key[-4:]} ({whose}; rotate it with the list's action)"

    def save_model(self, request, obj: User, form, change: bool) -> None:
        user = User.objects.select_related("realm").get(id=obj.id)
        data = form.cleaned_data
        if "full_name" in form.changed_data:
            do_change_full_name(user, data["full_name"], acting_user=request.user)
        if "role" in form.changed_data:
            do_change_user_role(user, data["role"], acting_user=request.user)
        if "can_change_user_emails" in form.changed_data:
            do_set_can_change_user_emails(user, data["can_change_user_emails"], acting_user=request.user)
        if "can_create_users" in form.changed_data:
            do_set_can_create_users(user, data["can_create_users"], acting_user=request.user)
        if "is_staff" in form.changed_data:
            do_set_user_staff(user, data["is_staff"], acting_user=request.user)

    @confirmed_action(
        description="Deactivate the selected accounts (and the bots they own)",
        consequence="They are logged out and their API keys stop working at once, and the bots they own are deactivated"
        " with them. They can be reactivated later.",
    )
    def deactivate(self, request, queryset):
        done, refused = 0, []
        for user in queryset.filter(is_active=True):
            try:
                done += len(do_deactivate_user(user, acting_user=request.user))
            except JsonableError:
                refused.append(user.delivery_email)
        self.message_user(request, f"Deactivated {done} account(s).", messages.SUCCESS)
        if refused:
            self.message_user(request, f"Not deactivated, the only owner: {', '.join(refused)}", messages.ERROR)

    @admin.action(description="Reactivate the selected accounts")
    def reactivate(self, request, queryset):
        users = list(queryset.filter(is_active=False))
        for user in users:
            do_reactivate_user(user, acting_user=request.user)
        self.message_user(request, f"Reactivated {len(users)} account(s).", messages.SUCCESS)

    @confirmed_action(
        description="Rotate the API keys of the selected accounts",
        consequence="Their current API keys stop working at once: every client using them (a zuliprc, a bot, the"
        " mobile app) needs the new key.",
    )
    def rotate_api_key(self, request, queryset):
        users = list(queryset)
        for user in users:
            do_regenerate_api_key(user, acting_user=request.user)
        self.message_user(
            request, f"New API keys for {len(users)} account(s); old keys no longer work.", messages.SUCCESS
        )

    @admin.action(description="Remove the uploaded avatars of the selected accounts (back to Gravatar)")
    def remove_avatar(self, request, queryset):
        users = list(queryset.filter(avatar_source=AvatarSource.UPLOADED).select_related("realm"))
        for user in users:
            do_change_avatar(user, AvatarSource.GRAVATAR, acting_user=request.user)
        self.message_user(request, f"Removed {len(users)} uploaded avatar(s).", messages.SUCCESS)


@admin.register(User)
class UserAdmin(AccountAdmin):
    list_display = ("full_name", "delivery_email", "realm", "role", "is_active", "is_staff", "date_joined")
    list_filter = ("realm", "role", "is_active", "is_staff")
    fields = (
        *AccountAdmin.readonly_fields, "full_name", "role", "can_change_user_emails", "can_create_users", "is_staff"
    )  # fmt: skip

    def get_queryset(self, request):
        return super().get_queryset(request).filter(bot_type__isnull=True)


class BotServiceForm(forms.ModelForm):
    base_url = forms.URLField(max_length=2000, assume_scheme="https")

    class Meta:
        model = BotService
        fields = ("base_url", "interface")

    def clean_base_url(self):
        try:
            return check_service_url(self.cleaned_data["base_url"])
        except JsonableError as exc:
            raise as_validation_error(exc) from None


class BotServiceInline(admin.TabularInline):
    """An outgoing-webhook bot's service: its URL and interface are edited here (saved through
    do_update_bot_service); its token is shown, and rotated with the page's action."""

    model = BotService
    form = BotServiceForm
    fields = ("name", "base_url", "interface", "token")
    readonly_fields = ("name", "token")
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class BotForm(UserForm):
    class Meta(UserForm.Meta):
        fields = ("full_name", "role")


@admin.register(Bot)
class BotAdmin(AccountAdmin):
    form = BotForm
    list_display = ("full_name", "delivery_email", "realm", "bot_type", "bot_owner", "is_active", "date_joined")
    list_filter = ("realm", "bot_type", "is_active")
    # Its defaults are its owner's to set (PATCH /bots/{id}): shown here.
    fields = (*AccountAdmin.readonly_fields, "bot_type", "bot_owner", *BOT_DEFAULTS, "full_name", "role")
    readonly_fields = (*AccountAdmin.readonly_fields, "bot_type", "bot_owner", *BOT_DEFAULTS)
    inlines = (BotServiceInline,)
    actions = (*AccountAdmin.actions, "rotate_service_token")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(bot_type__isnull=False)

    def save_formset(self, request, form, formset, change: bool) -> None:
        if formset.model is not BotService:
            return super().save_formset(request, form, formset, change)
        # What the admin's change message reads (the formset's own save would set them).
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for service_form in formset.forms:
            if service_form.instance.pk and service_form.has_changed():
                data = service_form.cleaned_data
                service = BotService.objects.get(id=service_form.instance.pk)
                do_update_bot_service(
                    service, base_url=data["base_url"], interface=data["interface"], acting_user=request.user
                )
                formset.changed_objects.append((service, service_form.changed_data))
        return None

    @confirmed_action(
        description="Rotate the outgoing-webhook tokens of the selected bots",
        consequence="Their servers refuse what Parley sends them until they are given the new tokens.",
    )
    def rotate_service_token(self, request, queryset):
        services = list(BotService.objects.filter(bot__in=queryset))
        for service in services:
            do_regenerate_service_token(service, acting_user=request.user)
        self.message_user(
            request,
            f"New tokens for {len(services)} service(s); give each to its service (zulip-botserver's token).",
            messages.SUCCESS,
        )


class CustomProfileFieldForm(forms.ModelForm):
    field_data = forms.JSONField(required=False, help_text="Options of a list field; subtype of an external account.")

    class Meta:
        model = CustomProfileField
        fields = (
            "realm",
            "name",
            "hint",
            "field_type",
            "field_data",
            "display_in_profile_summary",
            "required",
            "editable_by_user",
        )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["field_data"] = json.loads(self.instance.field_data or "{}")
            self.fields["realm"].disabled = True
            self.fields["field_type"].disabled = True

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            check_profile_field_definition(
                data["realm"],
                name=data["name"],
                hint=data.get("hint", ""),
                field_type=data["field_type"],
                field_data=data.get("field_data") or {},
                display_in_profile_summary=data["display_in_profile_summary"],
                exclude=self.instance if self.instance.pk else None,
            )
        except JsonableError as exc:
            raise as_validation_error(exc) from None
        return data


@admin.register(CustomProfileField)
class CustomProfileFieldAdmin(ModelAdmin):
    form = CustomProfileFieldForm
    list_display = (
        "name",
        "realm",
        "field_type",
        "order",
        "required",
        "editable_by_user",
        "display_in_profile_summary",
    )
    list_filter = ("realm", "field_type", "required")
    list_select_related = ("realm",)
    search_fields = ("name", "realm__string_id")

    def save_model(self, request, obj: CustomProfileField, form, change: bool) -> None:
        data = form.cleaned_data
        options = {
            "name": data["name"],
            "hint": data.get("hint", ""),
            "field_data": data.get("field_data") or {},
            "display_in_profile_summary": data["display_in_profile_summary"],
            "required": data["required"],
            "editable_by_user": data["editable_by_user"],
        }
        if change:
            field = CustomProfileField.objects.get(id=obj.id)
            changed = {name: value for name, value in options.items() if name in form.changed_data}
            check_update_realm_custom_profile_field(field, **changed, acting_user=request.user)
        else:
            field = check_add_realm_custom_profile_field(
                data["realm"], field_type=data["field_type"], **options, acting_user=request.user
            )
            obj.pk = field.pk

    def delete_model(self, request, obj: CustomProfileField) -> None:
        do_remove_realm_custom_profile_field(obj, acting_user=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for field in queryset:
            do_remove_realm_custom_profile_field(field, acting_user=request.user)


# The settings an organization's administrators choose for its new users, in declaration order.
DEFAULT_SETTINGS = tuple(name for name, setting in USER_SETTINGS.items() if setting.org_default)


class RealmUserDefaultForm(forms.ModelForm):
    class Meta:
        model = RealmUserDefault
        fields = DEFAULT_SETTINGS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The free-form settings the server offers a list of, as lists.
        self.fields["default_language"] = forms.ChoiceField(choices=sorted(available_languages().items()))
        sounds = [("none", "none"), *((sound, sound) for sound in NOTIFICATION_SOUNDS)]
        self.fields["notification_sound"] = forms.ChoiceField(choices=sounds)

    def clean(self):
        """Each value as PATCH /realm/user_settings_defaults checks it (the setting's declaration)."""
        data = super().clean()
        for name in DEFAULT_SETTINGS:
            if name in data and name not in self.errors:
                try:
                    USER_SETTINGS[name].validate(data[name])
                except JsonableError as exc:
                    self.add_error(name, as_validation_error(exc))
        return data


@admin.register(RealmUserDefault)
class RealmUserDefaultAdmin(ModelAdmin):
    """One row per organization, made with it; never added or deleted here."""

    form = RealmUserDefaultForm
    list_display = ("realm", "default_language", "email_address_visibility", "twenty_four_hour_time", "emojiset")
    list_select_related = ("realm",)
    search_fields = ("realm__string_id", "realm__name")
    readonly_fields = ("realm",)
    fields = ("realm", *DEFAULT_SETTINGS)

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def save_model(self, request, obj: RealmUserDefault, form, change: bool) -> None:
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in DEFAULT_SETTINGS}
        check_update_realm_user_defaults(obj.realm, changes, acting_user=request.user)


@admin.register(EmailChangeRequest)
class EmailChangeRequestAdmin(ReadOnlyAdmin):
    """Email changes users asked for (PATCH /settings), to answer "I never got the link"; read-only,
    and without the links' secrets."""

    list_display = ("user", "old_email", "new_email", "created", "status")
    list_filter = ("status",)
    list_select_related = ("user",)
    search_fields = ("old_email", "new_email", "user__full_name")
    fields = ("user", "old_email", "new_email", "created", "status")
    readonly_fields = fields
    date_hierarchy = "created"
