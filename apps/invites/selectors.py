"""Reads of invitations: the links a user controls, one link by its key, and what an invitation may
name (channels the inviter may add subscribers to, groups they may add members to).

Zulip's rules (zerver/views/invite.py): administrators control every invitation of their
organization, other users the ones they created; an owner's invitation is controlled by owners only.
"""

import hashlib
import hmac
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Q
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
from apps.invites.models import MultiuseInvite, WelcomeBot
from apps.invites.serializers import multiuse_invite_to_dict
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import Membership, has_content_access, subscribed_stream_ids
from apps.users.models import Role, User
from apps.users.selectors import active_users_and_roles

# The keys links carry: lowercase base32 of MultiuseInvite.KEY_BITS random bits.
KEY_RE = re.compile(rf"[a-z2-7]{{{MultiuseInvite.KEY_BITS // 5}}}")
MAX_ID = 2**63 - 1
ADMIN_ROLES = (Role.OWNER, Role.ADMINISTRATOR)


def key_digest(key: str) -> str:
    """What a link is looked up by: the SHA-256 of its key, in hex."""
    return hashlib.sha256(key.encode()).hexdigest()


# --- a link, by the key it carries ---------------------------------------------------------------


def invite_by_key(realm: Realm, key: str) -> MultiuseInvite | None:
    """The invitation of `realm` whose link carries `key`, usable or not; None for a key that is no
    invitation's, or another organization's (the same answer). The database is asked for the key's
    digest, and the keys are then compared in constant time."""
    if not KEY_RE.fullmatch(key):
        return None
    invite = MultiuseInvite.objects.filter(key_digest=key_digest(key)).select_related("realm").first()
    if invite is None or not hmac.compare_digest(invite.key.encode(), key.encode()) or invite.realm_id != realm.id:
        return None
    return invite


def usable_invite_by_key(realm: Realm, key: str) -> MultiuseInvite | None:
    """invite_by_key, if the invitation may still be used: neither revoked nor expired."""
    invite = invite_by_key(realm, key)
    return invite if invite is not None and invite.is_usable else None


# --- the invitations a user controls ---------------------------------------------------------------


def open_invites(realm: Realm | int) -> Any:
    """The organization's invitations that may still be used (neither revoked nor expired)."""
    unexpired = Q(expiry_date__isnull=True) | Q(expiry_date__gt=timezone.now())
    return MultiuseInvite.objects.filter(unexpired, realm=realm, revoked=False)


def invites_for_user(user: User) -> list[dict[str, Any]]:
    """GET /invites: the open invitations `user` controls (all of the organization's for an
    administrator, else their own), as Invite objects by id. Three queries, however many."""
    invites = open_invites(user.realm)
    if not user.is_admin:
        invites = invites.filter(referred_by=user)
    invites = list(invites.select_related("realm").order_by("id"))
    stream_ids, group_ids = _named_ids(invites)
    return [
        multiuse_invite_to_dict(invite, stream_ids=stream_ids[invite.id], group_ids=group_ids[invite.id])
        for invite in invites
    ]


def _named_ids(invites: Sequence[MultiuseInvite]) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """({invite id: its channel ids}, {invite id: its group ids}), sorted, two queries."""
    streams: dict[int, list[int]] = defaultdict(list)
    groups: dict[int, list[int]] = defaultdict(list)
    ids = [invite.id for invite in invites]
    if ids:
        links = MultiuseInvite.streams.through.objects.filter(multiuseinvite_id__in=ids)
        for invite_id, stream_id in links.order_by("stream_id").values_list("multiuseinvite_id", "stream_id"):
            streams[invite_id].append(stream_id)
        links = MultiuseInvite.groups.through.objects.filter(multiuseinvite_id__in=ids)
        for invite_id, group_id in links.order_by("usergroup_id").values_list("multiuseinvite_id", "usergroup_id"):
            groups[invite_id].append(group_id)
    return streams, groups


def check_role_based_permission(user: User, invited_as: int, *, require_admin: bool) -> None:
    """Only owners invite owners ("Must be an organization owner"); with `require_admin`, only
    administrators ("Must be an organization administrator")."""
    if invited_as == Role.OWNER and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    if require_admin and not user.is_admin:
        raise JsonableError("Must be an organization administrator")


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


def can_create_multiuse_invite(user: User) -> bool:
    """Whether the user is in the organization's can_create_multiuse_invite_group (never guests)."""
    return has_realm_permission(user, "can_create_multiuse_invite_group")


# --- what an invitation may name -------------------------------------------------------------------


def access_streams_for_invite(user: User, stream_ids: Iterable[int]) -> list[Stream]:
    """The channels, each once in the order given, if `user` may subscribe others to them: active
    channels of the organization whose content they may access (in Parley everyone who may invite
    may subscribe others to those). "Invalid channel ID N. No invites were sent." for the first one
    that is not, as for one that does not exist. A fixed number of queries."""
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
    return [found[stream_id] for stream_id in wanted]


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
