"""The audit log of user groups: what each change records (Zulip's RealmAuditLog entries and
extra_data), written in the change's transaction, and nothing for a refused change."""

import json
from itertools import pairwise

import pytest
from django.db.models import Q

from apps.groups.models import UserGroup
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.actions.create_user import do_create_user
from apps.users.actions.roles import do_change_user_role
from apps.users.models import Role
from tests.api import ApiClient, assert_error, assert_success
from tests.groups.test_admin import inline_data

E = AuditLogEventType
GROUP_EVENTS = Q(event_type__gte=700, event_type__lt=800)


def group_entries(realm, *, since: int = 0) -> list[tuple]:
    """(event, acting user, modified user, modified group, extra_data) of each group entry after `since`."""
    rows = RealmAuditLog.objects.filter(GROUP_EVENTS, realm=realm, id__gt=since).order_by("id")
    return [
        (E(r.event_type).name, r.acting_user_id, r.modified_user_id, r.modified_user_group_id, r.extra_data)
        for r in rows
    ]


def last_id() -> int:
    return RealmAuditLog.objects.order_by("-id").values_list("id", flat=True).first() or 0


def post(user, path, **params):
    return ApiClient(user).post(path, {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()})


def patch(user, path, **params):
    return ApiClient(user).patch(path, {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()})


def changed(prop, old, new) -> dict:
    return {"property": prop, "old_value": old, "new_value": new}


@pytest.fixture
def team(owner, member, make_group):
    return make_group(owner, "team", [member], description="The team")


def test_creation_records_the_group_its_members_and_subgroups(realm, owner, member, admin, team, sys_groups):
    start = last_id()
    moderators = sys_groups["role:moderators"].id
    mention = {"direct_members": [owner.id], "direct_subgroups": [team.id]}
    body = post(
        member,
        "/user_groups/create",
        name="new",
        description="",
        members=[member.id, admin.id],
        subgroups=[team.id, moderators],
        can_mention_group=mention,
    )
    group_id = assert_success(body)["group_id"]
    # The settings' anonymous groups are values, not groups: they are not recorded.
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_CREATED", member.id, None, group_id, {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", member.id, member.id, group_id, {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", member.id, admin.id, group_id, {}),
        (
            "USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED",
            member.id,
            None,
            group_id,
            {"subgroup_ids": sorted([team.id, moderators])},
        ),
    ]


def test_name_and_description_record_old_and_new_values(realm, owner, member, team):
    start = last_id()
    assert_success(patch(owner, f"/user_groups/{team.id}", name="Team A", description="Now with an A"))
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_NAME_CHANGED", owner.id, None, team.id, {"old_value": "team", "new_value": "Team A"}),
        (
            "USER_GROUP_DESCRIPTION_CHANGED",
            owner.id,
            None,
            team.id,
            {"old_value": "The team", "new_value": "Now with an A"},
        ),
    ]


def test_settings_record_the_old_and_new_api_values(realm, owner, member, team, sys_groups):
    members = sys_groups["role:members"].id
    everyone = sys_groups["role:everyone"].id
    creator_only = {"direct_members": [owner.id], "direct_subgroups": []}
    anonymous = {"direct_members": [member.id], "direct_subgroups": [members]}
    start = last_id()
    assert_success(patch(owner, f"/user_groups/{team.id}", can_mention_group={"new": anonymous}))
    assert_success(patch(owner, f"/user_groups/{team.id}", can_manage_group={"new": members, "old": creator_only}))
    assert_success(patch(owner, f"/user_groups/{team.id}", can_mention_group={"new": everyone}))
    setting_changed = "USER_GROUP_GROUP_BASED_SETTING_CHANGED"
    assert group_entries(realm, since=start) == [
        (setting_changed, owner.id, None, team.id, changed("can_mention_group", everyone, anonymous)),
        (setting_changed, owner.id, None, team.id, changed("can_manage_group", creator_only, members)),
        (setting_changed, owner.id, None, team.id, changed("can_mention_group", anonymous, everyone)),
    ]


def test_an_anonymous_value_changed_in_place_records_its_old_members(realm, owner, admin, member, team):
    creator_only = {"direct_members": [owner.id], "direct_subgroups": []}
    both = {"direct_members": sorted([admin.id, owner.id]), "direct_subgroups": []}
    start = last_id()
    assert_success(patch(owner, f"/user_groups/{team.id}", can_add_members_group={"new": both}))
    [entry] = group_entries(realm, since=start)
    assert entry[4] == changed("can_add_members_group", creator_only, both)


def test_members_are_recorded_one_entry_per_user(realm, owner, member, admin, moderator, team):
    start = last_id()
    assert_success(post(owner, f"/user_groups/{team.id}/members", add=[admin.id, moderator.id], delete=[member.id]))
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", owner.id, admin.id, team.id, {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", owner.id, moderator.id, team.id, {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED", owner.id, member.id, team.id, {}),
    ]


def test_subgroups_are_recorded_with_their_ids(realm, owner, team, make_group):
    one, two = make_group(owner, "one"), make_group(owner, "two")
    start = last_id()
    assert_success(post(owner, f"/user_groups/{team.id}/subgroups", add=[two.id, one.id]))
    assert_success(post(owner, f"/user_groups/{team.id}/members", delete_subgroups=[one.id]))
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED", owner.id, None, team.id, {"subgroup_ids": [one.id, two.id]}),
        ("USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_REMOVED", owner.id, None, team.id, {"subgroup_ids": [one.id]}),
    ]


def test_deactivation_and_reactivation_are_recorded(realm, owner, member, team):
    start = last_id()
    assert_success(post(owner, f"/user_groups/{team.id}/deactivate"))
    refused = patch(member, f"/user_groups/{team.id}", deactivated=False)
    assert_error(refused, 400, "BAD_REQUEST", "Insufficient permission")
    assert_success(patch(owner, f"/user_groups/{team.id}", deactivated=False))
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_DEACTIVATED", owner.id, None, team.id, {}),
        ("USER_GROUP_REACTIVATED", owner.id, None, team.id, {}),
    ]


REFUSED = {
    "taken name": ("post", "/user_groups/create", {"name": "team", "description": "", "members": []}),
    "bad subgroup": (
        "post",
        "/user_groups/create",
        {"name": "x", "description": "", "members": [], "subgroups": [999999]},
    ),
    "bad setting": ("patch", "/user_groups/{id}", {"name": "renamed", "can_mention_group": {"new": 999999}}),
    "old mismatch": ("patch", "/user_groups/{id}", {"description": "x", "can_join_group": {"new": 1, "old": 999999}}),
    "bad member after a good one": ("post", "/user_groups/{id}/members", {"add": ["admin"], "delete": [999999]}),
    "cycle after a good step": ("post", "/user_groups/{id}/members", {"add": ["admin"], "add_subgroups": ["outer"]}),
    "in use": ("post", "/user_groups/{id}/deactivate", {}),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_refused_change_records_nothing(realm, owner, admin, team, make_group, case):
    method, path, params = REFUSED[case]
    outer = make_group(owner, "outer", subgroup_ids=[team.id])
    ids = {"admin": admin.id, "outer": outer.id}
    params = {k: [ids.get(v, v) for v in value] if isinstance(value, list) else value for k, value in params.items()}
    start = last_id()
    response = (post if method == "post" else patch)(owner, path.format(id=team.id), **params)
    assert response.status_code == 400, response.json()
    assert group_entries(realm, since=start) == []
    team.refresh_from_db()
    assert (team.name, team.description, team.deactivated) == ("team", "The team", False)


def test_role_changes_record_the_system_groups_memberships_they_move(realm, owner, member, sys_groups):
    groups = {name: group.id for name, group in sys_groups.items()}
    start = last_id()
    do_change_user_role(member, Role.MODERATOR, acting_user=owner)
    do_change_user_role(member, Role.MEMBER, acting_user=owner)
    # The users hooks do not say who changed the role (the role change's own entry does).
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED", None, member.id, groups["role:members"], {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", None, member.id, groups["role:moderators"], {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED", None, member.id, groups["role:fullmembers"], {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED", None, member.id, groups["role:moderators"], {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", None, member.id, groups["role:members"], {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", None, member.id, groups["role:fullmembers"], {}),
    ]


def test_new_users_join_their_roles_groups_on_the_record(realm, owner, sys_groups):
    start = last_id()
    user = do_create_user(realm, "new@example.com", "New Person", role=Role.MEMBER, acting_user=owner)
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", None, user.id, sys_groups["role:members"].id, {}),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", None, user.id, sys_groups["role:fullmembers"].id, {}),
    ]


def test_a_new_organization_records_its_system_groups(db):
    realm, owner = do_create_realm_with_owner(
        "acme", "Acme", owner_email="o@acme.example", owner_full_name="Olga", acting_user=None
    )
    groups = list(UserGroup.objects.filter(realm=realm).order_by("id"))
    by_name = {g.name: g.id for g in groups}
    entries = group_entries(realm)
    assert entries[:8] == [("USER_GROUP_CREATED", None, None, g.id, {}) for g in groups]
    nested = ["role:owners", "role:administrators", "role:moderators", "role:fullmembers", "role:members"]
    nested += ["role:everyone", "role:internet"]
    subgroup_added = "USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED"
    assert entries[8:14] == [
        (subgroup_added, None, None, by_name[larger], {"subgroup_ids": [by_name[smaller]]})
        for smaller, larger in pairwise(nested)
    ]
    # Its Welcome Bot, created with it before its owner, joins no group.
    assert entries[14:] == [("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", None, owner.id, by_name["role:owners"], {})]


def test_the_admin_records_the_staff_user(staff, realm, owner, admin, team):
    start = last_id()
    data = inline_data(team, members=[admin])
    data["description"] = "Edited in the admin"
    assert staff.post(f"/admin/groups/usergroup/{team.id}/change/", data).status_code == 302
    described = {"old_value": "The team", "new_value": "Edited in the admin"}
    assert group_entries(realm, since=start) == [
        ("USER_GROUP_DESCRIPTION_CHANGED", owner.id, None, team.id, described),
        ("USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED", owner.id, admin.id, team.id, {}),
    ]
