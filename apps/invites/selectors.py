"""Reads of invitations: the links a user controls, one link by its key, and what an invitation may
name (channels the inviter may add subscribers to, groups they may add members to).

Zulip's rules (zerver/views/invite.py): administrators control every invitation of their
organization, other users the ones they created; an owner's invitation is controlled by owners only.
"""

import hashlib
import hmac
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.db.models.functions import Upper
from django.utils import timezone

from apps.core.errors import JsonableError, OrganizationOwnerRequiredError
from apps.groups.models import UserGroup
from apps.groups.selectors import (
    check_user_group_permission,
    get_user_group_in_realm,
    has_realm_permission,
    recursive_membership_group_ids,
)
from apps.invites.errors import InvalidInviteChannelError, InvitationAlreadyRevokedError, InvitationNotFoundError
from apps.invites.models import EmailInvitation, Invitation, MultiuseInvite, WelcomeBot
from apps.invites.serializers import email_invitation_to_dict, multiuse_invite_to_dict
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import (
    Membership,
    channels_closed_to_adding_subscribers,
    has_content_access,
    subscribed_stream_ids,
)
from apps.users.models import Role, User
from apps.users.selectors import active_users_and_roles

# The keys links carry: lowercase base32 of MultiuseInvite.KEY_BITS random bits.
KEY_RE = re.compile(rf"[a-z2-7]{{{Invitation.KEY_BITS // 5}}}")
MAX_ID = 2**63 - 1
ADMIN_ROLES = (Role.OWNER, Role.ADMINISTRATOR)


def key_digest(key: str) -> str:
    """What a link is looked up by: the SHA-256 of its key, in hex."""
    return hashlib.sha256(key.encode()).hexdigest()


# --- a link, by the key it carries ---------------------------------------------------------------


def invite_by_key(realm: Realm, key: str) -> Invitation | None:
    """The invitation of `realm` (a link or an email's) whose link carries `key`, usable or not;
    None for a key that is no invitation's, or another organization's (the same answer). The
    database is asked for the key's digest, and the keys are then compared in constant time."""
    if not KEY_RE.fullmatch(key):
        return None
    digest = key_digest(key)
    for model in (MultiuseInvite, EmailInvitation):
        invite = model.objects.filter(key_digest=digest).select_related("realm").first()
        if invite is not None:
            if not hmac.compare_digest(invite.key.encode(), key.encode()) or invite.realm_id != realm.id:
                return None
            return invite
    return None


def usable_invite_by_key(realm: Realm, key: str) -> Invitation | None:
    """invite_by_key, if the invitation may still be used: neither revoked, used nor expired."""
    invite = invite_by_key(realm, key)
    return invite if invite is not None and invite.is_usable else None


# --- the invitations a user controls ---------------------------------------------------------------


def _unexpired() -> Q:
    return Q(expiry_date__isnull=True) | Q(expiry_date__gt=timezone.now())


def open_invites(realm: Realm | int) -> Any:
    """The organization's invitation links that may still be used (neither revoked nor expired)."""
    return MultiuseInvite.objects.filter(_unexpired(), realm=realm, revoked=False)


def pending_email_invitations(realm: Realm | int) -> Any:
    """The organization's email invitations that may still be used (neither used, revoked nor expired)."""
    return EmailInvitation.objects.filter(_unexpired(), realm=realm, status=EmailInvitation.Status.PENDING)


def invites_for_user(user: User) -> list[dict[str, Any]]:
    """GET /invites: the open invitations `user` controls (all of the organization's for an
    administrator, but those making owners for an owner only; else their own), as Invite objects:
    the email invitations by id, then the links by id. At most six queries, however many."""
    answer = []
    for invites, to_dict in (
        (pending_email_invitations(user.realm), email_invitation_to_dict),
        (open_invites(user.realm), multiuse_invite_to_dict),
    ):
        if not user.is_admin:
            invites = invites.filter(referred_by=user)
        elif not user.is_owner:
            # An owner's link listed to an administrator made them an owner (the security QA pass).
            invites = invites.exclude(Q(invited_as=Role.OWNER) & ~Q(referred_by=user))
        invites = list(invites.select_related("realm").order_by("id"))
        stream_ids, group_ids = _named_ids(invites)
        answer += [
            to_dict(invite, stream_ids=stream_ids[invite.id], group_ids=group_ids[invite.id]) for invite in invites
        ]
    return answer


def _named_ids(invites: Sequence[Invitation]) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """({invite id: its channel ids}, {invite id: its group ids}) of invitations of one kind,
    sorted, two queries (none for no invitation)."""
    streams: dict[int, list[int]] = defaultdict(list)
    groups: dict[int, list[int]] = defaultdict(list)
    if invites:
        model = type(invites[0])
        ids = [invite.id for invite in invites]
        owner = f"{model._meta.model_name}_id"
        for field, target, found in (("streams", "stream_id", streams), ("groups", "usergroup_id", groups)):
            links = getattr(model, field).through.objects.filter(**{f"{owner}__in": ids})
            for invite_id, item_id in links.order_by(target).values_list(owner, target):
                found[invite_id].append(item_id)
    return streams, groups


def check_role_based_permission(user: User, invited_as: int, *, require_admin: bool) -> None:
    """Only owners invite owners ("Must be an organization owner"); with `require_admin`, only
    administrators ("Must be an organization administrator")."""
    if invited_as == Role.OWNER and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    if require_admin and not user.is_admin:
        raise JsonableError("Must be an organization administrator")


# Roles only administrators invite people as (owners only by owners).
ADMIN_INVITED_ROLES = (Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR)


def check_may_invite_as(user: User, invited_as: int) -> None:
    """The role is not above the inviter's, as Zulip checks it (owners by owners, moderators and
    administrators by administrators)."""
    check_role_based_permission(user, invited_as, require_admin=invited_as in ADMIN_INVITED_ROLES)


def invitable_roles(user: User) -> list[Role]:
    """The roles `user` may invite people as, highest first (what the web app offers)."""
    roles = []
    for role in sorted(Role, key=int):
        try:
            check_may_invite_as(user, role)
        except JsonableError:
            continue
        roles.append(role)
    return roles


def access_multiuse_invite_by_id(user: User, invite_id: int) -> MultiuseInvite:
    """An invitation `user` may revoke: one they created, or as an administrator (an owner for an
    owner's invitation). "No such invitation" for ids of other organizations and of none alike."""
    invite = MultiuseInvite.objects.filter(id=invite_id, realm_id=user.realm_id).select_related("realm").first()
    if invite is None:
        raise InvitationNotFoundError()
    if invite.referred_by_id != user.id:
        check_role_based_permission(user, invite.invited_as, require_admin=True)
    if invite.revoked:
        raise InvitationAlreadyRevokedError()
    return invite


def access_email_invitation_by_id(user: User, invite_id: int) -> EmailInvitation:
    """A pending email invitation `user` may revoke or send again: one they created, or as an
    administrator (an owner for an owner's invitation). "No such invitation" for ids of other
    organizations, of none, and of invitations used, revoked or expired alike."""
    invite = (
        pending_email_invitations(user.realm_id)
        .filter(id=invite_id, referred_by__isnull=False)
        .select_related("realm", "referred_by")
        .first()
    )
    if invite is None:
        raise InvitationNotFoundError()
    if invite.referred_by_id != user.id:
        check_role_based_permission(user, invite.invited_as, require_admin=True)
    return invite


def invitation_emails_sent_since(realm: Realm | int, since: datetime) -> int:
    """How many invitation emails the organization sent since then (their audit entries)."""
    return RealmAuditLog.objects.filter(
        realm=realm, event_type=AuditLogEventType.INVITATION_EMAIL_SENT, event_time__gte=since
    ).count()


def existing_user_errors(realm: Realm, emails: Sequence[str]) -> dict[str, tuple[str, bool]]:
    """Zulip's get_existing_user_errors: {address: (why, deactivated)} for each of these addresses
    that already has an account in the organization (compared without case). One query."""
    if not emails:
        return {}
    # Upper(), as the unique constraint on addresses: its index serves the lookup.
    found = User.objects.alias(upper=Upper("delivery_email")).filter(realm=realm, upper__in=[e.upper() for e in emails])
    rows = found.values_list("delivery_email", "is_active")
    active_by_email = {email.lower(): is_active for email, is_active in rows}
    errors = {}
    for email in emails:
        is_active = active_by_email.get(email.lower())
        if is_active is not None:
            errors[email] = ("Already has an account.", False) if is_active else ("Account has been deactivated.", True)
    return errors


def can_invite_users_by_email(user: User, membership: Collection[int] | None = None) -> bool:
    """Whether the user is in the organization's can_invite_users_group (never guests); `membership`,
    their groups, if read already."""
    return has_realm_permission(user, "can_invite_users_group", membership)


def can_create_multiuse_invite(user: User) -> bool:
    """Whether the user is in the organization's create_multiuse_invite_group (never guests)."""
    return has_realm_permission(user, "create_multiuse_invite_group")


# --- what an invitation may name -------------------------------------------------------------------


def access_streams_for_invite(user: User, stream_ids: Iterable[int]) -> list[Stream]:
    """The channels, each once in the order given, if `user` may subscribe others to them: active
    channels of the organization whose content they may access ("Invalid channel ID N. No invites
    were sent." for the first one that is not, as for one that does not exist), and to which they
    may add subscribers, default channels always (Zulip's "You do not have permission to subscribe
    other users to channels."). A fixed number of queries."""
    wanted = list(dict.fromkeys(stream_ids))
    in_range = [stream_id for stream_id in wanted if 0 < stream_id <= MAX_ID]
    found = {s.id: s for s in Stream.objects.filter(realm_id=user.realm_id, id__in=in_range)}
    subscribed = set(subscribed_stream_ids(user, found.values())) if found else set()
    membership = Membership(user)
    for stream_id in wanted:
        stream = found.get(stream_id)
        if stream is None or stream.deactivated:
            raise InvalidInviteChannelError(stream_id)
        if not has_content_access(membership, stream, is_subscribed=stream_id in subscribed):
            raise InvalidInviteChannelError(stream_id)
    streams = [found[stream_id] for stream_id in wanted]
    if channels_closed_to_adding_subscribers(membership, streams, allow_default=True):
        raise JsonableError("You do not have permission to subscribe other users to channels.")
    return streams


def access_groups_for_invite(user: User, group_ids: Iterable[int]) -> list[UserGroup]:
    """The named, active groups, each once in the order given, if `user` may add members to them
    (their can_add_members_group or can_manage_group; administrators to all; system groups follow
    roles and never). Zulip's errors: "Invalid user group", "User group is deactivated.",
    "Insufficient permission"."""
    groups = []
    membership = None if user.is_admin else recursive_membership_group_ids(user)
    for group_id in dict.fromkeys(group_ids):
        if not 0 < group_id <= MAX_ID:
            raise JsonableError("Invalid user group")
        group = get_user_group_in_realm(user.realm, group_id)
        check_user_group_permission(user, group, permission_setting="can_add_members_group", membership=membership)
        groups.append(group)
    return groups


def invite_audience(realm_id: int, referrer_ids: Iterable[int | None] = ()) -> list[int]:
    """Who hears that the invitations changed: the organization's active administrators, and the
    invitations' creators (Zulip's notify_invites_changed)."""
    users = active_users_and_roles(realm_id)
    active = {user_id for user_id, _ in users}
    admins = {user_id for user_id, role in users if role in ADMIN_ROLES}
    return sorted(admins | ({user_id for user_id in referrer_ids if user_id is not None} & active))


# --- the Welcome Bot -------------------------------------------------------------------------------


def get_welcome_bot(realm: Realm | int) -> User | None:
    """The organization's Welcome Bot (active or not), if it has one."""
    row = WelcomeBot.objects.filter(realm=realm).select_related("bot__realm").first()
    return row.bot if row is not None else None
