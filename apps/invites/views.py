"""Invitations (/api/v1/invites...): Zulip's invitations by email and reusable invitation links, for
people of the organization (not guests, not bots: Zulip's require_member_or_admin); and the Welcome
Bot's test message (/api/v1/realm/test_welcome_bot_custom_message), for administrators."""

from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsHuman, IsNotGuest, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.invites.actions.email_invitations import (
    check_invite_users,
    do_resend_email_invitation,
    do_revoke_email_invitation,
)
from apps.invites.actions.invites import check_create_multiuse_invite, do_revoke_multiuse_invite
from apps.invites.actions.welcome import check_send_test_welcome_message
from apps.invites.errors import InvitationError
from apps.invites.selectors import access_email_invitation_by_id, access_multiuse_invite_by_id, invites_for_user
from apps.invites.serializers import CreateMultiuseInviteParams, InviteUsersParams, TestWelcomeMessageParams

MEMBERS_OR_ADMINS = [IsAuthenticatedUser, IsNotGuest, IsHuman]


class InvitesView(ApiView):
    """GET /invites: the open invitations the user controls; POST /invites: invitations by email."""

    permission_classes = MEMBERS_OR_ADMINS

    def get(self, request: Request):
        return json_success(request, {"invites": invites_for_user(request.user)})

    @uses_params(InviteUsersParams)
    def post(self, request: Request):
        params = parse_params(InviteUsersParams, request)
        skipped = check_invite_users(
            invitee_emails=params.invitee_emails,
            stream_ids=params.stream_ids,
            group_ids=params.group_ids,
            invited_as=params.invite_as,
            expires_in_minutes=params.invite_expires_in_minutes,
            include_realm_default_subscriptions=params.include_realm_default_subscriptions,
            notify_referrer_on_join=params.notify_referrer_on_join,
            welcome_message_custom_text=params.welcome_message_custom_text,
            acting_user=request.user,
        )
        if skipped:
            # The others' invitations are committed: Zulip answers this error all the same.
            raise InvitationError(
                "Some of those addresses are already using Zulip, so we didn't send them an invitation. "
                "We did send invitations to everyone else!",
                skipped,
                sent_invitations=True,
            )
        return json_success(request)


class InviteView(ApiView):
    """DELETE /invites/{invite_id}: revoke an invitation sent by email."""

    permission_classes = MEMBERS_OR_ADMINS

    def delete(self, request: Request, invite_id: int):
        invite = access_email_invitation_by_id(request.user, invite_id)
        do_revoke_email_invitation(invite, acting_user=request.user)
        return json_success(request)


class ResendInviteView(ApiView):
    """POST /invites/{invite_id}/resend: email an invitation's link again."""

    permission_classes = MEMBERS_OR_ADMINS

    def post(self, request: Request, invite_id: int):
        invite = access_email_invitation_by_id(request.user, invite_id)
        do_resend_email_invitation(invite, acting_user=request.user)
        return json_success(request)


class MultiuseInvitesView(ApiView):
    """POST /invites/multiuse: a reusable invitation link."""

    permission_classes = MEMBERS_OR_ADMINS

    @uses_params(CreateMultiuseInviteParams)
    def post(self, request: Request):
        params = parse_params(CreateMultiuseInviteParams, request)
        invite = check_create_multiuse_invite(
            invited_as=params.invite_as,
            expires_in_minutes=params.invite_expires_in_minutes,
            stream_ids=params.stream_ids,
            group_ids=params.group_ids,
            include_realm_default_subscriptions=params.include_realm_default_subscriptions,
            welcome_message_custom_text=params.welcome_message_custom_text,
            acting_user=request.user,
        )
        return json_success(request, {"invite_link": invite.link_url})


class MultiuseInviteView(ApiView):
    """DELETE /invites/multiuse/{invite_id}: revoke a link."""

    permission_classes = MEMBERS_OR_ADMINS

    def delete(self, request: Request, invite_id: int):
        invite = access_multiuse_invite_by_id(request.user, invite_id)
        do_revoke_multiuse_invite(invite, acting_user=request.user)
        return json_success(request)


class TestWelcomeMessageView(ApiView):
    """POST /realm/test_welcome_bot_custom_message: the Welcome Bot's message with this text, to the caller."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(TestWelcomeMessageParams)
    def post(self, request: Request):
        params = parse_params(TestWelcomeMessageParams, request)
        message = check_send_test_welcome_message(params.welcome_message_custom_text, acting_user=request.user)
        return json_success(request, {"message_id": message.id})
