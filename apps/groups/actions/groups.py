"""User-defined groups: created, renamed, described, deactivated and reactivated; PATCH
/user_groups/{id} changes any of these and the group's settings at once.

Audit: USER_GROUP_CREATED (with the members and subgroups it starts with), USER_GROUP_NAME_CHANGED
and USER_GROUP_DESCRIPTION_CHANGED (old and new value), USER_GROUP_DEACTIVATED and _REACTIVATED.
"""

from collections.abc import Sequence

from django.db import IntegrityError, transaction

from apps.core.errors import ErrorCode, JsonableError
from apps.groups.actions.reporting import audit_members, audit_subgroups, send_to_realm, send_update_event
from apps.groups.actions.settings import (
    check_group_setting_change,
    do_change_user_group_setting,
    normalize_group_setting_value,
    store_group_setting_value,
)
from apps.groups.models import GROUP_CREATOR, GroupGroupMembership, SystemGroups, UserGroup, UserGroupMembership
from apps.groups.selectors import (
    AnonymousGroupMembers,
    access_group_setting_value,
    access_subgroups_by_ids,
    access_user_group_for_update,
    access_users_by_ids,
    deactivation_objections,
    has_realm_permission,
    is_group_name_taken,
    system_groups,
    user_group_dict,
)
from apps.groups.serializers import GroupSettingChange, GroupSettingValue
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType, Realm
from apps.realms.selectors import lock_realm
from apps.users.models import User

# --- names ------------------------------------------------------------------------------------------


def check_user_group_name(name: str) -> str:
    if not name.strip():
        raise JsonableError("User group name can't be empty!")
    if len(name) > UserGroup.MAX_NAME_LENGTH:
        raise JsonableError(f"User group name cannot exceed {UserGroup.MAX_NAME_LENGTH} characters.")
    for prefix in UserGroup.INVALID_NAME_PREFIXES:
        if name.startswith(prefix):
            raise JsonableError(f"User group name cannot start with '{prefix}'.")
    return name


def check_user_group_name_available(realm: Realm, name: str, *, exclude: UserGroup | None = None) -> None:
    if is_group_name_taken(realm, name, exclude=exclude):
        raise JsonableError(f"User group '{name}' already exists.")


# --- creation ---------------------------------------------------------------------------------------


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
    """
    if acting_user is not None and not has_realm_permission(acting_user, "can_create_groups"):
        raise JsonableError("Insufficient permission")
    members = access_users_by_ids(realm, member_ids)
    name = check_user_group_name(name)
    values: dict[str, UserGroup | AnonymousGroupMembers] = {}
    for setting_name, value in (settings or {}).items():
        value = normalize_group_setting_value(value, realm.id)
        setting = UserGroup.SETTINGS[setting_name]
        values[setting_name] = access_group_setting_value(realm, setting_name, value, setting=setting)
    check_user_group_name_available(realm, name)
    defaults = system_groups(realm.id)
    for setting_name, setting in UserGroup.SETTINGS.items():
        if setting_name in values:
            continue
        if setting.default != GROUP_CREATOR:
            values[setting_name] = defaults[setting.default]
        elif acting_user is None:
            values[setting_name] = defaults[SystemGroups.NOBODY]
        else:
            values[setting_name] = AnonymousGroupMembers([acting_user], [])
    subgroups = []
    if subgroup_ids:
        lock_realm(realm.id)
        subgroups = access_subgroups_by_ids(realm, subgroup_ids)
    return do_create_user_group(
        realm,
        name=name,
        description=description,
        members=members,
        subgroups=subgroups,
        settings=values,
        acting_user=acting_user,
    )


@transaction.atomic(savepoint=False)
def do_create_user_group(
    realm: Realm,
    *,
    name: str,
    description: str,
    members: Sequence[User],
    subgroups: Sequence[UserGroup],
    settings: dict[str, UserGroup | AnonymousGroupMembers],
    acting_user: User | None,
) -> UserGroup:
    """Create the group with every setting (checked values: selectors.access_group_setting_value).
    Raises "User group 'x' already exists." when another request took the name meanwhile.

    Audit: USER_GROUP_CREATED, a membership added for each member, the subgroups added.
    Emits: user_group/add with the whole group.
    """
    groups = {setting_name: store_group_setting_value(realm, value) for setting_name, value in settings.items()}
    try:
        with transaction.atomic():
            group = UserGroup.objects.create(
                realm=realm, name=name, description=description, creator=acting_user, **groups
            )
    except IntegrityError:
        raise JsonableError(f"User group '{name}' already exists.") from None
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=u) for u in members)
    GroupGroupMembership.objects.bulk_create(GroupGroupMembership(supergroup=group, subgroup=s) for s in subgroups)
    audit(realm, AuditLogEventType.USER_GROUP_CREATED, modified_user_group=group, acting_user=acting_user)
    audit_members(group, AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED, members, acting_user=acting_user)
    if subgroups:
        links = [(group, [s.id for s in subgroups])]
        audit_subgroups(links, AuditLogEventType.USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED, acting_user=acting_user)
    send_to_realm(realm.id, {"type": "user_group", "op": "add", "group": user_group_dict(group)})
    return group


# --- name and description ---------------------------------------------------------------------------


def _audit_change(
    group: UserGroup, event_type: AuditLogEventType, old: str, new: str, *, acting_user: User | None
) -> None:
    """Zulip's entry for a new name or description: the old and new value (no `property`)."""
    extra_data = {"old_value": old, "new_value": new}
    audit(group.realm_id, event_type, modified_user_group=group, extra_data=extra_data, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_update_user_group_name(group: UserGroup, name: str, *, acting_user: User | None) -> None:
    """Rename (the name checked: check_user_group_name, check_user_group_name_available). Raises
    "User group 'x' already exists." when another request took the name meanwhile.

    Audit: USER_GROUP_NAME_CHANGED. Emits: user_group/update {name}.
    """
    old_name = group.name
    group.name = name
    try:
        with transaction.atomic():
            group.save(update_fields=["name"])
    except IntegrityError:
        group.name = old_name
        raise JsonableError(f"User group '{name}' already exists.") from None
    _audit_change(group, AuditLogEventType.USER_GROUP_NAME_CHANGED, old_name, name, acting_user=acting_user)
    send_update_event(group, {"name": name})


@transaction.atomic(savepoint=False)
def do_update_user_group_description(group: UserGroup, description: str, *, acting_user: User | None) -> None:
    """Audit: USER_GROUP_DESCRIPTION_CHANGED. Emits: user_group/update {description}."""
    old_description = group.description
    group.description = description
    group.save(update_fields=["description"])
    event_type = AuditLogEventType.USER_GROUP_DESCRIPTION_CHANGED
    _audit_change(group, event_type, old_description, description, acting_user=acting_user)
    send_update_event(group, {"description": description})


# --- deactivation -----------------------------------------------------------------------------------


@transaction.atomic(savepoint=False)
def do_deactivate_user_group(group: UserGroup, *, acting_user: User | None) -> None:
    """Deactivate a group nothing active uses (see check_deactivate_user_group).

    Audit: USER_GROUP_DEACTIVATED. Emits: user_group/update {deactivated: true}, which queues
    without the `include_deactivated_groups` capability receive as user_group/remove
    (apps.groups.events).
    """
    group.deactivated = True
    group.save(update_fields=["deactivated"])
    audit(group.realm_id, AuditLogEventType.USER_GROUP_DEACTIVATED, modified_user_group=group, acting_user=acting_user)
    send_update_event(group, {"deactivated": True})


@transaction.atomic(savepoint=False)
def do_reactivate_user_group(group: UserGroup, *, acting_user: User | None) -> None:
    """Audit: USER_GROUP_REACTIVATED. Emits: user_group/add with the group, which queues with the
    `include_deactivated_groups` capability receive as user_group/update {deactivated: false}."""
    group.deactivated = False
    group.save(update_fields=["deactivated"])
    audit(group.realm_id, AuditLogEventType.USER_GROUP_REACTIVATED, modified_user_group=group, acting_user=acting_user)
    event = {"type": "user_group", "op": "add", "group": user_group_dict(group), "for_reactivation": True}
    send_to_realm(group.realm_id, event)


@transaction.atomic
def check_deactivate_user_group(group_id: int, *, acting_user: User) -> None:
    """POST /user_groups/{id}/deactivate: for those who may manage the group, when nothing uses it
    (else CANNOT_DEACTIVATE_GROUP_IN_USE with Zulip's `objections`)."""
    lock_realm(acting_user.realm_id)  # nothing starts using the group meanwhile
    group = access_user_group_for_update(acting_user, group_id, permission_setting="can_manage_group")
    objections = deactivation_objections(group)
    if objections:
        raise JsonableError(
            "Cannot deactivate user group in use.", code=ErrorCode.CANNOT_DEACTIVATE_GROUP_IN_USE, objections=objections
        )
    do_deactivate_user_group(group, acting_user=acting_user)


# --- PATCH /user_groups/{id} --------------------------------------------------------------------------


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
    """PATCH /user_groups/{id}: every requested change or, when one is refused, none; everything is
    checked (in Zulip's order: the name, then each setting) before anything changes.

    Deactivated groups may be edited (and reactivated with `deactivated: false`). A setting's `old`,
    when given, must be its current value (EXPECTATION_MISMATCH otherwise).
    """
    settings = settings or {}
    if name is None and description is None and deactivated is None and not settings:
        raise JsonableError("No new data supplied")
    group = access_user_group_for_update(
        acting_user, group_id, permission_setting="can_manage_group", allow_deactivated=True
    )
    new_name = None
    if name is not None and name != group.name:
        new_name = check_user_group_name(name)
        check_user_group_name_available(group.realm, new_name, exclude=group)
    new_values: dict[str, UserGroup | AnonymousGroupMembers] = {}
    for setting_name, change in settings.items():
        new = check_group_setting_change(change, current=getattr(group, setting_name))
        if new is not None:
            setting = UserGroup.SETTINGS[setting_name]
            new_values[setting_name] = access_group_setting_value(group.realm, setting_name, new, setting=setting)

    if new_name is not None:
        do_update_user_group_name(group, new_name, acting_user=acting_user)
    if description is not None and description != group.description:
        do_update_user_group_description(group, description, acting_user=acting_user)
    if deactivated is False and group.deactivated:
        do_reactivate_user_group(group, acting_user=acting_user)
    for setting_name, value in new_values.items():
        do_change_user_group_setting(group, setting_name, value, acting_user=acting_user)
