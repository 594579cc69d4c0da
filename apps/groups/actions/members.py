"""Members and subgroups of user-defined groups: added and removed by those the group's settings
allow (can_manage_group for everything; can_add_members_group, can_remove_members_group, and
can_join_group / can_leave_group for oneself), through any depth of subgroups, never in a cycle.

Audit: USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED / _REMOVED, one per user (`modified_user`);
USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED / _REMOVED with the subgroups' ids.
"""

from collections.abc import Callable, Sequence

from django.db import transaction

from apps.core.errors import JsonableError
from apps.groups.actions.reporting import audit_members, audit_subgroups, send_members_event, send_subgroups_event
from apps.groups.hooks import group_membership_changing
from apps.groups.models import GroupGroupMembership, UserGroup, UserGroupMembership
from apps.groups.selectors import (
    access_subgroups_by_ids,
    access_user_group_for_update,
    access_users_by_ids,
    direct_member_ids_among,
    recursive_subgroup_ids,
    subgroup_ids,
)
from apps.realms.models import AuditLogEventType
from apps.realms.selectors import lock_realm
from apps.users.models import User

# --- the changes ------------------------------------------------------------------------------------


def _membership_changing(group: UserGroup) -> Callable[[], None]:
    """Call before the group's members or subgroups change; call what it returns after (the
    group_membership_changing hooks: who gains or loses sight of a private channel through it)."""
    after_steps = group_membership_changing.call(group)

    def after() -> None:
        for step in after_steps:
            if step is not None:
                step()

    return after


@transaction.atomic(savepoint=False)
def do_add_user_group_members(group: UserGroup, users: Sequence[User], *, acting_user: User | None) -> None:
    """Emits: user_group/add_members; then, to users who now see a private channel through the
    group, stream/create and subscription/peer_add."""
    membership_changed = _membership_changing(group)
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=u) for u in users)
    audit_members(group, AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, users, acting_user=acting_user)
    send_members_event(group, "add_members", [u.id for u in users])
    membership_changed()


@transaction.atomic(savepoint=False)
def do_remove_user_group_members(group: UserGroup, users: Sequence[User], *, acting_user: User | None) -> None:
    """Emits: user_group/remove_members; then stream/delete to users who no longer see a private
    channel they saw through the group."""
    membership_changed = _membership_changing(group)
    UserGroupMembership.objects.filter(user_group=group, user__in=users).delete()
    audit_members(group, AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED, users, acting_user=acting_user)
    send_members_event(group, "remove_members", [u.id for u in users])
    membership_changed()


@transaction.atomic(savepoint=False)
def do_add_user_group_subgroups(group: UserGroup, subgroups: Sequence[UserGroup], *, acting_user: User | None) -> None:
    """Emits: user_group/add_subgroups {group_id, direct_subgroup_ids}; then, to users who now see
    a private channel through the group, stream/create and subscription/peer_add."""
    membership_changed = _membership_changing(group)
    GroupGroupMembership.objects.bulk_create(GroupGroupMembership(supergroup=group, subgroup=s) for s in subgroups)
    ids = [s.id for s in subgroups]
    event_type = AuditLogEventType.USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED
    audit_subgroups([(group, ids)], event_type, acting_user=acting_user)
    send_subgroups_event(group, "add_subgroups", ids)
    membership_changed()


@transaction.atomic(savepoint=False)
def do_remove_user_group_subgroups(
    group: UserGroup, subgroups: Sequence[UserGroup], *, acting_user: User | None
) -> None:
    """Emits: user_group/remove_subgroups {group_id, direct_subgroup_ids}; then stream/delete to
    users who no longer see a private channel they saw through the group."""
    membership_changed = _membership_changing(group)
    GroupGroupMembership.objects.filter(supergroup=group, subgroup__in=subgroups).delete()
    ids = [s.id for s in subgroups]
    event_type = AuditLogEventType.USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_REMOVED
    audit_subgroups([(group, ids)], event_type, acting_user=acting_user)
    send_subgroups_event(group, "remove_subgroups", ids)
    membership_changed()


# --- the checks, one step each (inside the transaction of check_update_user_group_*) ---------------


def _access_for_membership_change(acting_user: User, group_id: int, user_ids: list[int], *, adding: bool) -> UserGroup:
    """Joining or leaving oneself needs can_join_group / can_leave_group, or else the permission to
    add or remove anyone."""
    others = "can_add_members_group" if adding else "can_remove_members_group"
    if user_ids == [acting_user.id]:
        own = "can_join_group" if adding else "can_leave_group"
        try:
            return access_user_group_for_update(acting_user, group_id, permission_setting=own, allow_deactivated=True)
        except JsonableError:
            pass
    return access_user_group_for_update(acting_user, group_id, permission_setting=others, allow_deactivated=True)


def _add_members(acting_user: User, group_id: int, user_ids: list[int]) -> None:
    group = _access_for_membership_change(acting_user, group_id, user_ids, adding=True)
    users = access_users_by_ids(group.realm, user_ids)
    existing = direct_member_ids_among(group, users)
    for user in users:
        if user.id in existing:
            raise JsonableError(f"User {user.id} is already a member of this group")
    do_add_user_group_members(group, users, acting_user=acting_user)


def _remove_members(acting_user: User, group_id: int, user_ids: list[int]) -> None:
    users = access_users_by_ids(acting_user.realm, user_ids)
    group = _access_for_membership_change(acting_user, group_id, user_ids, adding=False)
    existing = direct_member_ids_among(group, users)
    for user in users:
        if user.id not in existing:
            raise JsonableError(f"There is no member '{user.id}' in this user group")
    do_remove_user_group_members(group, users, acting_user=acting_user)


def _group_and_subgroups(
    acting_user: User, group_id: int, ids: list[int], *, permission_setting: str
) -> tuple[UserGroup, list[UserGroup], set[int]]:
    """For a subgroup change: the group (if the user may change it), the given subgroups, and the
    ids of the group's current direct subgroups. The organization is locked first (lock_realm):
    two concurrent subgroup changes that are each acyclic could otherwise close a cycle together."""
    lock_realm(acting_user.realm_id)
    group = access_user_group_for_update(
        acting_user, group_id, permission_setting=permission_setting, allow_deactivated=True
    )
    subgroups = access_subgroups_by_ids(group.realm, ids)
    return group, subgroups, set(subgroup_ids(group.id, direct_subgroup_only=True))


def _add_subgroups(acting_user: User, group_id: int, ids: list[int]) -> None:
    """Raises for subgroups that are missing, deactivated, already there, or that contain the group
    (a cycle): "User group N is already a subgroup of one of the passed subgroups."."""
    group, subgroups, existing = _group_and_subgroups(
        acting_user, group_id, ids, permission_setting="can_add_members_group"
    )
    for subgroup in subgroups:
        if subgroup.id in existing:
            raise JsonableError(f"User group {subgroup.id} is already a subgroup of this group.")
    if group.id in recursive_subgroup_ids([s.id for s in subgroups]):
        raise JsonableError(f"User group {group.id} is already a subgroup of one of the passed subgroups.")
    do_add_user_group_subgroups(group, subgroups, acting_user=acting_user)


def _remove_subgroups(acting_user: User, group_id: int, ids: list[int]) -> None:
    group, subgroups, existing = _group_and_subgroups(acting_user, group_id, ids, permission_setting="can_manage_group")
    for subgroup in subgroups:
        if subgroup.id not in existing:
            raise JsonableError(f"User group {subgroup.id} is not a subgroup of this group.")
    do_remove_user_group_subgroups(group, subgroups, acting_user=acting_user)


# --- the endpoints ----------------------------------------------------------------------------------


@transaction.atomic
def check_update_user_group_members(
    group_id: int,
    *,
    add: Sequence[int] = (),
    delete: Sequence[int] = (),
    add_subgroups: Sequence[int] = (),
    delete_subgroups: Sequence[int] = (),
    acting_user: User,
) -> None:
    """POST /user_groups/{id}/members: all the changes, in this order, each checked against what
    the ones before it did; or, when one is refused, none."""
    if not (add or delete or add_subgroups or delete_subgroups):
        raise JsonableError(
            'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'
        )
    if add_subgroups or delete_subgroups:
        lock_realm(acting_user.realm_id)  # before the group's row, in the order subgroup changes take
    if add:
        _add_members(acting_user, group_id, list(dict.fromkeys(add)))
    if delete:
        _remove_members(acting_user, group_id, list(dict.fromkeys(delete)))
    if add_subgroups:
        _add_subgroups(acting_user, group_id, list(add_subgroups))
    if delete_subgroups:
        _remove_subgroups(acting_user, group_id, list(delete_subgroups))


@transaction.atomic
def check_update_user_group_subgroups(
    group_id: int, *, add: Sequence[int] = (), delete: Sequence[int] = (), acting_user: User
) -> None:
    """POST /user_groups/{id}/subgroups: adds, then removes; all or nothing."""
    if not (add or delete):
        raise JsonableError('Nothing to do. Specify at least one of "add" or "delete".')
    if add:
        _add_subgroups(acting_user, group_id, list(add))
    if delete:
        _remove_subgroups(acting_user, group_id, list(delete))
