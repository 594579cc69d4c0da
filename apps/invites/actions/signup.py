"""Joining an organization through an invitation link: the account is created as every account is
(apps.users' do_create_user: its checks, audit entry, events, and the Welcome Bot's message with
the link's custom text), with the link's role, then subscribed to its channels and added to its
groups, all in one transaction. A reusable link stays usable for the next person; an emailed
invitation makes one account, with its address, and is then used up (its creator told, if they
asked)."""

from django.db import transaction

from apps.groups.actions.members import do_add_user_group_members
from apps.invites.actions.invites import notify_invites_changed
from apps.invites.errors import InvalidInvitationLinkError
from apps.invites.models import EmailInvitation
from apps.invites.selectors import usable_invite_by_key
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.send import do_send_message
from apps.messages.rendering import silent_mention
from apps.realms.domains import SIGNUP_REFUSALS, check_email_allowed
from apps.realms.models import Realm
from apps.realms.selectors import lock_realm
from apps.users.actions.create_user import check_email, do_create_user
from apps.users.models import User


@transaction.atomic
def do_join_with_invite(realm: Realm, key: str, *, email: str, full_name: str, password: str) -> User:
    """Create the account the link `key` of `realm` offers (for an emailed invitation, with its
    address: `email` is not used). The link is locked while the account is made, so a link revoked
    or used meanwhile lets nobody in. Raises InvalidInvitationLinkError for a
    link that cannot be used (unknown, another organization's, expired, revoked: one error), and
    do_create_user's errors (the address in use, the name, the password), and the organization's
    refusal of the address (apps.realms.domains); nothing is left of a refused attempt.

    The channels and groups still active are joined, and the organization's default channels when
    the link has `include_realm_default_subscriptions`. Emits: what do_create_user,
    bulk_add_subscriptions and do_add_user_group_members send; for an emailed invitation,
    invites_changed, and the Notification Bot's word to its creator when they asked for it.
    """
    found = usable_invite_by_key(realm, key)
    # Sign-ups take turns on the organization's row, before their invitation's: two invitations to
    # one address used at once would otherwise each hold one and wait for the other (joining closes
    # the address's other invitations). The second then finds its invitation closed.
    lock_realm(realm.id)
    invite = type(found).objects.select_for_update().filter(id=found.id).first() if found else None
    if realm.deactivated or invite is None or not invite.is_usable:
        raise InvalidInvitationLinkError()
    emailed = isinstance(invite, EmailInvitation)
    if emailed:
        email = invite.email
        # Used before the account exists, so that closing the address's other invitations
        # (apps.invites.receivers) leaves this one as it is.
        EmailInvitation.objects.filter(id=invite.id).update(status=EmailInvitation.Status.USED)
    check_email_allowed(realm, check_email(email), SIGNUP_REFUSALS)
    user = do_create_user(
        realm,
        email,
        full_name,
        role=invite.invited_as,
        password=password,
        welcome_message_custom_text=invite.welcome_message_custom_text,
        join_default_channels=invite.include_realm_default_subscriptions,
        channel_ids=list(invite.streams.values_list("id", flat=True)),
        acting_user=None,
    )
    for group in invite.groups.filter(deactivated=False).order_by("id"):
        do_add_user_group_members(group, [user], acting_user=None)
    if emailed:
        EmailInvitation.objects.filter(id=invite.id).update(created_user=user)
        notify_invites_changed(realm.id, [invite.referred_by_id])
        _tell_referrer(invite, user)
    return user


def _tell_referrer(invite: EmailInvitation, user: User) -> None:
    """The Notification Bot's direct message to the invitation's creator, if they asked for it and
    are still active (Zulip's "... accepted your invitation")."""
    referrer = invite.referred_by
    if not invite.notify_referrer_on_join or referrer is None or not referrer.is_active:
        return
    bot = do_create_notification_bot(referrer.realm)
    if bot.is_active:
        content = f"{silent_mention(user)} accepted your invitation to join {referrer.realm.name}!"
        do_send_message(bot, dm_with=[referrer], content=content, client="Internal", acting_user=None)
