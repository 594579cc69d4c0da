"""PATCH /user_groups/{id}: name, description, group settings with {new, old}, reactivation."""

import json

import pytest

from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.models import UserGroup
from apps.groups.serializers import AnonymousGroupValue
from tests.api import ApiClient, assert_error, assert_success


@pytest.fixture
def team(member, make_group):
    return make_group(member, "team", [member], description="The team")


def update(user, group, **params):
    encoded = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    return ApiClient(user).patch(f"/user_groups/{group.id}", encoded)


def events_without_ids(events):
    return [{k: v for k, v in e.items() if k != "id"} for e in events if e["type"] == "user_group"]


def test_rename_and_describe(member, owner, team, capture_events):
    with capture_events(owner) as received:
        assert_success(update(member, team, name="Team A", description="Now with an A"))
    team.refresh_from_db()
    assert (team.name, team.description) == ("Team A", "Now with an A")
    assert events_without_ids(received[owner.id]) == [
        {"type": "user_group", "op": "update", "group_id": team.id, "data": {"name": "Team A"}},
        {"type": "user_group", "op": "update", "group_id": team.id, "data": {"description": "Now with an A"}},
    ]


def test_unchanged_values_send_nothing(member, owner, team, capture_events):
    with capture_events(owner) as received:
        assert_success(update(member, team, name="team", description="The team"))
    assert received[owner.id] == []


def test_renaming_to_another_case_of_the_same_name_is_allowed(member, team):
    assert_success(update(member, team, name="TEAM"))
    team.refresh_from_db()
    assert team.name == "TEAM"


def test_change_a_setting(member, owner, admin, team, sys_groups, capture_events):
    with capture_events(owner) as received:
        assert_success(update(member, team, can_mention_group={"new": sys_groups["role:members"].id}))
    team.refresh_from_db()
    assert team.can_mention_group_id == sys_groups["role:members"].id
    assert events_without_ids(received[owner.id]) == [
        {
            "type": "user_group",
            "op": "update",
            "group_id": team.id,
            "data": {"can_mention_group": sys_groups["role:members"].id},
        }
    ]

    with capture_events(owner) as received:
        value = {"direct_members": [admin.id], "direct_subgroups": [sys_groups["role:moderators"].id]}
        assert_success(update(member, team, can_mention_group={"new": value, "old": sys_groups["role:members"].id}))
    assert events_without_ids(received[owner.id]) == [
        {"type": "user_group", "op": "update", "group_id": team.id, "data": {"can_mention_group": value}}
    ]


def test_anonymous_setting_groups_are_reused_then_deleted(member, admin, owner, team, sys_groups):
    setting = team.can_manage_group  # {direct_members: [member]} since member created it
    assert setting.is_anonymous
    assert_success(
        update(
            member, team, can_manage_group={"new": {"direct_members": [member.id, admin.id], "direct_subgroups": []}}
        )
    )
    team.refresh_from_db()
    assert team.can_manage_group_id == setting.id
    assert sorted(setting.direct_members.values_list("id", flat=True)) == sorted([member.id, admin.id])
    assert_success(update(member, team, can_manage_group={"new": {"direct_members": [], "direct_subgroups": []}}))
    team.refresh_from_db()
    assert team.can_manage_group_id == sys_groups["role:nobody"].id
    assert not UserGroup.objects.filter(id=setting.id).exists()


def test_old_must_match_the_current_value(member, team, sys_groups):
    everyone = sys_groups["role:everyone"].id
    members = sys_groups["role:members"].id
    response = update(member, team, can_mention_group={"new": members, "old": sys_groups["role:moderators"].id})
    body = assert_error(response, 400, "EXPECTATION_MISMATCH", "'old' value does not match the expected value.")
    assert body["result"] == "error"
    team.refresh_from_db()
    assert team.can_mention_group_id == everyone
    # The same value written differently matches.
    old = {"direct_members": [], "direct_subgroups": [everyone]}
    assert_success(update(member, team, can_mention_group={"new": members, "old": old}))
    # An anonymous value matches whatever the order of its ids.
    current = {"direct_members": [member.id], "direct_subgroups": []}
    assert_success(update(member, team, can_manage_group={"new": members, "old": current}))


def test_a_refused_change_undoes_the_others(member, team, sys_groups):
    response = update(
        member,
        team,
        name="renamed",
        can_mention_group={"new": sys_groups["role:internet"].id},
    )
    assert_error(response, 400, "BAD_REQUEST", "'can_mention_group' setting cannot be set to 'role:internet' group.")
    team.refresh_from_db()
    assert team.name == "team"


def test_reactivate_and_edit_a_deactivated_group(member, owner, team, capture_events):
    check_deactivate_user_group(team.id, acting_user=member)
    assert_success(update(member, team, description="Still editable"))
    with capture_events(owner) as received:
        assert_success(update(member, team, deactivated=False))
    team.refresh_from_db()
    assert not team.deactivated
    [event] = events_without_ids(received[owner.id])
    assert (event["op"], event["group"]["id"], event["group"]["deactivated"]) == ("add", team.id, False)
    assert "for_reactivation" not in event


ERRORS = [
    ({}, "BAD_REQUEST", "No new data supplied"),
    ({"name": ""}, "BAD_REQUEST", "User group name can't be empty!"),
    ({"name": "role:x"}, "BAD_REQUEST", "User group name cannot start with 'role:'."),
    ({"name": "OTHER"}, "BAD_REQUEST", "User group 'OTHER' already exists."),
    ({"can_join_group": 5}, "REQUEST_VARIABLE_INVALID", "can_join_group does not have the expected format"),
    ({"can_join_group": {"old": 5}}, "REQUEST_VARIABLE_INVALID", "can_join_group does not have the expected format"),
    (
        {"can_join_group": {"new": 5, "other": 1}},
        "REQUEST_VARIABLE_INVALID",
        "can_join_group does not have the expected format",
    ),
    ({"can_join_group": {"new": 999999}}, "BAD_REQUEST", "Invalid user group"),
    (
        {"can_join_group": {"new": {"direct_members": [999999], "direct_subgroups": []}}},
        "BAD_REQUEST",
        "Invalid user ID: 999999",
    ),
    ({"deactivated": "maybe"}, "REQUEST_VARIABLE_INVALID", "deactivated is not valid JSON"),
]


@pytest.mark.parametrize(("params", "code", "msg"), ERRORS, ids=[e[2] for e in ERRORS])
def test_update_refusals(member, team, make_group, params, code, msg):
    make_group(member, "other")
    assert_error(update(member, team, **params), 400, code, msg)
    team.refresh_from_db()
    assert (team.name, team.can_join_group.name) == ("team", "role:nobody")


@pytest.mark.parametrize("who", ["moderator", "admin", "owner", "bot"])
def test_who_may_update(request, team, who):
    user = request.getfixturevalue(who)
    response = update(user, team, description="changed")
    if user.is_owner:  # the organization's can_manage_all_groups, owners by default
        assert_success(response)
    else:
        assert_error(response, 400, "BAD_REQUEST", "Insufficient permission")


def test_managers_through_nested_groups_may_update(owner, moderator, team, make_group):
    inner = make_group(owner, "inner", [moderator])
    outer = make_group(owner, "outer", [], subgroup_ids=[inner.id])
    assert_error(update(moderator, team, description="x"), 400, "BAD_REQUEST", "Insufficient permission")
    assert_success(update(team.creator, team, can_manage_group={"new": outer.id}))
    assert_success(update(moderator, team, description="x"))


def test_system_groups_and_other_organizations_groups_cannot_be_updated(owner, foreign_user, sys_groups, make_group):
    assert_error(update(owner, sys_groups["role:members"], name="x"), 400, "BAD_REQUEST", "Insufficient permission")
    theirs = make_group(foreign_user, "theirs")
    assert_error(update(owner, theirs, name="x"), 400, "BAD_REQUEST", "Invalid user group")
    anonymous = UserGroup.objects.get(id=theirs.can_manage_group_id)
    assert_error(update(owner, anonymous, name="x"), 400, "BAD_REQUEST", "Invalid user group")


def test_guests_may_not_update_even_groups_they_manage(guest, team, make_group):
    managed = make_group(team.creator, "x", settings={"can_manage_group": AnonymousGroupValue((guest.id,), ())})
    assert_error(update(guest, managed, name="y"), 400, "BAD_REQUEST", "Not allowed for guest users")
