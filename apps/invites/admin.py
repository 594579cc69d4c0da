"""Admin pages for invitation links: created (for any organization, as an operator: no role or
setting limits them) and revoked through the actions; never edited or deleted (the audit log names
them). A new link is shown once it is created, and on its page."""

import contextlib

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html

from apps.core.admin import ModelAdmin, ReadOnlyAdmin, confirmed_action
from apps.core.errors import JsonableError
from apps.groups.models import UserGroup
from apps.invites.actions.email_invitations import do_revoke_email_invitation
from apps.invites.actions.invites import (
    check_invite_lifetime,
    check_welcome_message_custom_text,
    do_create_multiuse_invite,
    do_revoke_multiuse_invite,
)
from apps.invites.errors import InvitationAlreadyRevokedError, InvitationNotFoundError
from apps.invites.models import EmailInvitation, MultiuseInvite
from apps.invites.serializers import DEFAULT_INVITE_EXPIRES_IN_MINUTES
from apps.realms.models import Realm
from apps.subscriptions.models import Stream


class MultipleChoice(forms.ModelMultipleChoiceField):
    # A box as wide as a name even when there is nothing to choose (the newcomer QA pass: a sliver).
    widget = forms.SelectMultiple(attrs={"size": 6, "style": "min-width: 20em"})


class ChannelChoice(MultipleChoice):
    def label_from_instance(self, obj: Stream) -> str:
        return f"#{obj.name} ({obj.realm})"


class GroupChoice(MultipleChoice):
    def label_from_instance(self, obj: UserGroup) -> str:
        return f"{obj.name} ({obj.realm})"


class CreateInviteForm(forms.ModelForm):
    expires_in_minutes = forms.IntegerField(
        required=False,
        initial=DEFAULT_INVITE_EXPIRES_IN_MINUTES,
        help_text="Empty: the link never expires. 14400 minutes are 10 days.",
    )
    streams = ChannelChoice(
        queryset=Stream.objects.filter(deactivated=False).select_related("realm").order_by("realm", "name"),
        required=False,
        label="Channels",
        help_text="Channels of the organization the new users join.",
    )
    groups = GroupChoice(
        queryset=UserGroup.objects.filter(name__isnull=False, is_system_group=False, deactivated=False)
        .select_related("realm")
        .order_by("realm", "name"),
        required=False,
        help_text="Groups of the organization the new users join (system groups follow roles).",
    )

    class Meta:
        model = MultiuseInvite
        fields = ("realm", "invited_as", "streams", "groups", "welcome_message_custom_text")

    def clean(self):
        data = super().clean()
        realm = data.get("realm")
        for name in ("streams", "groups"):
            foreign = [str(item) for item in data.get(name) or () if realm is not None and item.realm_id != realm.id]
            if foreign:
                self.add_error(name, f"Not of the organization {realm}: {', '.join(foreign)}")
        try:
            check_invite_lifetime(data.get("expires_in_minutes"))
        except JsonableError as exc:
            self.add_error("expires_in_minutes", exc.msg)
        # A blank text means "the organization's default", as an absent parameter does in the API.
        data["welcome_message_custom_text"] = data.get("welcome_message_custom_text") or None
        try:
            check_welcome_message_custom_text(data["welcome_message_custom_text"])
        except JsonableError as exc:
            self.add_error("welcome_message_custom_text", exc.msg)
        return data


@admin.register(MultiuseInvite)
class MultiuseInviteAdmin(ModelAdmin):
    list_display = ("id", "realm", "invited_as", "referred_by", "created", "expiry_date", "status")
    list_filter = ("realm", "invited_as", "revoked")
    list_select_related = ("realm", "referred_by")
    search_fields = ("realm__string_id", "referred_by__delivery_email")
    date_hierarchy = "created"
    ordering = ("-created", "-id")
    actions = ("revoke",)
    readonly_fields = (
        "realm",
        "link",
        "invited_as",
        "referred_by",
        "streams",
        "groups",
        "include_realm_default_subscriptions",
        "welcome_message_custom_text",
        "created",
        "expiry_date",
        "status",
    )

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = CreateInviteForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_changeform_initial_data(self, request):
        # The organization, when there is only one (the newcomer QA pass: saving failed until picked).
        initial = super().get_changeform_initial_data(request)
        realms = list(Realm.objects.values_list("id", flat=True)[:2])
        if len(realms) == 1:
            initial.setdefault("realm", realms[0])
        return initial

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("realm", "invited_as", "expires_in_minutes", "streams", "groups", "welcome_message_custom_text")
        return self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.readonly_fields

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="status")
    def status(self, invite: MultiuseInvite) -> str:
        if invite.revoked:
            return "revoked"
        return "expired" if invite.is_expired() else "open"

    @admin.display(description="link")
    def link(self, invite: MultiuseInvite) -> str:
        return format_html('<a href="{0}">{0}</a>', invite.link_url)

    def save_model(self, request, obj: MultiuseInvite, form, change: bool) -> None:
        data = form.cleaned_data
        invite = do_create_multiuse_invite(
            data["realm"],
            invited_as=data["invited_as"],
            expires_in_minutes=data["expires_in_minutes"],
            streams=list(data["streams"]),
            groups=list(data["groups"]),
            welcome_message_custom_text=data["welcome_message_custom_text"],
            acting_user=request.user,
        )
        obj.pk = invite.pk
        self.message_user(request, f"Invitation link: {invite.link_url}", messages.SUCCESS)

    def save_related(self, request, form, formsets, change: bool) -> None:
        """The action set the channels and groups."""

    @confirmed_action(
        description="Revoke the selected invitation links",
        consequence="The links stop working for good: whoever was given them needs a new one.",
    )
    def revoke(self, request, queryset):
        invites = list(queryset.filter(revoked=False))
        for invite in invites:
            with contextlib.suppress(InvitationAlreadyRevokedError):  # revoked meanwhile
                do_revoke_multiuse_invite(invite, acting_user=request.user)
        self.message_user(request, f"Revoked {len(invites)} invitation link(s).", messages.SUCCESS)


@admin.register(EmailInvitation)
class EmailInvitationAdmin(ReadOnlyAdmin):
    """Invitations sent by email: listed, searched and revoked (they are sent through the API)."""

    list_display = ("id", "email", "realm", "invited_as", "referred_by", "created", "expiry_date", "state")
    list_filter = ("realm", "invited_as", "status")
    list_select_related = ("realm", "referred_by")
    search_fields = ("email", "realm__string_id", "referred_by__delivery_email")
    date_hierarchy = "created"
    ordering = ("-created", "-id")
    actions = ("revoke",)
    readonly_fields = (
        "realm",
        "email",
        "invited_as",
        "referred_by",
        "streams",
        "groups",
        "include_realm_default_subscriptions",
        "notify_referrer_on_join",
        "welcome_message_custom_text",
        "created",
        "expiry_date",
        "last_sent",
        "state",
        "created_user",
    )
    fields = readonly_fields

    @admin.display(description="status")
    def state(self, invite: EmailInvitation) -> str:
        if invite.status == EmailInvitation.Status.PENDING and invite.is_expired():
            return "expired"
        return invite.get_status_display()

    @confirmed_action(
        description="Revoke the selected invitations",
        consequence="Their links stop working for good: whoever was invited needs a new invitation.",
    )
    def revoke(self, request, queryset):
        invites = list(queryset.filter(status=EmailInvitation.Status.PENDING).select_related("realm"))
        for invite in invites:
            with contextlib.suppress(InvitationNotFoundError):  # used or revoked meanwhile
                do_revoke_email_invitation(invite, acting_user=request.user)
        self.message_user(request, f"Revoked {len(invites)} invitation(s).", messages.SUCCESS)
