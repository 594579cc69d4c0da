"""Every change to user groups: system groups kept in step with roles, user-defined groups, their
members, subgroups and group-valued settings. Every event goes to the organization's active users."""

from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any

from django.db import IntegrityError, transaction

from apps.core.errors import ErrorCode, JsonableError
from apps.events.publish import forget_credentials_on_commit, send_event_on_commit
from apps.groups.hooks import group_deactivation_objections, group_membership_changing
from apps.groups.models import (
    GROUP_CREATOR,
    REALM_SETTINGS,
    GroupGroupMembership,
    GroupSetting,
    SystemGroups,
    UserGroup,
    UserGroupMembership,
)
from apps.groups.selectors import (
    access_subgroups_by_ids,
    access_user_group_for_update,
    access_users_by_ids,
    active_user_ids,
    get_system_group,
    get_user_group_in_realm,
    named_groups,
    recursive_subgroup_ids,
    setting_values_for_api,
    system_groups,
    user_group_dict,
)
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange, GroupSettingValue
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.users.models import Role, User


def _send(realm_id: int, event: dict[str, Any]) -> None:
    send_event_on_commit(realm_id, event, active_user_ids(realm_id))


def _send_members_event(group: UserGroup, op: str, user_ids: Iterable[int]) -> None:
    """Emits: user_group/add_members or remove_members {group_id, user_ids}."""
    _send(group.realm_id, {"type": "user_group", "op": op, "group_id": group.id, "user_ids": sorted(user_ids)})


def _send_update_event(group: UserGroup, data: dict[str, Any]) -> None:
    """Emits: user_group/update {group_id, data}."""
    _send(group.realm_id, {"type": "user_group", "op": "update", "group_id": group.id, "data": data})


def _lock_realm(realm_id: int) -> None:
    """Serialize the subgroup changes of one organization: two concurrent changes that are each
    acyclic could otherwise close a cycle together."""
    Realm.objects.select_for_update().filter(id=realm_id).first()


# --- system groups --------------------------------------------------------------------------------


@transaction.atomic
def do_create_system_groups(realm: Realm) -> dict[str, UserGroup]:
    """The organization's system groups, nested owners ⊂ administrators ⊂ ... ⊂ internet, with every
    setting "role:nobody"; and the organization's own group settings at their defaults (they point
    to these groups). Sends nothing: called while the organization is created."""
    groups = {
        name: UserGroup.objects.create(realm=realm, name=name, description=description, is_system_group=True)
        for name, description in SystemGroups.DESCRIPTIONS.items()
    }
    nobody = groups[SystemGroups.NOBODY]
    for group in groups.values():
        for name in UserGroup.SETTINGS:
            setattr(group, name, nobody)
    UserGroup.objects.bulk_update(groups.values(), list(UserGroup.SETTINGS))
    GroupGroupMembership.objects.bulk_create(
        GroupGroupMembership(subgroup=groups[smaller], supergroup=groups[larger])
        for smaller, larger in pairwise(SystemGroups.NESTED)
    )
    defaults = {name: groups[setting.default] for name, setting in REALM_SETTINGS.items()}
    Realm.objects.filter(id=realm.id).update(**defaults)
    for name, group in defaults.items():
        setattr(realm, name, group)
    return groups


def do_add_user_to_system_groups(user: User) -> None:
    """Make a new user a direct member of the system groups of their role.

    Emits: user_group/add_members for each, when the user is active.
    """
    groups = system_groups(user.realm_id)
    for name in SystemGroups.FOR_ROLE[user.role]:
        UserGroupMembership.objects.create(user_group=groups[name], user=user)
        if user.is_active:
            _send_members_event(groups[name], "add_members", [user.id])


def do_update_system_groups_for_role(user: User, old_role: int, new_role: int) -> None:
    """Move the user from the system groups of `old_role` to those of `new_role` (call inside the
    role change's transaction). Emits: user_group/remove_members then add_members, as Zulip orders
    them (role group out, role group in, then full members), when the user is active."""
    if old_role == new_role:
        return
    groups = system_groups(user.realm_id)
    old_names, new_names = SystemGroups.FOR_ROLE[old_role], SystemGroups.FOR_ROLE[new_role]
    steps = [("remove_members", old_names[0]), ("add_members", new_names[0])]
    if Role.MEMBER in (old_role, new_role):
        steps.append(("remove_members" if old_role == Role.MEMBER else "add_members", SystemGroups.FULL_MEMBERS))
    for op, name in steps:
        if op == "remove_members":
            UserGroupMembership.objects.filter(user_group=groups[name], user=user).delete()
        else:
            UserGroupMembership.objects.get_or_create(user_group=groups[name], user=user)
        if user.is_active:
            _send_members_event(groups[name], op, [user.id])


def send_membership_events_for_reactivation(user: User) -> None:
    """After a reactivation: clients dropped the user from every group at the deactivation.

    Emits: user_group/add_members for each named group the user is a direct member of, and
    user_group/update for each setting whose anonymous group lists the user.
    """
    groups = list(UserGroup.objects.filter(memberships__user=user).order_by("id"))
    for group in groups:
        if not group.is_anonymous:
            _send_members_event(group, "add_members", [user.id])
    send_setting_updates_for_user(user, [g.id for g in groups if g.is_anonymous])


def send_setting_updates_for_user(user: User, anonymous_group_ids: Sequence[int] | None = None) -> None:
    """A user's (de)activation changes the value of every setting whose anonymous group lists them
    (values list active users only). Emits: user_group/update {setting: value} for each."""
    if anonymous_group_ids is None:
        anonymous_group_ids = list(
            UserGroup.objects.filter(memberships__user=user, name__isnull=True).values_list("id", flat=True)
        )
    if not anonymous_group_ids:
        return
    values = setting_values_for_api(user.realm_id, anonymous_group_ids)
    for name in UserGroup.SETTINGS:
        for group in named_groups(user.realm).filter(**{f"{name}_id__in": anonymous_group_ids}).order_by("id"):
            _send_update_event(group, {name: values[getattr(group, f"{name}_id")]})


# --- checks shared by the endpoints --------------------------------------------------------------


def check_user_group_name(name: str) -> str:
    if not name.strip():
        raise JsonableError("User group name can't be empty!")
    if len(name) > UserGroup.MAX_NAME_LENGTH:
        raise JsonableError(f"User group name cannot exceed {UserGroup.MAX_NAME_LENGTH} characters.")
    for prefix in UserGroup.INVALID_NAME_PREFIXES:
        if name.startswith(prefix):
            raise JsonableError(f"User group name cannot start with '{prefix}'.")
    return name


def _check_name_available(realm: Realm, name: str, *, exclude: UserGroup | None = None) -> None:
    existing = named_groups(realm).filter(name__iexact=name)
    if exclude is not None:
        existing = existing.exclude(id=exclude.id)
    if existing.exists():
        raise JsonableError(f"User group '{name}' already exists.")


# --- group-valued settings (of groups here; of channels and others alike) ------------------------


def normalize_group_setting_value(value: GroupSettingValue, realm_id: int) -> GroupSettingValue:
    """Zulip's canonical form: a lone subgroup is that group; an empty value is role:nobody."""
    if isinstance(value, AnonymousGroupValue) and not value.direct_members:
        if len(value.direct_subgroups) == 1:
            return value.direct_subgroups[0]
        if not value.direct_subgroups:
            return get_system_group(realm_id, SystemGroups.NOBODY).id
    return value


def _same_value(first: GroupSettingValue, second: GroupSettingValue) -> bool:
    if isinstance(first, AnonymousGroupValue) and isinstance(second, AnonymousGroupValue):
        return set(first.direct_members) == set(second.direct_members) and set(first.direct_subgroups) == set(
            second.direct_subgroups
        )
    return first == second


def _current_value(current: UserGroup) -> GroupSettingValue:
    value = setting_values_for_api(current.realm_id, [current.id])[current.id]
    if isinstance(value, dict):
        return AnonymousGroupValue(tuple(value["direct_members"]), tuple(value["direct_subgroups"]))
    return value


def check_group_setting_change(change: GroupSettingChange, *, current: UserGroup) -> GroupSettingValue | None:
    """The normalized new value of a `{"new", "old"}` change of a setting now `current`, or None
    when it is already that. Raises EXPECTATION_MISMATCH when `old` is given and is not the
    current value (the client showed its user something else)."""
    now = _current_value(current)
    if change.old is not None and not _same_value(normalize_group_setting_value(change.old, current.realm_id), now):
        raise JsonableError("'old' value does not match the expected value.", code=ErrorCode.EXPECTATION_MISMATCH)
    new = normalize_group_setting_value(change.new, current.realm_id)
    return None if _same_value(new, now) else new


def check_group_setting_value(
    realm: Realm,
    setting_name: str,
    value: GroupSettingValue,
    *,
    setting: GroupSetting,
    current: UserGroup | None = None,
) -> UserGroup:
    """The group a setting will point to for the (normalized) API value `value`.

    A group id must name an active named group of the organization that `setting` allows; a
    `{direct_members, direct_subgroups}` value becomes an anonymous group (`current` is reused when
    it is one). Raises Zulip's errors; call inside the transaction that stores the setting.
    """
    if isinstance(value, int):
        group = get_user_group_in_realm(realm, value)
        refused = {
            SystemGroups.EVERYONE_ON_INTERNET: not setting.allow_internet_group,
            SystemGroups.NOBODY: not setting.allow_nobody_group,
            SystemGroups.EVERYONE: not setting.allow_everyone_group,
        }
        if group.is_system_group and refused.get(group.name):
            raise JsonableError(f"'{setting_name}' setting cannot be set to '{group.name}' group.")
        return group
    members = access_users_by_ids(realm, value.direct_members)
    subgroups = access_subgroups_by_ids(realm, value.direct_subgroups)
    if current is not None and current.is_anonymous:
        group = current
        UserGroupMembership.objects.filter(user_group=group).delete()
        GroupGroupMembership.objects.filter(supergroup=group).delete()
    else:
        group = UserGroup.objects.create(realm=realm, name=None, date_created=None)
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=u) for u in members)
    GroupGroupMembership.objects.bulk_create(GroupGroupMembership(supergroup=group, subgroup=s) for s in subgroups)
    return group


def delete_unused_setting_group(old: UserGroup, new: UserGroup) -> None:
    """After a setting moved from `old` to `new`: an anonymous group belongs to its one setting."""
    if old.is_anonymous and old.id != new.id:
        old.delete()


# --- user-defined groups --------------------------------------------------------------------------


@transaction.atomic
def check_add_user_group(
    realm: Realm,
    name: str,
    member_ids: Sequence[int],
    description: str = "",
    *,
    settings: dict[str, GroupSettingValue] | None = None,
    subgroup_ids: Sequence[int] = (),
    acting_user: User | None,
) -> UserGroup:
    """Create a group with these direct members, subgroups and settings, checked in Zulip's order.

    Settings not given take Zulip's defaults; "the creator" (can_manage_group,
    can_add_members_group) is role:nobody when there is no acting user. Raises "Invalid user ID: N",
    name errors, setting errors, "User group 'x' already exists.", "Invalid user group ID: N".
    Emits: user_group/add with the whole group.
    """
    members = access_users_by_ids(realm, member_ids)
    name = check_user_group_name(name)
    nobody = get_system_group(realm.id, SystemGroups.NOBODY)
    values = {}
    for setting_name, value in (settings or {}).items():
        value = normalize_group_setting_value(value, realm.id)
        values[setting_name] = check_group_setting_value(
            realm, setting_name, value, setting=UserGroup.SETTINGS[setting_name]
        )
    _check_name_available(realm, name)
    defaults = system_groups(realm.id)
    for setting_name, setting in UserGroup.SETTINGS.items():
        if setting_name in values:
            continue
        if setting.default != GROUP_CREATOR:
            values[setting_name] = defaults[setting.default]
        elif acting_user is None:
            values[setting_name] = nobody
        else:
            creator = AnonymousGroupValue((acting_user.id,), ())
            values[setting_name] = check_group_setting_value(realm, setting_name, creator, setting=setting)
    subgroups = []
    if subgroup_ids:
        _lock_realm(realm.id)
        subgroups = access_subgroups_by_ids(realm, subgroup_ids)
    try:
        with transaction.atomic():
            group = UserGroup.objects.create(
                realm=realm, name=name, description=description, creator=acting_user, **values
            )
    except IntegrityError:
        raise JsonableError(f"User group '{name}' already exists.") from None
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=u) for u in members)
    GroupGroupMembership.objects.bulk_create(GroupGroupMembership(supergroup=group, subgroup=s) for s in subgroups)
    _send(realm.id, {"type": "user_group", "op": "add", "group": user_group_dict(group)})
    return group


@transaction.atomic
def do_update_user_group_name(group: UserGroup, name: str, *, acting_user: User | None) -> None:
    """Rename (the name already checked). Raises if another group has it. Emits: user_group/update {name}."""
    _check_name_available(group.realm, name, exclude=group)
    group.name = name
    try:
        with transaction.atomic():
            group.save(update_fields=["name"])
    except IntegrityError:
        raise JsonableError(f"User group '{name}' already exists.") from None
    _send_update_event(group, {"name": name})


@transaction.atomic
def do_update_user_group_description(group: UserGroup, description: str, *, acting_user: User | None) -> None:
    """Emits: user_group/update {description}."""
    group.description = description
    group.save(update_fields=["description"])
    _send_update_event(group, {"description": description})


@transaction.atomic
def do_change_user_group_setting(
    group: UserGroup, name: str, value: GroupSettingValue, *, acting_user: User | None
) -> None:
    """Set the setting `name` to `value` (normalized, and checked by check_group_setting_change).

    An anonymous value replaces the previous anonymous group's members in place; one no longer used
    is deleted. Emits: user_group/update {name: the value as the API shows it}.
    """
    current = getattr(group, name)
    new = check_group_setting_value(group.realm, name, value, setting=UserGroup.SETTINGS[name], current=current)
    setattr(group, name, new)
    group.save(update_fields=[name])
    delete_unused_setting_group(current, new)
    _send_update_event(group, {name: setting_values_for_api(group.realm_id, [new.id])[new.id]})


@transaction.atomic
def do_deactivate_user_group(group: UserGroup, *, acting_user: User | None) -> None:
    """Deactivate a group nothing active uses (see check_deactivate_user_group).

    Emits: user_group/update {deactivated: true}, which queues without the
    `include_deactivated_groups` capability receive as user_group/remove (apps.groups.events).
    """
    group.deactivated = True
    group.save(update_fields=["deactivated"])
    _send_update_event(group, {"deactivated": True})


@transaction.atomic
def do_reactivate_user_group(group: UserGroup, *, acting_user: User | None) -> None:
    """Emits: user_group/add with the group, which queues with the `include_deactivated_groups`
    capability receive as user_group/update {deactivated: false}."""
    group.deactivated = False
    group.save(update_fields=["deactivated"])
    event = {"type": "user_group", "op": "add", "group": user_group_dict(group), "for_reactivation": True}
    _send(group.realm_id, event)


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


@transaction.atomic
def check_deactivate_user_group(group_id: int, *, acting_user: User) -> None:
    """POST /user_groups/{id}/deactivate: for those who may manage the group, when nothing uses it."""
    _lock_realm(acting_user.realm_id)  # nothing starts using the group meanwhile
    group = access_user_group_for_update(acting_user, group_id, permission_setting="can_manage_group")
    objections = deactivation_objections(group)
    if objections:
        raise JsonableError(
            "Cannot deactivate user group in use.", code=ErrorCode.CANNOT_DEACTIVATE_GROUP_IN_USE, objections=objections
        )
    do_deactivate_user_group(group, acting_user=acting_user)


@transaction.atomic
def check_update_user_group(
    group_id: int,
    *,
    name: str | None = None,
    description: str | None = None,
    deactivated: bool | None = None,
    settings: dict[str, GroupSettingChange] | None = None,
    acting_user: User,
) -> None:
    """PATCH /user_groups/{id}: every requested change or, when one is refused, none.

    Deactivated groups may be edited (and reactivated with `deactivated: false`). A setting's `old`,
    when given, must be its current value (EXPECTATION_MISMATCH otherwise).
    """
    settings = settings or {}
    if name is None and description is None and deactivated is None and not settings:
        raise JsonableError("No new data supplied")
    group = access_user_group_for_update(
        acting_user, group_id, permission_setting="can_manage_group", allow_deactivated=True
    )
    if name is not None and name != group.name:
        do_update_user_group_name(group, check_user_group_name(name), acting_user=acting_user)
    if description is not None and description != group.description:
        do_update_user_group_description(group, description, acting_user=acting_user)
    if deactivated is False and group.deactivated:
        do_reactivate_user_group(group, acting_user=acting_user)
    for setting_name, change in settings.items():
        new = check_group_setting_change(change, current=getattr(group, setting_name))
        if new is not None:
            do_change_user_group_setting(group, setting_name, new, acting_user=acting_user)


# --- members and subgroups -------------------------------------------------------------------------


def _membership_changing(group: UserGroup) -> Callable[[], None]:
    """Call before the group's members or subgroups change; call what it returns after (the
    group_membership_changing hooks: who gains or loses sight of a private channel through it)."""
    after_steps = group_membership_changing.call(group)

    def after() -> None:
        for step in after_steps:
            if step is not None:
                step()

    return after


@transaction.atomic
def do_add_user_group_members(group: UserGroup, users: Sequence[User], *, acting_user: User | None) -> None:
    """Emits: user_group/add_members; then, to users who now see a private channel through the
    group, stream/create and subscription/peer_add."""
    membership_changed = _membership_changing(group)
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=u) for u in users)
    _send_members_event(group, "add_members", [u.id for u in users])
    membership_changed()


@transaction.atomic
def do_remove_user_group_members(group: UserGroup, users: Sequence[User], *, acting_user: User | None) -> None:
    """Emits: user_group/remove_members; then stream/delete to users who no longer see a private
    channel they saw through the group."""
    membership_changed = _membership_changing(group)
    UserGroupMembership.objects.filter(user_group=group, user__in=users).delete()
    _send_members_event(group, "remove_members", [u.id for u in users])
    membership_changed()


@transaction.atomic
def do_add_user_group_subgroups(group: UserGroup, subgroups: Sequence[UserGroup], *, acting_user: User | None) -> None:
    """Emits: user_group/add_subgroups {group_id, direct_subgroup_ids}; then, to users who now see
    a private channel through the group, stream/create and subscription/peer_add."""
    membership_changed = _membership_changing(group)
    GroupGroupMembership.objects.bulk_create(GroupGroupMembership(supergroup=group, subgroup=s) for s in subgroups)
    event = {"type": "user_group", "op": "add_subgroups", "group_id": group.id}
    _send(group.realm_id, {**event, "direct_subgroup_ids": sorted(s.id for s in subgroups)})
    membership_changed()


@transaction.atomic
def do_remove_user_group_subgroups(
    group: UserGroup, subgroups: Sequence[UserGroup], *, acting_user: User | None
) -> None:
    """Emits: user_group/remove_subgroups {group_id, direct_subgroup_ids}; then stream/delete to
    users who no longer see a private channel they saw through the group."""
    membership_changed = _membership_changing(group)
    GroupGroupMembership.objects.filter(supergroup=group, subgroup__in=subgroups).delete()
    event = {"type": "user_group", "op": "remove_subgroups", "group_id": group.id}
    _send(group.realm_id, {**event, "direct_subgroup_ids": sorted(s.id for s in subgroups)})
    membership_changed()


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


def check_add_members(acting_user: User, group_id: int, user_ids: list[int]) -> None:
    group = _access_for_membership_change(acting_user, group_id, user_ids, adding=True)
    users = access_users_by_ids(group.realm, user_ids)
    existing = set(
        UserGroupMembership.objects.filter(user_group=group, user__in=users).values_list("user_id", flat=True)
    )
    for user in users:
        if user.id in existing:
            raise JsonableError(f"User {user.id} is already a member of this group")
    do_add_user_group_members(group, users, acting_user=acting_user)


def check_remove_members(acting_user: User, group_id: int, user_ids: list[int]) -> None:
    users = access_users_by_ids(acting_user.realm, user_ids)
    group = _access_for_membership_change(acting_user, group_id, user_ids, adding=False)
    existing = set(
        UserGroupMembership.objects.filter(user_group=group, user__in=users).values_list("user_id", flat=True)
    )
    for user in users:
        if user.id not in existing:
            raise JsonableError(f"There is no member '{user.id}' in this user group")
    do_remove_user_group_members(group, users, acting_user=acting_user)


def _group_and_subgroups(
    acting_user: User, group_id: int, subgroup_ids: list[int], *, permission_setting: str
) -> tuple[UserGroup, list[UserGroup], set[int]]:
    """For a subgroup change: the group (if the user may change it), the given subgroups, and the
    ids of the group's current direct subgroups. The organization is locked first (see _lock_realm)."""
    _lock_realm(acting_user.realm_id)
    group = access_user_group_for_update(
        acting_user, group_id, permission_setting=permission_setting, allow_deactivated=True
    )
    subgroups = access_subgroups_by_ids(group.realm, subgroup_ids)
    existing = set(GroupGroupMembership.objects.filter(supergroup=group).values_list("subgroup_id", flat=True))
    return group, subgroups, existing


def check_add_subgroups(acting_user: User, group_id: int, subgroup_ids: list[int]) -> None:
    """Raises for subgroups that are missing, deactivated, already there, or that contain the group
    (a cycle): "User group N is already a subgroup of one of the passed subgroups."."""
    group, subgroups, existing = _group_and_subgroups(
        acting_user, group_id, subgroup_ids, permission_setting="can_add_members_group"
    )
    for subgroup in subgroups:
        if subgroup.id in existing:
            raise JsonableError(f"User group {subgroup.id} is already a subgroup of this group.")
    if group.id in recursive_subgroup_ids([s.id for s in subgroups]):
        raise JsonableError(f"User group {group.id} is already a subgroup of one of the passed subgroups.")
    do_add_user_group_subgroups(group, subgroups, acting_user=acting_user)


def check_remove_subgroups(acting_user: User, group_id: int, subgroup_ids: list[int]) -> None:
    group, subgroups, existing = _group_and_subgroups(
        acting_user, group_id, subgroup_ids, permission_setting="can_manage_group"
    )
    for subgroup in subgroups:
        if subgroup.id not in existing:
            raise JsonableError(f"User group {subgroup.id} is not a subgroup of this group.")
    do_remove_user_group_subgroups(group, subgroups, acting_user=acting_user)


@transaction.atomic
def check_update_user_group_members(
    group_id: int,
    *,
    add: list[int],
    delete: list[int],
    add_subgroups: list[int] = (),
    delete_subgroups: list[int] = (),
    acting_user: User,
) -> None:
    """POST /user_groups/{id}/members: all the changes (in this order) or, when one is refused, none."""
    if not (add or delete or add_subgroups or delete_subgroups):
        raise JsonableError(
            'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'
        )
    if add_subgroups or delete_subgroups:
        _lock_realm(acting_user.realm_id)  # before the group's row, in the order subgroup changes take
    if add:
        check_add_members(acting_user, group_id, list(dict.fromkeys(add)))
    if delete:
        check_remove_members(acting_user, group_id, list(dict.fromkeys(delete)))
    if add_subgroups:
        check_add_subgroups(acting_user, group_id, add_subgroups)
    if delete_subgroups:
        check_remove_subgroups(acting_user, group_id, delete_subgroups)


@transaction.atomic
def check_update_user_group_subgroups(group_id: int, *, add: list[int], delete: list[int], acting_user: User) -> None:
    """POST /user_groups/{id}/subgroups: adds, then removes; all or nothing."""
    if not (add or delete):
        raise JsonableError('Nothing to do. Specify at least one of "add" or "delete".')
    if add:
        check_add_subgroups(acting_user, group_id, add)
    if delete:
        check_remove_subgroups(acting_user, group_id, delete)


# --- the organization's group settings ------------------------------------------------------------


@transaction.atomic
def do_change_realm_permission_group_setting(
    realm: Realm, setting_name: str, group_id: int, *, acting_user: User | None
) -> None:
    """Point a group-valued organization setting (REALM_SETTINGS, e.g. who may create public
    channels) at the named group `group_id`. Raises "Invalid user group" and Zulip's error for a
    group the setting refuses (role:everyone, role:internet).

    Emits: realm/update_dict {property: "default", data: {setting_name: group_id}} to the
    organization's active users (Zulip's event for these settings). Audit: REALM_PROPERTY_CHANGED.
    """
    current_id = (
        Realm.objects.select_for_update().filter(id=realm.id).values_list(f"{setting_name}_id", flat=True).get()
    )
    group = check_group_setting_value(realm, setting_name, group_id, setting=REALM_SETTINGS[setting_name])
    if group.id == current_id:
        return
    Realm.objects.filter(id=realm.id).update(**{setting_name: group})
    setattr(realm, setting_name, group)
    extra_data = changed(setting_name, current_id, group.id)
    audit(realm, AuditLogEventType.REALM_PROPERTY_CHANGED, extra_data=extra_data, acting_user=acting_user)
    forget_credentials_on_commit(realm_ids=[realm.id])  # the organization cached with the old value
    event = {"type": "realm", "op": "update_dict", "property": "default", "data": {setting_name: group.id}}
    send_event_on_commit(realm, event, active_user_ids(realm.id))
