"""Invitations: reusable links created (through the API by those the organization's
create_multiuse_invite_group allows; by operators with `generate_invite_link` or the Django
admin) and revoked, each with its audit entry and Zulip's `invites_changed` event (to the
organization's administrators and the invitation's creator, who then fetch GET /invites)."""

import base64
import secrets
from collections.abc import Collection, Sequence
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.groups.models import UserGroup
from apps.invites.errors import InvitationAlreadyRevokedError
from apps.invites.models import EmailInvitation, Invitation, MultiuseInvite
from apps.invites.selectors import (
    access_groups_for_invite,
    access_streams_for_invite,
    can_create_multiuse_invite,
    check_may_invite_as,
    invite_audience,
    key_digest,
    open_invites,
)
from apps.invites.serializers import DEFAULT_INVITE_EXPIRES_IN_MINUTES, MAX_INVITE_EXPIRES_IN_MINUTES
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType, Realm
from apps.subscriptions.models import Stream
from apps.users.models import Role, User


def generate_invite_key() -> str:
    """MultiuseInvite.KEY_BITS random bits from `secrets`, as lowercase base32 (32 characters)."""
    return base64.b32encode(secrets.token_bytes(MultiuseInvite.KEY_BITS // 8)).decode().lower()


def check_invite_lifetime(expires_in_minutes: int | None) -> None:
    """A lifetime of 1 minute to ten years, or None (never expires); else the error saying so."""
    if expires_in_minutes is None:
        return
    if expires_in_minutes < 1:
        raise JsonableError("An invitation must be valid for at least one minute.")
    if expires_in_minutes > MAX_INVITE_EXPIRES_IN_MINUTES:
        raise JsonableError(
            f"An invitation may be valid for at most {MAX_INVITE_EXPIRES_IN_MINUTES} minutes; "
            "one that never expires has no lifetime."
        )


def check_welcome_message_custom_text(text: str | None) -> None:
    limit = Realm.MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH
    if text is not None and len(text) > limit:
        raise JsonableError(f"welcome_message_custom_text is too long (limit: {limit} characters)")


def check_create_multiuse_invite(
    *,
    invited_as: int,
    expires_in_minutes: int | None,
    stream_ids: Sequence[int],
    group_ids: Sequence[int],
    include_realm_default_subscriptions: bool,
    welcome_message_custom_text: str | None,
    acting_user: User,
) -> MultiuseInvite:
    """POST /invites/multiuse, checked in Zulip's order: the organization lets the user create
    links ("Insufficient permission"); the role is not above theirs (owners by owners, moderators
    and administrators by administrators); each channel is one they may subscribe others to
    ("Invalid channel ID N. No invites were sent."); each group one they may add members to; a
    custom welcome text only from administrators. Then do_create_multiuse_invite."""
    if not can_create_multiuse_invite(acting_user):
        raise JsonableError("Insufficient permission")
    check_may_invite_as(acting_user, invited_as)
    streams = access_streams_for_invite(acting_user, stream_ids)
    groups = access_groups_for_invite(acting_user, group_ids)
    if welcome_message_custom_text is not None and not acting_user.is_admin:
        raise JsonableError("Must be an organization administrator")
    return do_create_multiuse_invite(
        acting_user.realm,
        invited_as=invited_as,
        expires_in_minutes=expires_in_minutes,
        streams=streams,
        groups=groups,
        include_realm_default_subscriptions=include_realm_default_subscriptions,
        welcome_message_custom_text=welcome_message_custom_text,
        acting_user=acting_user,
    )


def do_create_multiuse_invite(
    realm: Realm,
    *,
    invited_as: int = Role.MEMBER,
    expires_in_minutes: int | None = DEFAULT_INVITE_EXPIRES_IN_MINUTES,
    streams: Sequence[Stream] = (),
    groups: Sequence[UserGroup] = (),
    include_realm_default_subscriptions: bool = False,
    welcome_message_custom_text: str | None = None,
    acting_user: User | None,
) -> MultiuseInvite:
    """Create a reusable invitation link to `realm` with a fresh key, for checked channels and
    groups of the organization. Its creator (`referred_by`) is the acting user when they belong to
    the organization, else nobody (an operator). Raises for a lifetime or welcome text out of
    bounds, before the transaction.

    Audit: INVITATION_CREATED {invite_id, invited_as, expiry_date, stream_ids, group_ids}.
    Emits: invites_changed to the administrators and the creator.
    """
    check_invite_lifetime(expires_in_minutes)
    check_welcome_message_custom_text(welcome_message_custom_text)
    if any(item.realm_id != realm.id for item in (*streams, *groups)):
        raise ValueError("an invitation names channels and groups of its own organization only")
    now = timezone.now()
    key = generate_invite_key()
    with transaction.atomic(savepoint=False):
        invite = MultiuseInvite.objects.create(
            realm=realm,
            referred_by=acting_user if acting_user is not None and acting_user.realm_id == realm.id else None,
            key=key,
            key_digest=key_digest(key),
            invited_as=invited_as,
            include_realm_default_subscriptions=include_realm_default_subscriptions,
            welcome_message_custom_text=welcome_message_custom_text,
            created=now,
            expiry_date=None if expires_in_minutes is None else now + timedelta(minutes=expires_in_minutes),
        )
        invite.streams.set(streams)
        invite.groups.set(groups)
        audit_invitation_created(invite, streams, groups, acting_user=acting_user)
        notify_invites_changed(realm.id, [invite.referred_by_id])
    return invite


@transaction.atomic
def do_revoke_multiuse_invite(invite: MultiuseInvite, *, acting_user: User | None) -> None:
    """Revoke the link: it no longer lets anyone join. "Invitation has already been revoked" if it
    was (meanwhile), leaving the caller's transaction usable.

    Audit: INVITATION_REVOKED {invite_id}. Emits: invites_changed to the administrators and the creator.
    """
    if not MultiuseInvite.objects.filter(id=invite.id, revoked=False).update(revoked=True):
        raise InvitationAlreadyRevokedError()
    invite.revoked = True
    audit(
        invite.realm_id,
        AuditLogEventType.INVITATION_REVOKED,
        extra_data={"invite_id": invite.id},
        acting_user=acting_user,
    )
    notify_invites_changed(invite.realm_id, [invite.referred_by_id])


@transaction.atomic(savepoint=False)
def do_revoke_invites_created_by(
    users: Sequence[User], *, invited_as: Collection[int] | None = None, acting_user: User | None
) -> int:
    """Revoke the open invitation links these users created (they were deactivated: Zulip's
    revoke_invites_generated_by_user), or those of them making people of the roles `invited_as`;
    how many.

    Audit: INVITATION_REVOKED for each. Emits: invites_changed to the administrators, once.
    """
    if not users:
        return 0
    realm_id = users[0].realm_id
    links = open_invites(realm_id).filter(referred_by__in=users)
    if invited_as is not None:
        links = links.filter(invited_as__in=invited_as)
    invites = list(links.order_by("id").values_list("id", flat=True))
    if not invites:
        return 0
    MultiuseInvite.objects.filter(id__in=invites).update(revoked=True)
    for invite_id in invites:
        audit(
            realm_id, AuditLogEventType.INVITATION_REVOKED, extra_data={"invite_id": invite_id}, acting_user=acting_user
        )
    notify_invites_changed(realm_id)
    return len(invites)


def audit_invitation_created(
    invite: Invitation, streams: Sequence[Stream], groups: Sequence[UserGroup], *, acting_user: User | None
) -> None:
    """Audit: INVITATION_CREATED {invite_id, invited_as, expiry_date, stream_ids, group_ids, and an
    emailed invitation's email}."""
    email = {"email": invite.email} if isinstance(invite, EmailInvitation) else {}
    audit(
        invite.realm_id,
        AuditLogEventType.INVITATION_CREATED,
        extra_data={
            "invite_id": invite.id,
            **email,
            "invited_as": invite.invited_as,
            "expiry_date": invite.expiry_date.isoformat() if invite.expiry_date else None,
            "stream_ids": sorted(stream.id for stream in streams),
            "group_ids": sorted(group.id for group in groups),
        },
        acting_user=acting_user,
    )


def notify_invites_changed(realm_id: int, referrer_ids: Sequence[int | None] = ()) -> None:
    """Emits: invites_changed (no other field) to the organization's active administrators and
    these creators of invitations, once the transaction commits."""
    send_event_on_commit(realm_id, {"type": "invites_changed"}, invite_audience(realm_id, referrer_ids))
