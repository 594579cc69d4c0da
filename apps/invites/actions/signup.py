"""Joining an organization through an invitation link: the account is created as every account is
(apps.users' do_create_user: its checks, audit entry, events, and the Welcome Bot's message with
the link's custom text), with the link's role, then subscribed to its channels and added to its
groups, all in one transaction. The link stays usable for the next person."""

from django.db import transaction

from apps.groups.actions.members import do_add_user_group_members
from apps.invites.errors import InvalidInvitationLinkError
from apps.invites.models import MultiuseInvite
from apps.invites.selectors import usable_invite_by_key
from apps.realms.domains import SIGNUP_REFUSALS, check_email_allowed
from apps.realms.models import Realm
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.users.actions.create_user import check_email, do_create_user
from apps.users.models import User


@transaction.atomic
def do_join_with_invite(realm: Realm, key: str, *, email: str, full_name: str, password: str) -> User:
    """Create the account the link `key` of `realm` offers. The link is locked while the account
    is made, so a link revoked meanwhile lets nobody in. Raises InvalidInvitationLinkError for a
    link that cannot be used (unknown, another organization's, expired, revoked: one error), and
    do_create_user's errors (the address in use, the name, the password), and the organization's
    refusal of the address (apps.realms.domains); nothing is left of a refused attempt.

    The channels and groups still active are joined, and the organization's default channels when
    the link has `include_realm_default_subscriptions`. Emits: what do_create_user,
    bulk_add_subscriptions and do_add_user_group_members send.
    """
    found = usable_invite_by_key(realm, key)
    invite = MultiuseInvite.objects.select_for_update().filter(id=found.id).first() if found else None
    if realm.deactivated or invite is None or not invite.is_usable:
        raise InvalidInvitationLinkError()
    check_email_allowed(realm, check_email(email), SIGNUP_REFUSALS)
    user = do_create_user(
        realm,
        email,
        full_name,
        role=invite.invited_as,
        password=password,
        welcome_message_custom_text=invite.welcome_message_custom_text,
        join_default_channels=invite.include_realm_default_subscriptions,
        acting_user=None,
    )
    streams = list(invite.streams.filter(deactivated=False).order_by("id"))
    if streams:
        bulk_add_subscriptions(realm, streams, [user], acting_user=None)
    for group in invite.groups.filter(deactivated=False).order_by("id"):
        do_add_user_group_members(group, [user], acting_user=None)
    return user
