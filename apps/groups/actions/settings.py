"""Group-valued settings: their values checked and stored (for groups here, and for channels and
others alike), a group's own settings changed, and the organization's.

A value is a named group's id or `{direct_members, direct_subgroups}`, stored as an anonymous group
that belongs to its one setting: reused when the setting changes again, deleted when it is left.
"""

from typing import Any

from django.db import transaction

from apps.core.errors import ErrorCode, JsonableError
from apps.events.publish import Everyone, forget_credentials_on_commit, send_event_on_commit
from apps.groups.actions.reporting import send_update_event
from apps.groups.models import (
    REALM_SETTINGS,
    GroupGroupMembership,
    GroupSetting,
    SystemGroups,
    UserGroup,
    UserGroupMembership,
)
from apps.groups.selectors import (
    AnonymousGroupMembers,
    access_group_setting_value,
    get_system_group,
    setting_values_for_api,
)
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange, GroupSettingValue
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.users.models import User

# --- values -------------------------------------------------------------------------------------


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


def store_group_setting_value(
    realm: Realm, value: UserGroup | AnonymousGroupMembers, *, current: UserGroup | None = None
) -> UserGroup:
    """The group a setting will point to for a checked value (selectors.access_group_setting_value):
    the named group itself, or an anonymous group with these members (`current`, the setting's
    group now, is reused when it is anonymous). Call inside the transaction that stores the setting."""
    if isinstance(value, UserGroup):
        return value
    if current is not None and current.is_anonymous:
        group = current
        UserGroupMembership.objects.filter(user_group=group).delete()
        GroupGroupMembership.objects.filter(supergroup=group).delete()
    else:
        group = UserGroup.objects.create(realm=realm, name=None, date_created=None)
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=u) for u in value.members)
    GroupGroupMembership.objects.bulk_create(
        GroupGroupMembership(supergroup=group, subgroup=s) for s in value.subgroups
    )
    return group


def check_group_setting_value(
    realm: Realm,
    setting_name: str,
    value: GroupSettingValue,
    *,
    setting: GroupSetting,
    current: UserGroup | None = None,
) -> UserGroup:
    """The group a setting will point to for the (normalized) API value `value`, checked (nothing
    is written when it is refused) then stored (store_group_setting_value)."""
    checked = access_group_setting_value(realm, setting_name, value, setting=setting)
    return store_group_setting_value(realm, checked, current=current)


def delete_unused_setting_group(old: UserGroup, new: UserGroup) -> None:
    """After a setting moved from `old` to `new`: an anonymous group belongs to its one setting."""
    if old.is_anonymous and old.id != new.id:
        old.delete()


# --- a group's settings --------------------------------------------------------------------------


@transaction.atomic(savepoint=False)
def do_change_user_group_setting(
    group: UserGroup, setting_name: str, value: UserGroup | AnonymousGroupMembers, *, acting_user: User | None
) -> None:
    """Set the setting `setting_name` to a checked value (selectors.access_group_setting_value).

    An anonymous value replaces the previous anonymous group's members in place; one no longer used
    is deleted. Audit: USER_GROUP_GROUP_BASED_SETTING_CHANGED with the old and new API values.
    Emits: user_group/update {setting_name: the value as the API shows it}.
    """
    current = getattr(group, setting_name)
    old_value = setting_values_for_api(group.realm_id, [current.id])[current.id]  # before `current` is reused
    new = store_group_setting_value(group.realm, value, current=current)
    setattr(group, setting_name, new)
    group.save(update_fields=[setting_name])
    delete_unused_setting_group(current, new)
    new_value = setting_values_for_api(group.realm_id, [new.id])[new.id]
    audit(
        group.realm_id,
        AuditLogEventType.USER_GROUP_GROUP_BASED_SETTING_CHANGED,
        modified_user_group=group,
        extra_data=changed(setting_name, old_value, new_value),
        acting_user=acting_user,
    )
    send_update_event(group, {setting_name: new_value})


# --- the organization's group settings ------------------------------------------------------------


def check_realm_group_setting_change(realm: Realm, setting_name: str, change: GroupSettingChange) -> Any:
    """PATCH /realm's `{"new", "old"}` for a group-valued organization setting, checked: what to give
    do_change_realm_permission_group_setting, or None when the setting has that value already.
    Raises EXPECTATION_MISMATCH for an `old` that is not the current value, and Zulip's errors for
    a value the setting refuses (role:everyone, role:internet, an unknown group or user)."""
    current = UserGroup.objects.get(id=getattr(realm, f"{setting_name}_id"))
    new = check_group_setting_change(change, current=current)
    if new is None:
        return None
    return access_group_setting_value(realm, setting_name, new, setting=REALM_SETTINGS[setting_name])


@transaction.atomic
def do_change_realm_permission_group_setting(
    realm: Realm, setting_name: str, value: int | UserGroup | AnonymousGroupMembers, *, acting_user: User | None
) -> None:
    """Set a group-valued organization setting (REALM_SETTINGS, e.g. who may create public channels)
    to a checked value (access_group_setting_value): a named group, or the members and subgroups of
    an anonymous group (which replaces the previous anonymous group's in place); or to the named
    group of this id, checked here ("Invalid user group" and Zulip's error for a group the setting
    refuses, before any change).

    Emits: realm/update_dict {property: "default", data: {setting_name: the value as the API shows
    it}} to the organization's active users (Zulip's event for these settings).
    Audit: REALM_PROPERTY_CHANGED with the old and new API values.
    """
    current_id = (
        Realm.objects.select_for_update(no_key=True)
        .filter(id=realm.id)
        .values_list(f"{setting_name}_id", flat=True)
        .get()
    )
    if isinstance(value, int):
        value = access_group_setting_value(realm, setting_name, value, setting=REALM_SETTINGS[setting_name])
    if isinstance(value, UserGroup) and value.id == current_id:
        return
    current = UserGroup.objects.get(id=current_id)
    old_value = setting_values_for_api(realm.id, [current_id])[current_id]  # before `current` is reused
    new = store_group_setting_value(realm, value, current=current)
    Realm.objects.filter(id=realm.id).update(**{setting_name: new})
    setattr(realm, setting_name, new)
    delete_unused_setting_group(current, new)
    new_value = setting_values_for_api(realm.id, [new.id])[new.id]
    if new_value == old_value:
        return
    extra_data = changed(setting_name, old_value, new_value)
    audit(realm, AuditLogEventType.REALM_PROPERTY_CHANGED, extra_data=extra_data, acting_user=acting_user)
    forget_credentials_on_commit(realm_ids=[realm.id])  # the organization cached with the old value
    event = {"type": "realm", "op": "update_dict", "property": "default", "data": {setting_name: new_value}}
    send_event_on_commit(realm, event, Everyone())
