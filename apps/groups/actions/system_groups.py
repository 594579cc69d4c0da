"""System groups, kept in step with the organization's users: created with the organization, joined
by each new user, changed by role changes, and what clients must hear when a user's activity
changes. No one changes system groups otherwise (selectors.access_user_group_for_update refuses).

Audit: as Zulip records them, the groups' creation and nesting, and each membership a user gains
or loses through their role (USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED / _REMOVED).
"""

from collections.abc import Sequence
from datetime import timedelta
from itertools import pairwise

from django.db import transaction
from django.utils import timezone

from apps.events.publish import Everyone, send_event_on_commit
from apps.groups.actions.reporting import (
    audit_many,
    audit_members,
    audit_subgroups,
    send_members_event,
    send_update_event,
)
from apps.groups.models import REALM_SETTINGS, GroupGroupMembership, SystemGroups, UserGroup, UserGroupMembership
from apps.groups.selectors import (
    anonymous_group_ids_of,
    direct_groups_of,
    groups_with_setting_in,
    setting_values_for_api,
    system_groups,
)
from apps.realms.models import AuditLogEventType, Realm
from apps.users.models import Role, User


@transaction.atomic(savepoint=False)
def do_create_system_groups(realm: Realm, *, acting_user: User | None) -> dict[str, UserGroup]:
    """The organization's system groups, nested owners ⊂ administrators ⊂ ... ⊂ internet, with every
    setting "role:nobody"; and the organization's own group settings at their defaults (they point
    to these groups). Sends nothing: called while the organization is created.

    Audit: USER_GROUP_CREATED for each, USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED for each nesting.
    """
    groups = {
        name: UserGroup.objects.create(realm=realm, name=name, description=description, is_system_group=True)
        for name, description in SystemGroups.DESCRIPTIONS.items()
    }
    nobody = groups[SystemGroups.NOBODY]
    for group in groups.values():
        for name in UserGroup.SETTINGS:
            setattr(group, name, nobody)
    UserGroup.objects.bulk_update(groups.values(), list(UserGroup.SETTINGS))
    nesting = [(groups[larger], groups[smaller]) for smaller, larger in pairwise(SystemGroups.NESTED)]
    GroupGroupMembership.objects.bulk_create(
        GroupGroupMembership(supergroup=supergroup, subgroup=subgroup) for supergroup, subgroup in nesting
    )
    defaults = {name: groups[setting.default] for name, setting in REALM_SETTINGS.items()}
    Realm.objects.filter(id=realm.id).update(**defaults)
    for name, group in defaults.items():
        setattr(realm, name, group)
    created = ({"modified_user_group": group} for group in groups.values())
    audit_many(realm.id, AuditLogEventType.USER_GROUP_CREATED, created, acting_user=acting_user)
    links = [(supergroup, [subgroup.id]) for supergroup, subgroup in nesting]
    audit_subgroups(links, AuditLogEventType.USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED, acting_user=acting_user)
    return groups


def _report(group: UserGroup, user: User, op: str, *, acting_user: User | None) -> None:
    """Audit: the user's membership added or removed. Emits: user_group/`op`, when the user is active."""
    added = op == "add_members"
    event_type = AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED
    if not added:
        event_type = AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED
    audit_members(group, event_type, [user], acting_user=acting_user)
    if user.is_active:
        send_members_event(group, op, [user.id])


@transaction.atomic(savepoint=False)
def do_add_user_to_system_groups(user: User, *, acting_user: User | None) -> None:
    """Make a new user a direct member of the system groups of their role.

    Emits: user_group/add_members for each, when the user is active.
    """
    groups = system_groups(user.realm_id)
    for name in SystemGroups.FOR_ROLE[user.role]:
        if name == SystemGroups.FULL_MEMBERS and not is_full_member(user):
            continue
        UserGroupMembership.objects.create(user_group=groups[name], user=user)
        _report(groups[name], user, "add_members", acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_update_system_groups_for_role(user: User, old_role: int, new_role: int, *, acting_user: User | None) -> None:
    """Move the user from the system groups of `old_role` to those of `new_role` (call inside the
    role change's transaction). Emits: user_group/remove_members then add_members, as Zulip orders
    them (role group out, role group in, then full members), when the user is active."""
    if old_role == new_role:
        return
    groups = system_groups(user.realm_id)
    old_names, new_names = SystemGroups.FOR_ROLE[old_role], SystemGroups.FOR_ROLE[new_role]
    steps = [("remove_members", old_names[0]), ("add_members", new_names[0])]
    if old_role == Role.MEMBER:
        steps.append(("remove_members", SystemGroups.FULL_MEMBERS))
    elif new_role == Role.MEMBER and is_full_member(user, role=new_role):
        steps.append(("add_members", SystemGroups.FULL_MEMBERS))
    for op, name in steps:
        if op == "remove_members":
            if not UserGroupMembership.objects.filter(user_group=groups[name], user=user).delete()[0]:
                continue  # a member not yet full
        else:
            UserGroupMembership.objects.get_or_create(user_group=groups[name], user=user)
        _report(groups[name], user, op, acting_user=acting_user)


def full_member_cutoff(realm: Realm):
    """Members who joined at or before this are full members (the organization's
    waiting_period_threshold, in days, before now)."""
    return timezone.now() - timedelta(days=realm.waiting_period_threshold)


def is_full_member(user: User, *, role: int | None = None) -> bool:
    """Whether the user (with `role`, theirs by default) belongs in role:fullmembers directly: a
    member who joined at least the organization's waiting period ago (Zulip's is_provisional_member
    turned around)."""
    role = user.role if role is None else role
    return role == Role.MEMBER and user.date_joined <= full_member_cutoff(user.realm)


@transaction.atomic(savepoint=False)
def do_update_full_members(realm: Realm, *, acting_user: User | None) -> tuple[int, int]:
    """Make role:fullmembers hold exactly the organization's members past the waiting period (after
    a change of waiting_period_threshold, and as time passes: promote_new_full_members); returns
    (promoted, demoted). Zulip's update_users_in_full_members_system_group.

    Emits: user_group/add_members and remove_members, for active users. Audit: a membership entry
    for each."""
    group = system_groups(realm.id)[SystemGroups.FULL_MEMBERS]
    UserGroup.objects.select_for_update().filter(id=group.id).values_list("id", flat=True).get()  # one at a time
    members = User.objects.filter(realm=realm, role=Role.MEMBER).exclude(User.SYSTEM_BOTS)
    should = set(members.filter(date_joined__lte=full_member_cutoff(realm)).values_list("id", flat=True))
    current = set(UserGroupMembership.objects.filter(user_group=group).values_list("user_id", flat=True))
    promoted = list(User.objects.filter(id__in=should - current).order_by("id"))
    demoted = list(User.objects.filter(id__in=current - should).order_by("id"))
    UserGroupMembership.objects.bulk_create(UserGroupMembership(user_group=group, user=user) for user in promoted)
    UserGroupMembership.objects.filter(user_group=group, user__in=demoted).delete()
    for users, op, event_type in (
        (promoted, "add_members", AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED),
        (demoted, "remove_members", AuditLogEventType.USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED),
    ):
        if users:
            audit_members(group, event_type, users, acting_user=acting_user)
            if active := [user.id for user in users if user.is_active]:
                send_members_event(group, op, active)
    return len(promoted), len(demoted)


def send_membership_events_for_reactivation(user: User) -> None:
    """After a reactivation: clients dropped the user from every group at the deactivation.

    Emits: user_group/add_members for each named group the user is a direct member of, and
    user_group/update for each setting whose anonymous group lists the user.
    """
    groups = direct_groups_of(user)
    for group in groups:
        if not group.is_anonymous:
            send_members_event(group, "add_members", [user.id])
    send_setting_updates_for_user(user, [g.id for g in groups if g.is_anonymous])


def send_setting_updates_for_user(user: User, anonymous_group_ids: Sequence[int] | None = None) -> None:
    """A user's (de)activation changes the value of every setting whose anonymous group lists them
    (values list active users only). Emits: user_group/update {setting: value} for each group's, and
    realm/update_dict {property: "default", data: {setting: value, ...}} for the organization's
    (Zulip's send_update_events_for_anonymous_group_settings); the channels' are apps.subscriptions'."""
    if anonymous_group_ids is None:
        anonymous_group_ids = anonymous_group_ids_of(user)
    if not anonymous_group_ids:
        return
    values = setting_values_for_api(user.realm_id, anonymous_group_ids)
    for name in UserGroup.SETTINGS:
        for group in groups_with_setting_in(user.realm, name, anonymous_group_ids):
            send_update_event(group, {name: values[getattr(group, f"{name}_id")]})
    current = Realm.objects.filter(id=user.realm_id).values(*(f"{name}_id" for name in REALM_SETTINGS)).get()
    data = {name: values[current[f"{name}_id"]] for name in REALM_SETTINGS if current[f"{name}_id"] in values}
    if data:
        event = {"type": "realm", "op": "update_dict", "property": "default", "data": data}
        send_event_on_commit(user.realm_id, event, Everyone())
