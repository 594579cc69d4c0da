"""Invitations sent by email (Zulip's POST /invites): each address gets a link of its own that makes
one account with that address. Created, sent again and revoked here, each with its audit entry and
Zulip's `invites_changed` event; the email itself is sent by the task worker
(apps.invites.tasks.send_invitation_email), queued in the transaction that records it.

An organization sends at most settings.INVITATIONS_PER_DAY invitation emails in 24 hours (counted
from their audit entries, under the organization's row lock), so that no member can use the server
to send spam.
"""

import re
from collections.abc import Collection, Sequence
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.groups.models import UserGroup
from apps.invites.actions.invites import (
    audit_invitation_created,
    check_invite_lifetime,
    check_welcome_message_custom_text,
    generate_invite_key,
    notify_invites_changed,
)
from apps.invites.errors import AddressError, InvitationError, InvitationNotFoundError
from apps.invites.models import EmailInvitation
from apps.invites.selectors import (
    access_groups_for_invite,
    access_streams_for_invite,
    can_invite_users_by_email,
    check_may_invite_as,
    existing_user_errors,
    invitation_emails_sent_since,
    key_digest,
    pending_email_invitations,
)
from apps.invites.tasks import send_invitation_email, send_invitation_reminder
from apps.realms.audit import audit
from apps.realms.domains import INVITE_REFUSALS, check_email_allowed
from apps.realms.models import AuditLogEventType, Realm
from apps.realms.selectors import lock_realm
from apps.subscriptions.models import Stream
from apps.users.actions.create_user import check_email
from apps.users.models import Role, User

DAILY_LIMIT_MESSAGE = (
    "To protect users, Zulip limits the number of invitations you can send in one day. Because you have "
    "reached the limit, no invitations were sent."
)
_NAMED_ADDRESS = re.compile(r"<(?P<email>.*)>")
# Zulip's: an email whose link is valid this long or longer gets a reminder, this long before it expires.
REMINDER_FOR_LINKS_VALID = timedelta(days=4)
REMINDER_BEFORE_EXPIRY = timedelta(days=2)


def parse_invitee_emails(raw: str) -> list[str]:
    """Zulip's get_invitee_emails_set: the addresses separated by commas or new lines, the address
    of "Name <address>", stripped; each once (without regard to case), in order, none empty."""
    emails: dict[str, str] = {}
    for part in re.split(r"[,\n]", raw):
        named = _NAMED_ADDRESS.search(part)
        email = (named.group("email") if named else part).strip()
        if email:
            emails.setdefault(email.lower(), email)
    return list(emails.values())


def check_invite_users(
    *,
    invitee_emails: str,
    stream_ids: Sequence[int],
    group_ids: Sequence[int],
    invited_as: int,
    expires_in_minutes: int | None,
    include_realm_default_subscriptions: bool,
    notify_referrer_on_join: bool,
    welcome_message_custom_text: str | None,
    acting_user: User,
) -> list[AddressError]:
    """POST /invites, checked in Zulip's order: the organization lets the user invite by email
    ("Insufficient permission"); the role is not above theirs; at least one address; each channel
    one they may subscribe others to, each group one they may add members to; a custom welcome text
    only from administrators. Then do_invite_users; returns the addresses skipped (they have an
    account), whose error the view answers once the others' invitations are committed."""
    if not can_invite_users_by_email(acting_user):
        raise JsonableError("Insufficient permission")
    check_may_invite_as(acting_user, invited_as)
    emails = parse_invitee_emails(invitee_emails)
    if not emails:
        raise JsonableError("You must specify at least one email address.")
    streams = access_streams_for_invite(acting_user, stream_ids)
    groups = access_groups_for_invite(acting_user, group_ids)
    if welcome_message_custom_text is not None and not acting_user.is_admin:
        raise JsonableError("Must be an organization administrator")
    return do_invite_users(
        acting_user,
        emails,
        invited_as=invited_as,
        expires_in_minutes=expires_in_minutes,
        streams=streams,
        groups=groups,
        include_realm_default_subscriptions=include_realm_default_subscriptions,
        notify_referrer_on_join=notify_referrer_on_join,
        welcome_message_custom_text=welcome_message_custom_text,
    )


@transaction.atomic
def do_invite_users(
    referrer: User,
    emails: Sequence[str],
    *,
    invited_as: int = Role.MEMBER,
    expires_in_minutes: int | None,
    streams: Sequence[Stream] = (),
    groups: Sequence[UserGroup] = (),
    include_realm_default_subscriptions: bool = False,
    notify_referrer_on_join: bool = True,
    welcome_message_custom_text: str | None = None,
) -> list[AddressError]:
    """Invite each address, as Zulip's do_invite_users: none if the organization's daily limit
    would be passed ("To protect users, ..."), or if any address is invalid or may not join the
    organization ("Some emails did not validate, ..."), or if every address already has an account
    ("We weren't able to invite anyone."); else each address without an account gets an invitation
    and its email. Returns the addresses skipped, with why.

    Audit: INVITATION_CREATED and INVITATION_EMAIL_SENT for each. Emits: invites_changed to the
    administrators and the referrer.
    """
    check_invite_lifetime(expires_in_minutes)
    check_welcome_message_custom_text(welcome_message_custom_text)
    realm = referrer.realm
    lock_realm(realm.id)
    check_daily_limit(realm, len(emails))
    errors: list[AddressError] = []
    valid: list[str] = []
    for email in emails:
        try:
            check_email_allowed(realm, check_email(email), INVITE_REFUSALS)
        except JsonableError as exc:
            errors.append((email, exc.msg, False))
        else:
            valid.append(email)
    existing = existing_user_errors(realm, valid)
    skipped = [(email, *existing[email]) for email in valid if email in existing]
    if errors:
        raise InvitationError(
            "Some emails did not validate, so we didn't send any invitations.", errors + skipped, sent_invitations=False
        )
    if len(skipped) == len(emails):
        raise InvitationError("We weren't able to invite anyone.", skipped, sent_invitations=False)
    now = timezone.now()
    expiry_date = None if expires_in_minutes is None else now + timedelta(minutes=expires_in_minutes)
    for email in valid:
        if email in existing:
            continue
        key = generate_invite_key()
        invite = EmailInvitation.objects.create(
            realm=realm,
            referred_by=referrer,
            email=email,
            key=key,
            key_digest=key_digest(key),
            invited_as=invited_as,
            include_realm_default_subscriptions=include_realm_default_subscriptions,
            notify_referrer_on_join=notify_referrer_on_join,
            welcome_message_custom_text=welcome_message_custom_text,
            created=now,
            expiry_date=expiry_date,
        )
        invite.streams.set(streams)
        invite.groups.set(groups)
        audit_invitation_created(invite, streams, groups, acting_user=referrer)
        _send(invite, acting_user=referrer)
    notify_invites_changed(realm.id, [referrer.id])
    return skipped


def check_daily_limit(realm: Realm, count: int) -> None:
    """Refuse (Zulip's text, daily_limit_reached) to send `count` more invitation emails when the
    organization's last 24 hours would then pass settings.INVITATIONS_PER_DAY. Call with the
    organization's row locked, so that simultaneous requests count each other's."""
    sent = invitation_emails_sent_since(realm, timezone.now() - timedelta(days=1))
    if sent + count > settings.INVITATIONS_PER_DAY:
        raise InvitationError(DAILY_LIMIT_MESSAGE, [], sent_invitations=False, daily_limit_reached=True)


def _send(invite: EmailInvitation, *, acting_user: User | None) -> None:
    """Record the email and queue it for the task worker (it runs after the commit), with its
    reminder two days before the link expires when it is valid four days or more (Zulip's rule)."""
    now = timezone.now()
    EmailInvitation.objects.filter(id=invite.id).update(last_sent=now)
    invite.last_sent = now
    audit(
        invite.realm_id,
        AuditLogEventType.INVITATION_EMAIL_SENT,
        extra_data={"invite_id": invite.id, "email": invite.email},
        acting_user=acting_user,
    )
    send_invitation_email.enqueue(invite.id)
    if invite.expiry_date is not None and invite.expiry_date - now >= REMINDER_FOR_LINKS_VALID:
        reminder = send_invitation_reminder.using(run_after=invite.expiry_date - REMINDER_BEFORE_EXPIRY)
        reminder.enqueue(invite.id, now.isoformat())


@transaction.atomic
def do_resend_email_invitation(invite: EmailInvitation, *, acting_user: User | None) -> None:
    """POST /invites/{id}/resend: the same link, emailed again (its expiry unchanged), within the
    daily limit. "No such invitation" if it was used or revoked meanwhile.

    Audit: INVITATION_EMAIL_SENT."""
    lock_realm(invite.realm_id)
    if not pending_email_invitations(invite.realm_id).filter(id=invite.id).exists():
        raise InvitationNotFoundError()
    check_daily_limit(invite.realm, 1)
    _send(invite, acting_user=acting_user)


@transaction.atomic
def do_revoke_email_invitation(invite: EmailInvitation, *, acting_user: User | None) -> None:
    """DELETE /invites/{id}: its link no longer lets anyone join. "No such invitation" if it was
    used or revoked meanwhile.

    Audit: INVITATION_REVOKED {invite_id, email}. Emits: invites_changed to the administrators and
    its creator."""
    pending = EmailInvitation.objects.filter(id=invite.id, status=EmailInvitation.Status.PENDING)
    if not pending.update(status=EmailInvitation.Status.REVOKED):
        raise InvitationNotFoundError()
    invite.status = EmailInvitation.Status.REVOKED
    audit(
        invite.realm_id,
        AuditLogEventType.INVITATION_REVOKED,
        extra_data={"invite_id": invite.id, "email": invite.email},
        acting_user=acting_user,
    )
    notify_invites_changed(invite.realm_id, [invite.referred_by_id])


@transaction.atomic(savepoint=False)
def do_close_email_invitations(
    realm_id: int,
    *,
    email: str | None = None,
    referrers: Sequence[User] = (),
    invited_as: Collection[int] | None = None,
) -> int:
    """Revoke the pending invitations to `email` (its person joined: Zulip revokes the others) or
    those `referrers` created (they were deactivated), of the roles `invited_as` if given; how many.

    Audit: INVITATION_REVOKED for each. Emits: invites_changed to the administrators and their
    creators, once."""
    if email is None and not referrers:
        raise ValueError("say whose invitations: an address or their creators")
    pending = EmailInvitation.objects.filter(realm_id=realm_id, status=EmailInvitation.Status.PENDING)
    if email is not None:
        pending = pending.filter(email__iexact=email)
    if referrers:
        pending = pending.filter(referred_by__in=referrers)
    if invited_as is not None:
        pending = pending.filter(invited_as__in=invited_as)
    closed = list(pending.order_by("id").values_list("id", "email", "referred_by_id"))
    if not closed:
        return 0
    EmailInvitation.objects.filter(id__in=[invite_id for invite_id, _, _ in closed]).update(
        status=EmailInvitation.Status.REVOKED
    )
    for invite_id, invited_email, _ in closed:
        audit(
            realm_id,
            AuditLogEventType.INVITATION_REVOKED,
            extra_data={"invite_id": invite_id, "email": invited_email},
            acting_user=None,
        )
    notify_invites_changed(realm_id, [referrer_id for _, _, referrer_id in closed])
    return len(closed)
