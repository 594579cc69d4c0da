"""Reads of user groups, always scoped to one organization, and the membership questions the rest of
Parley asks ("is this user in this setting's group?") through nested subgroups in one query each.

Membership through subgroups is read with recursive common table expressions, which PostgreSQL and
SQLite both run. `UNION` (not `UNION ALL`) makes each walk stop at groups already reached. Every
read ignores deactivated users: their memberships are kept for a reactivation.

For channels and other apps whose permissions are group settings (a ForeignKey to UserGroup with
a GroupSetting describing it; values are checked with `access_group_setting_value` and stored
with apps.groups.actions.settings' `check_group_setting_value` and `check_group_setting_change`):

- `recursive_membership_group_ids(user)`: every group the user is in, once per request; then any
  number of settings are checked with `user_has_permission(user, group_id, setting, ids)`.
- `is_user_in_group(group_id, user)`: one question, one query.
- `group_member_ids(group_id)` and `member_ids_by_group(group_ids)`: who is in them (e.g. who may
  see a change), one query for any number of groups.
- `setting_values_for_api(realm_id, group_ids)`: the API value of settings (an id, or the
  anonymous group's members and subgroups), three queries for any number.
"""

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from apps.core.errors import JsonableError
from apps.groups.hooks import group_deactivation_objections
from apps.groups.models import (
    REALM_SETTINGS,
    GroupGroupMembership,
    GroupSetting,
    SystemGroups,
    UserGroup,
    UserGroupMembership,
)
from apps.groups.serializers import AnonymousGroupValue, GroupSettingValue, user_group_to_dict
from apps.realms.models import Realm
from apps.users.models import User

GROUPS = UserGroup._meta.db_table
MEMBERSHIPS = UserGroupMembership._meta.db_table
LINKS = GroupGroupMembership._meta.db_table
USERS = User._meta.db_table


# --- finding groups -------------------------------------------------------------------------------


def system_groups(realm_id: int) -> dict[str, UserGroup]:
    """The organization's system groups by name."""
    return {g.name: g for g in UserGroup.objects.filter(realm_id=realm_id, is_system_group=True).order_by("id")}


def get_system_group(realm_id: int, name: str) -> UserGroup:
    return UserGroup.objects.get(realm_id=realm_id, is_system_group=True, name=name)


def named_groups(realm: Realm):
    return UserGroup.objects.filter(realm=realm, name__isnull=False)


def is_group_name_taken(realm: Realm, name: str, *, exclude: UserGroup | None = None) -> bool:
    """Whether another named group of the organization has `name`, whatever its case."""
    existing = named_groups(realm).filter(name__iexact=name)
    if exclude is not None:
        existing = existing.exclude(id=exclude.id)
    return existing.exists()


def get_user_group_in_realm(
    realm: Realm, group_id: int, *, for_update: bool = False, allow_deactivated: bool = False
) -> UserGroup:
    """The named group `group_id` of `realm`, locked when `for_update`.

    Raises "Invalid user group" for ids of other organizations and anonymous groups alike, and
    "User group is deactivated." unless `allow_deactivated`. No permission check.
    """
    groups = named_groups(realm).select_related("realm")
    if for_update:
        # The group's row only: the organization's row is locked first, when at all (subgroup changes).
        groups = groups.select_for_update(of=("self",))
    group = groups.filter(id=group_id).first()
    if group is None:
        raise JsonableError("Invalid user group")
    if group.deactivated and not allow_deactivated:
        raise JsonableError("User group is deactivated.")
    return group


def access_users_by_ids(realm: Realm, user_ids: Iterable[int]) -> list[User]:
    """The active users (bots included, not the server's own: Zulip's are in no organization) with
    these ids, in order; "Invalid user ID: N" otherwise."""
    user_ids = list(dict.fromkeys(user_ids))
    users = User.objects.filter(realm=realm, id__in=user_ids, is_active=True).exclude(User.SYSTEM_BOTS)
    found = {u.id: u for u in users}
    for user_id in user_ids:
        if user_id not in found:
            raise JsonableError(f"Invalid user ID: {user_id}")
    return [found[user_id] for user_id in user_ids]


def access_subgroups_by_ids(realm: Realm, group_ids: Iterable[int]) -> list[UserGroup]:
    """Named, active groups of the organization, in order, that may be subgroups."""
    group_ids = list(dict.fromkeys(group_ids))
    found = {g.id: g for g in named_groups(realm).filter(id__in=group_ids)}
    for group_id in group_ids:
        if group_id not in found:
            raise JsonableError(f"Invalid user group ID: {group_id}")
    for group_id in group_ids:
        if found[group_id].deactivated:
            raise JsonableError("User group is deactivated.")
    return [found[group_id] for group_id in group_ids]


@dataclass(frozen=True)
class AnonymousGroupMembers:
    """The anonymous group a setting is to have: its direct members and subgroups, checked."""

    members: list[User]
    subgroups: list[UserGroup]


def access_group_setting_value(
    realm: Realm, setting_name: str, value: GroupSettingValue, *, setting: GroupSetting
) -> UserGroup | AnonymousGroupMembers:
    """What a (normalized) setting value names, if `setting` allows it: an active named group of
    the organization, or the members and subgroups of an anonymous group to be. Raises Zulip's
    errors ("Invalid user group", "'x' setting cannot be set to 'role:y' group.", "Invalid user
    ID: N", ...)."""
    if isinstance(value, AnonymousGroupValue):
        if setting.require_system_group:
            raise JsonableError(f"'{setting_name}' must be a system user group.")
        members = access_users_by_ids(realm, value.direct_members)
        return AnonymousGroupMembers(members, access_subgroups_by_ids(realm, value.direct_subgroups))
    group = get_user_group_in_realm(realm, value)
    refused = {
        SystemGroups.EVERYONE_ON_INTERNET: not setting.allow_internet_group,
        SystemGroups.NOBODY: not setting.allow_nobody_group,
        SystemGroups.EVERYONE: not setting.allow_everyone_group,
    }
    if setting.require_system_group and not group.is_system_group:
        raise JsonableError(f"'{setting_name}' must be a system user group.")
    if group.is_system_group and (
        refused.get(group.name) or (setting.allowed_system_groups and group.name not in setting.allowed_system_groups)
    ):
        raise JsonableError(f"'{setting_name}' setting cannot be set to '{group.name}' group.")
    return group


def access_user_group_to_read(user: User, group_id: int) -> UserGroup:
    return get_user_group_in_realm(user.realm, group_id)


def can_manage_all_groups(user: User) -> bool:
    """The organization's `can_manage_all_groups` (owners by default, as in Zulip)."""
    return user.is_active and has_realm_permission(user, "can_manage_all_groups")


def access_user_group_for_update(
    user: User, group_id: int, *, permission_setting: str, allow_deactivated: bool = False
) -> UserGroup:
    """The group, locked, if `user` may change it in the way `permission_setting` governs.

    Administrators and members of the group's `can_manage_group` may do everything; otherwise the
    user must be in `permission_setting` (e.g. `can_add_members_group`). System groups follow roles
    and are never changed here. Raises "Invalid user group" or "Insufficient permission".
    """
    group = get_user_group_in_realm(user.realm, group_id, for_update=True, allow_deactivated=allow_deactivated)
    check_user_group_permission(user, group, permission_setting=permission_setting)
    return group


def check_user_group_permission(
    user: User, group: UserGroup, *, permission_setting: str, membership: Collection[int] | None = None
) -> None:
    """Raises "Insufficient permission" unless `user` may change `group` in the way
    `permission_setting` governs (access_user_group_for_update's rule, for a group in hand).
    `membership`: the user's recursive_membership_group_ids, when the caller checks many groups."""
    if group.is_system_group:
        raise JsonableError("Insufficient permission")
    if can_manage_all_groups(user):
        return
    if membership is None:
        membership = recursive_membership_group_ids(user)
    for name in dict.fromkeys(("can_manage_group", permission_setting)):
        if user_has_permission(user, getattr(group, f"{name}_id"), UserGroup.SETTINGS[name], membership):
            return
    raise JsonableError("Insufficient permission")


def user_has_permission(user: User, group_id: int, setting: GroupSetting, membership: Collection[int]) -> bool:
    """Whether `user`, in the groups `membership` (from recursive_membership_group_ids), holds a
    setting whose value is `group_id`. Guests never hold settings that cannot be "everyone"."""
    if user.is_guest and not setting.allow_everyone_group:
        return False
    return group_id in membership


def has_realm_permission(user: User, name: str, membership: Collection[int] | None = None) -> bool:
    """Whether `user` holds their organization's group-valued setting `name` (REALM_SETTINGS);
    `membership`, their groups, if read already."""
    group_id = getattr(user.realm, f"{name}_id")
    if membership is None:
        membership = recursive_membership_group_ids(user)
    return user_has_permission(user, group_id, REALM_SETTINGS[name], membership)


# --- membership through subgroups ---------------------------------------------------------------


def _fetch(sql: str, params: list) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


# The SQL below is built from the models' table names only; every value is a query parameter.


def _downward(seed_count: int) -> str:
    """`tree(root, id)`: each of `seed_count` seed groups, and every group inside it at any depth,
    with the seed it was reached from."""
    seeds = ", ".join(["%s"] * seed_count)
    return f"""
        WITH RECURSIVE tree(root, id) AS (
            SELECT id, id FROM {GROUPS} WHERE id IN ({seeds})
            UNION
            SELECT tree.root, link.subgroup_id FROM {LINKS} link JOIN tree ON link.supergroup_id = tree.id
        )"""  # noqa: S608


def recursive_subgroup_ids(group_ids: Collection[int]) -> set[int]:
    """The given groups and every group nested in them, at any depth."""
    if not group_ids:
        return set()
    sql = _downward(len(group_ids)) + " SELECT DISTINCT id FROM tree"  # noqa: S608
    return {row[0] for row in _fetch(sql, list(group_ids))}


def recursive_supergroup_ids(group_ids: Collection[int]) -> set[int]:
    """The given groups and every group (named or anonymous) that contains one of them, at any depth."""
    if not group_ids:
        return set()
    seeds = ", ".join(["%s"] * len(group_ids))
    sql = f"""
        WITH RECURSIVE up(id) AS (
            SELECT id FROM {GROUPS} WHERE id IN ({seeds})
            UNION
            SELECT link.supergroup_id FROM {LINKS} link JOIN up ON link.subgroup_id = up.id
        )
        SELECT id FROM up"""  # noqa: S608
    return {row[0] for row in _fetch(sql, list(group_ids))}


def recursive_membership_group_ids(user: User) -> set[int]:
    """Every group (named or anonymous) `user` belongs to, directly or through subgroups."""
    if not user.is_active:
        return set()
    sql = f"""
        WITH RECURSIVE up(id) AS (
            SELECT user_group_id FROM {MEMBERSHIPS} WHERE user_id = %s
            UNION
            SELECT link.supergroup_id FROM {LINKS} link JOIN up ON link.subgroup_id = up.id
        )
        SELECT id FROM up"""  # noqa: S608
    return {row[0] for row in _fetch(sql, [user.id])}


def is_user_in_group(group_id: int, user: User, *, direct_member_only: bool = False) -> bool:
    """Whether the (active) user is in the group, directly or, unless `direct_member_only`, through
    any depth of subgroups."""
    if not user.is_active:
        return False
    if direct_member_only:
        return UserGroupMembership.objects.filter(user_group_id=group_id, user_id=user.id).exists()
    sql = _downward(1) + f" SELECT 1 FROM tree JOIN {MEMBERSHIPS} m ON m.user_group_id = tree.id"  # noqa: S608
    return bool(_fetch(sql + " WHERE m.user_id = %s LIMIT 1", [group_id, user.id]))


def member_ids_by_group(
    group_ids: Collection[int], *, direct_member_only: bool = False, among: Collection[int] | None = None
) -> dict[int, set[int]]:
    """{group id: ids of its active members}, directly or through subgroups, in one query; with
    `among`, only those of these users (who of a few people holds a setting)."""
    result: dict[int, set[int]] = {group_id: set() for group_id in group_ids}
    if not group_ids or (among is not None and not among):
        return result
    if direct_member_only:
        rows = UserGroupMembership.objects.filter(user_group_id__in=group_ids, user__is_active=True)
        if among is not None:
            rows = rows.filter(user_id__in=among)
        rows = rows.values_list("user_group_id", "user_id")
    else:
        members = f"""
            SELECT DISTINCT tree.root, m.user_id FROM tree
            JOIN {MEMBERSHIPS} m ON m.user_group_id = tree.id
            JOIN {USERS} u ON u.id = m.user_id
            WHERE u.is_active = %s"""  # noqa: S608
        params = [*group_ids, True]
        if among is not None:
            members += f" AND m.user_id IN ({', '.join(['%s'] * len(among))})"
            params += list(among)
        rows = _fetch(_downward(len(group_ids)) + members, params)
    for group_id, user_id in rows:
        result[group_id].add(user_id)
    return result


def member_ids_of_named_groups(realm: Realm, group_ids: Iterable[int]) -> set[int]:
    """The active members, through subgroups, of these named groups of the organization (deactivated
    groups too); "Invalid user group ID: N" for an id that is not one (another organization's, an
    anonymous group's)."""
    group_ids = list(dict.fromkeys(group_ids))
    found = set(named_groups(realm).filter(id__in=group_ids).values_list("id", flat=True))
    for group_id in group_ids:
        if group_id not in found:
            raise JsonableError(f"Invalid user group ID: {group_id}")
    return set().union(*member_ids_by_group(group_ids).values())


def group_member_ids(group_id: int, *, direct_member_only: bool = False) -> list[int]:
    """Ids of the group's active members, sorted."""
    return sorted(member_ids_by_group([group_id], direct_member_only=direct_member_only)[group_id])


def subgroup_ids(group_id: int, *, direct_subgroup_only: bool = False) -> list[int]:
    """Ids of the group's subgroups, sorted: direct ones, or at any depth (the group excluded)."""
    if direct_subgroup_only:
        direct = GroupGroupMembership.objects.filter(supergroup_id=group_id).values_list("subgroup_id", flat=True)
        return sorted(direct)
    return sorted(recursive_subgroup_ids([group_id]) - {group_id})


def direct_member_ids_among(group: UserGroup, users: Iterable[User]) -> set[int]:
    """Which of `users` are direct members of the group (deactivated users included)."""
    return set(UserGroupMembership.objects.filter(user_group=group, user__in=users).values_list("user_id", flat=True))


def direct_groups_of(user: User) -> list[UserGroup]:
    """The groups, named and anonymous, the user is a direct member of, by id."""
    return list(UserGroup.objects.filter(memberships__user=user).order_by("id"))


def anonymous_group_ids_of(user: User) -> list[int]:
    """The anonymous groups (setting values) that list the user directly."""
    return list(UserGroup.objects.filter(memberships__user=user, name__isnull=True).values_list("id", flat=True))


def groups_with_setting_in(realm: Realm, setting_name: str, group_ids: Collection[int]) -> list[UserGroup]:
    """The named groups whose setting `setting_name` is one of `group_ids`, by id."""
    return list(named_groups(realm).filter(**{f"{setting_name}_id__in": group_ids}).order_by("id"))


def deactivation_objections(group: UserGroup) -> list[dict[str, Any]]:
    """What still uses the group: active supergroups, and settings of active groups, of what the
    group_deactivation_objections hooks report (active channels) and of the organization whose
    value is the group or an anonymous group containing it. Zulip's `objections` list."""
    objections: list[dict[str, Any]] = []
    supergroups = named_groups(group.realm).filter(subgroup_links__subgroup=group, deactivated=False)
    supergroup_ids = sorted(supergroups.values_list("id", flat=True))
    if supergroup_ids:
        objections.append({"type": "subgroup", "supergroup_ids": supergroup_ids})
    anonymous = UserGroup.objects.filter(name__isnull=True, subgroup_links__subgroup=group).values_list("id", flat=True)
    users_of_group = {group.id, *anonymous}
    for other in named_groups(group.realm).filter(deactivated=False).order_by("id"):
        settings = [name for name in UserGroup.SETTINGS if getattr(other, f"{name}_id") in users_of_group]
        if settings:
            objections.append({"type": "user_group", "group_id": other.id, "settings": settings})
    for objections_of_app in group_deactivation_objections.call(group, users_of_group):
        objections.extend(objections_of_app)
    realm_values = Realm.objects.filter(id=group.realm_id).values(*(f"{name}_id" for name in REALM_SETTINGS)).get()
    settings = [name for name in REALM_SETTINGS if realm_values[f"{name}_id"] in users_of_group]
    if settings:
        objections.append({"type": "realm", "settings": settings})
    return objections


# --- wire shapes --------------------------------------------------------------------------------


def _direct_rows(realm_id: int, group_ids: Iterable[int] | None = None) -> tuple[dict, dict]:
    """({group id: [active direct member ids]}, {group id: [direct subgroup ids]}), two queries."""
    memberships = UserGroupMembership.objects.filter(user_group__realm_id=realm_id, user__is_active=True)
    links = GroupGroupMembership.objects.filter(supergroup__realm_id=realm_id)
    if group_ids is not None:
        group_ids = list(group_ids)
        memberships = memberships.filter(user_group_id__in=group_ids)
        links = links.filter(supergroup_id__in=group_ids)
    members: dict[int, list[int]] = defaultdict(list)
    subgroups: dict[int, list[int]] = defaultdict(list)
    for group_id, user_id in memberships.values_list("user_group_id", "user_id"):
        members[group_id].append(user_id)
    for group_id, subgroup_id in links.values_list("supergroup_id", "subgroup_id"):
        subgroups[group_id].append(subgroup_id)
    return members, subgroups


def _setting_value(group: UserGroup, members: dict, subgroups: dict) -> int | dict[str, list[int]]:
    if not group.is_anonymous:
        return group.id
    return {"direct_members": sorted(members[group.id]), "direct_subgroups": sorted(subgroups[group.id])}


def groups_by_id(realm_id: int, group_ids: Collection[int]) -> dict[int, UserGroup]:
    """The organization's groups of these ids (named or anonymous), by id: one query."""
    return {group.id: group for group in UserGroup.objects.filter(realm_id=realm_id, id__in=group_ids)}


def setting_values_for_api(
    realm_id: int, group_ids: Collection[int], *, groups: Collection[UserGroup] | None = None
) -> dict[int, int | dict[str, list[int]]]:
    """{setting group id: its API value}: the id of a named group, or an anonymous group's
    `{direct_members, direct_subgroups}`. Three queries, however many settings (two given the
    `groups` of `group_ids`)."""
    if groups is None:
        groups = list(UserGroup.objects.filter(realm_id=realm_id, id__in=group_ids))
    members, subgroups = _direct_rows(realm_id, [g.id for g in groups if g.is_anonymous])
    return {g.id: _setting_value(g, members, subgroups) for g in groups}


def user_groups_in_realm_serialized(realm: Realm, *, include_deactivated: bool) -> list[dict]:
    """Every named group of the organization as the API shows it, sorted by id: three queries,
    however many groups, members and subgroups there are."""
    groups = list(UserGroup.objects.filter(realm=realm))
    by_id = {g.id: g for g in groups}
    members, subgroups = _direct_rows(realm.id)
    result = []
    for group in groups:
        if group.is_anonymous or (group.deactivated and not include_deactivated):
            continue
        settings = {
            name: _setting_value(by_id[getattr(group, f"{name}_id")], members, subgroups) for name in UserGroup.SETTINGS
        }
        result.append(
            user_group_to_dict(
                group, members=members[group.id], direct_subgroup_ids=subgroups[group.id], settings=settings
            )
        )
    return sorted(result, key=lambda item: item["id"])


def user_group_dict(group: UserGroup) -> dict:
    """One group as the API shows it (the `user_group/add` event)."""
    setting_ids = [getattr(group, f"{name}_id") for name in UserGroup.SETTINGS]
    values = setting_values_for_api(group.realm_id, setting_ids)
    members, subgroups = _direct_rows(group.realm_id, [group.id])
    return user_group_to_dict(
        group,
        members=members[group.id],
        direct_subgroup_ids=subgroups[group.id],
        settings={name: values[getattr(group, f"{name}_id")] for name in UserGroup.SETTINGS},
    )
