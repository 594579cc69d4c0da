"""The rules of user groups, through the actions: no cycles of subgroups, system groups changed by
roles only, who may do what (the can_*_group settings, through nested subgroups), and what stops
a deactivation."""

import re
from types import SimpleNamespace

import pytest

from apps.core.errors import JsonableError
from apps.groups.actions.groups import check_deactivate_user_group, check_update_user_group
from apps.groups.actions.members import check_update_user_group_members, check_update_user_group_subgroups
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import SystemGroups, UserGroup
from apps.groups.selectors import group_member_ids, is_user_in_group, subgroup_ids
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.roles import do_change_user_role
from apps.users.models import Role
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory


def refused(msg: str):
    return pytest.raises(JsonableError, match=f"^{re.escape(msg)}$")


def direct_subgroups(*groups: UserGroup) -> dict[int, list[int]]:
    return {g.id: subgroup_ids(g.id, direct_subgroup_only=True) for g in groups}


# --- cycles -------------------------------------------------------------------------------------------


@pytest.fixture
def chain(owner, make_group):
    """a ⊂ b ⊂ c."""
    a = make_group(owner, "a")
    b = make_group(owner, "b", subgroup_ids=[a.id])
    c = make_group(owner, "c", subgroup_ids=[b.id])
    return {"a": a, "b": b, "c": c}


@pytest.mark.parametrize(("group", "subgroup"), [("a", "a"), ("a", "b"), ("a", "c"), ("b", "c")])
@pytest.mark.parametrize("endpoint", ["subgroups", "members"])
def test_a_group_never_contains_itself(owner, chain, group, subgroup, endpoint):
    before = direct_subgroups(*chain.values())
    target, added = chain[group], chain[subgroup]
    with refused(f"User group {target.id} is already a subgroup of one of the passed subgroups."):
        if endpoint == "subgroups":
            check_update_user_group_subgroups(target.id, add=[added.id], acting_user=owner)
        else:
            check_update_user_group_members(target.id, add_subgroups=[added.id], acting_user=owner)
    assert direct_subgroups(*chain.values()) == before


def test_a_cycle_later_in_the_request_undoes_the_earlier_steps(owner, member, chain, make_group):
    a, c = chain["a"], chain["c"]
    spare = make_group(owner, "spare")
    with refused(f"User group {a.id} is already a subgroup of one of the passed subgroups."):
        check_update_user_group_members(a.id, add=[member.id], add_subgroups=[spare.id, c.id], acting_user=owner)
    assert group_member_ids(a.id) == []
    assert subgroup_ids(a.id) == []


def test_what_is_not_a_cycle_is_allowed(owner, chain, make_group):
    d = make_group(owner, "d", subgroup_ids=[chain["a"].id])  # a in two places: a diamond, not a cycle
    check_update_user_group_subgroups(chain["c"].id, add=[d.id], acting_user=owner)
    assert subgroup_ids(chain["c"].id) == sorted(g.id for g in (chain["a"], chain["b"], d))


# --- system groups ------------------------------------------------------------------------------------


@pytest.fixture
def system_group_changes(owner, sys_groups, make_group):
    """Each change an owner (an administrator: allowed everything elsewhere) could make to `group`."""
    members, spare = sys_groups[SystemGroups.MEMBERS].id, make_group(owner, "spare")
    return {
        "rename": lambda group: check_update_user_group(group.id, name="renamed", acting_user=owner),
        "describe": lambda group: check_update_user_group(group.id, description="x", acting_user=owner),
        "setting": lambda group: check_update_user_group(
            group.id, settings={"can_mention_group": GroupSettingChange(new=members, old=None)}, acting_user=owner
        ),
        "add member": lambda group: check_update_user_group_members(group.id, add=[owner.id], acting_user=owner),
        "remove member": lambda group: check_update_user_group_members(group.id, delete=[owner.id], acting_user=owner),
        "add subgroup": lambda group: check_update_user_group_subgroups(group.id, add=[spare.id], acting_user=owner),
        "deactivate": lambda group: check_deactivate_user_group(group.id, acting_user=owner),
    }


@pytest.mark.parametrize(
    "change", ["rename", "describe", "setting", "add member", "remove member", "add subgroup", "deactivate"]
)
def test_system_groups_are_changed_by_roles_only(sys_groups, system_group_changes, change):
    def state(group):
        group.refresh_from_db()
        fields = (group.name, group.description, group.deactivated, group.can_mention_group_id)
        return fields, group_member_ids(group.id, direct_member_only=True), direct_subgroups(group)

    for group in sys_groups.values():
        before = state(group)
        with refused("Insufficient permission"):
            system_group_changes[change](group)
        assert state(group) == before


def test_roles_move_users_between_system_groups(realm, owner, sys_groups):
    user = UserFactory(realm=realm, role=Role.MEMBER)
    do_change_user_role(user, Role.ADMINISTRATOR, acting_user=owner)
    direct = {
        name for name, group in sys_groups.items() if user.id in group_member_ids(group.id, direct_member_only=True)
    }
    assert direct == {SystemGroups.ADMINISTRATORS}
    assert is_user_in_group(sys_groups[SystemGroups.MEMBERS].id, user)  # through the nesting
    assert not is_user_in_group(sys_groups[SystemGroups.OWNERS].id, user)


# --- who may do what ----------------------------------------------------------------------------------

SETTINGS = [
    "can_manage_group",
    "can_add_members_group",
    "can_remove_members_group",
    "can_join_group",
    "can_leave_group",
]
OPERATIONS = ["add other", "remove other", "join", "leave", "add subgroup", "remove subgroup", "update", "deactivate"]
# What holding each setting allows (can_manage_group: everything; joining is adding oneself, so
# those who may add others may join, and those who may remove others may leave).
ALLOWED = {
    None: set(),
    "can_manage_group": set(OPERATIONS),
    "can_add_members_group": {"add other", "join", "add subgroup"},
    "can_remove_members_group": {"remove other", "leave"},
    "can_join_group": {"join"},
    "can_leave_group": {"leave"},
}


# Each operation, run by `actor` on `team` (see scene).
OPERATION_CALLS = {
    "add other": lambda team, actor, g: check_update_user_group_members(team.id, add=[g.owner.id], acting_user=actor),
    "remove other": lambda team, actor, g: check_update_user_group_members(
        team.id, delete=[g.someone.id], acting_user=actor
    ),
    "join": lambda team, actor, g: check_update_user_group_members(team.id, add=[actor.id], acting_user=actor),
    "leave": lambda team, actor, g: check_update_user_group_members(team.id, delete=[actor.id], acting_user=actor),
    "add subgroup": lambda team, actor, g: check_update_user_group_subgroups(
        team.id, add=[g.spare.id], acting_user=actor
    ),
    "remove subgroup": lambda team, actor, g: check_update_user_group_subgroups(
        team.id, delete=[g.existing.id], acting_user=actor
    ),
    "update": lambda team, actor, g: check_update_user_group(team.id, description="changed", acting_user=actor),
    "deactivate": lambda team, actor, g: check_deactivate_user_group(team.id, acting_user=actor),
}


@pytest.fixture
def scene(realm, owner, make_group, sys_groups):
    """`scene(actor, setting, operation)`: a group "team" with a member "someone", the actor too
    (but to join), and a subgroup "existing"; its settings are all role:nobody but `setting`, which
    is "outer" ⊃ "inner" ⊃ the actor, two levels down. Returns the team and `operation` to run."""

    def make(actor, setting, operation):
        inner = make_group(owner, "inner", [actor])
        outer = make_group(owner, "outer", subgroup_ids=[inner.id])
        nobody = sys_groups[SystemGroups.NOBODY].id
        settings = {name: outer.id if name == setting else nobody for name in SETTINGS}
        g = SimpleNamespace(owner=owner, someone=UserFactory(realm=realm), spare=make_group(owner, "spare"))
        g.existing = make_group(owner, "existing")
        members = [g.someone] if operation == "join" else [g.someone, actor]
        team = make_group(owner, "team", members, subgroup_ids=[g.existing.id], settings=settings)
        return team, lambda: OPERATION_CALLS[operation](team, actor, g)

    return make


def state_of(team: UserGroup) -> tuple:
    team.refresh_from_db()
    members = group_member_ids(team.id, direct_member_only=True)
    return members, subgroup_ids(team.id, direct_subgroup_only=True), team.description, team.deactivated


def assert_outcome(team: UserGroup, run, *, allowed: bool) -> None:
    """Allowed, the operation changes the team; refused, it raises Zulip's error and changes nothing."""
    before = state_of(team)
    if allowed:
        run()
        assert state_of(team) != before
    else:
        with refused("Insufficient permission"):
            run()
        assert state_of(team) == before


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("setting", [None, *SETTINGS])
def test_permission_matrix_through_nested_subgroups(moderator, scene, setting, operation):
    team, run = scene(moderator, setting, operation)
    assert_outcome(team, run, allowed=operation in ALLOWED[setting])


@pytest.mark.parametrize("operation", OPERATIONS)
def test_owners_may_do_everything(realm, scene, operation):
    team, run = scene(UserFactory(realm=realm, role=Role.OWNER), None, operation)
    assert_outcome(team, run, allowed=True)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_administrators_need_the_organizations_can_manage_all_groups(realm, owner, admin, sys_groups, scene, operation):
    """It is owners by default, as in Zulip (administrators managed every group; the users QA pass)."""
    team, run = scene(admin, None, operation)
    assert_outcome(team, run, allowed=False)
    administrators = sys_groups[SystemGroups.ADMINISTRATORS].id
    do_change_realm_permission_group_setting(realm, "can_manage_all_groups", administrators, acting_user=owner)
    admin.realm.refresh_from_db()
    assert_outcome(team, run, allowed=True)


@pytest.mark.parametrize(("setting", "operation"), [(s, o) for s in SETTINGS for o in OPERATIONS if o in ALLOWED[s]])
def test_guests_hold_only_settings_that_may_be_everyone(guest, scene, setting, operation):
    """can_leave_group may be role:everyone, so a guest it names may leave; no other setting counts
    for a guest, whatever group it names (the API refuses guests before this: IsNotGuest)."""
    team, run = scene(guest, setting, operation)
    assert_outcome(team, run, allowed=(setting, operation) == ("can_leave_group", "leave"))


def test_deactivated_users_hold_no_setting(realm, owner, make_group):
    manager = UserFactory(realm=realm)
    team = make_group(owner, "team", settings={"can_manage_group": AnonymousGroupValue((manager.id,), ())})
    check_update_user_group(team.id, description="by the manager", acting_user=manager)
    do_deactivate_user(manager, acting_user=owner)
    with refused("Insufficient permission"):
        check_update_user_group(team.id, description="by a deactivated manager", acting_user=manager)


# --- what stops a deactivation ------------------------------------------------------------------------


def objections_of(group: UserGroup, owner) -> list[dict]:
    with pytest.raises(JsonableError) as error:
        check_deactivate_user_group(group.id, acting_user=owner)
    assert error.value.msg == "Cannot deactivate user group in use."
    group.refresh_from_db()
    assert not group.deactivated
    return error.value.data["objections"]


def test_every_user_of_the_group_objects_in_zulips_order(realm, owner, make_group, make_stream):
    team = make_group(owner, "team")
    supergroup = make_group(owner, "supergroup", subgroup_ids=[team.id])
    by_id = make_group(owner, "by id", settings={"can_mention_group": team.id})
    inside = make_group(owner, "inside", settings={"can_join_group": AnonymousGroupValue((owner.id,), (team.id,))})
    stream = make_stream("general")
    assert_success(ApiClient(owner).patch(f"/streams/{stream.id}", {"can_add_subscribers_group": {"new": team.id}}))
    do_change_realm_permission_group_setting(realm, "can_create_public_channel_group", team.id, acting_user=owner)
    assert objections_of(team, owner) == [
        {"type": "subgroup", "supergroup_ids": [supergroup.id]},
        {"type": "user_group", "group_id": by_id.id, "settings": ["can_mention_group"]},
        {"type": "user_group", "group_id": inside.id, "settings": ["can_join_group"]},
        {"type": "channel", "channel_id": stream.id, "settings": ["can_add_subscribers_group"]},
        {"type": "realm", "settings": ["can_create_public_channel_group"]},
    ]


def test_deactivated_users_of_the_group_do_not_object(owner, make_group):
    team = make_group(owner, "team")
    supergroup = make_group(owner, "supergroup", subgroup_ids=[team.id])
    by_id = make_group(owner, "by id", settings={"can_mention_group": team.id})
    assert len(objections_of(team, owner)) == 2
    check_deactivate_user_group(supergroup.id, acting_user=owner)
    check_deactivate_user_group(by_id.id, acting_user=owner)
    check_deactivate_user_group(team.id, acting_user=owner)
    team.refresh_from_db()
    assert team.deactivated


def test_a_setting_that_moved_away_no_longer_objects(owner, make_group, sys_groups):
    team = make_group(owner, "team")
    user = make_group(owner, "user", settings={"can_mention_group": team.id})
    assert objections_of(team, owner) == [
        {"type": "user_group", "group_id": user.id, "settings": ["can_mention_group"]}
    ]
    everyone = sys_groups[SystemGroups.EVERYONE].id
    change = GroupSettingChange(new=everyone, old=team.id)
    check_update_user_group(user.id, settings={"can_mention_group": change}, acting_user=owner)
    check_deactivate_user_group(team.id, acting_user=owner)


def test_a_deactivated_group_is_deactivated_once(owner, make_group):
    team = make_group(owner, "team")
    check_deactivate_user_group(team.id, acting_user=owner)
    with refused("User group is deactivated."):
        check_deactivate_user_group(team.id, acting_user=owner)
