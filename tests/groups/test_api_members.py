"""POST /user_groups/{id}/members: adding and removing members (and subgroups), joining and leaving,
and who may do each."""

import json

import pytest

from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.selectors import group_member_ids, subgroup_ids
from apps.groups.serializers import AnonymousGroupValue
from apps.users.actions.activation import do_deactivate_user
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory


@pytest.fixture
def team(owner, member, make_group):
    """Created by the owner (so the owner manages it), with member in it."""
    return make_group(owner, "team", [member])


def post(user, group, **params):
    return ApiClient(user).post(f"/user_groups/{group.id}/members", {k: json.dumps(v) for k, v in params.items()})


def test_add_and_remove_members(owner, member, admin, moderator, team, capture_events):
    with capture_events(member) as received:
        assert_success(post(owner, team, add=[moderator.id, admin.id], delete=[member.id]))
    assert group_member_ids(team.id) == sorted([admin.id, moderator.id])
    events = [{k: v for k, v in e.items() if k != "id"} for e in received[member.id]]
    assert events == [
        {"type": "user_group", "op": "add_members", "group_id": team.id, "user_ids": sorted([admin.id, moderator.id])},
        {"type": "user_group", "op": "remove_members", "group_id": team.id, "user_ids": [member.id]},
    ]


def test_add_and_remove_subgroups_here_too(owner, team, make_group, sys_groups):
    helpers = make_group(owner, "helpers")
    assert_success(post(owner, team, add_subgroups=[helpers.id, sys_groups["role:moderators"].id]))
    assert subgroup_ids(team.id, direct_subgroup_only=True) == sorted([helpers.id, sys_groups["role:moderators"].id])
    assert_success(post(owner, team, delete_subgroups=[helpers.id]))
    assert subgroup_ids(team.id, direct_subgroup_only=True) == [sys_groups["role:moderators"].id]


def test_bots_can_be_members(owner, bot, team):
    assert_success(post(owner, team, add=[bot.id]))
    assert bot.id in group_member_ids(team.id)


def test_members_of_deactivated_groups_can_change(owner, member, team):
    check_deactivate_user_group(team.id, acting_user=owner)
    assert_success(post(owner, team, delete=[member.id]))
    assert_success(post(owner, team, add=[member.id]))
    assert group_member_ids(team.id) == [member.id]


ERRORS = [
    ({}, 'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'),
    (
        {"add": [], "delete": []},
        'Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".',
    ),
    ({"add": ["member"]}, "User {member} is already a member of this group"),
    ({"add": ["admin", 999999]}, "Invalid user ID: 999999"),
    ({"add": ["foreign"]}, "Invalid user ID: {foreign}"),
    ({"add": ["gone"]}, "Invalid user ID: {gone}"),
    ({"delete": ["admin"]}, "There is no member '{admin}' in this user group"),
    ({"delete": ["gone"]}, "Invalid user ID: {gone}"),
    ({"add": ["admin"], "delete": ["admin", "moderator"]}, "There is no member '{moderator}' in this user group"),
]


@pytest.mark.parametrize(("params", "msg"), ERRORS, ids=[e[1] for e in ERRORS])
def test_member_refusals_change_nothing(realm, owner, member, admin, moderator, foreign_user, team, params, msg):
    gone = UserFactory(realm=realm)
    assert_success(post(owner, team, add=[gone.id]))
    do_deactivate_user(gone, acting_user=owner)
    ids = {
        "member": member.id,
        "admin": admin.id,
        "moderator": moderator.id,
        "foreign": foreign_user.id,
        "gone": gone.id,
    }
    request = {key: [ids.get(item, item) for item in value] for key, value in params.items()}
    assert_error(post(owner, team, **request), 400, "BAD_REQUEST", msg.format(**ids))
    assert group_member_ids(team.id) == [member.id]


def test_bad_lists_are_refused(owner, team):
    response = ApiClient(owner).post(f"/user_groups/{team.id}/members", {"add": "[1,"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "add is not valid JSON")
    response = ApiClient(owner).post(f"/user_groups/{team.id}/members", {"delete": '["x"]'})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "delete[0] is not an integer")


@pytest.mark.parametrize(
    ("who", "error"),
    [
        ("owner", None),
        ("admin", "Insufficient permission"),  # can_manage_all_groups: owners
        ("moderator", "Insufficient permission"),
        ("member", "Insufficient permission"),
        ("bot", "Insufficient permission"),
        ("guest", "Not allowed for guest users"),
    ],
)
def test_who_may_add_others(request, make_group, realm, who, error):
    team = make_group(UserFactory(realm=realm), "team")  # managed by its creator only
    someone = UserFactory(realm=realm)
    user = request.getfixturevalue(who)
    response = post(user, team, add=[someone.id])
    if error is None:
        assert_success(response)
        assert group_member_ids(team.id) == [someone.id]
    else:
        assert_error(response, 400, "BAD_REQUEST", error)
        assert group_member_ids(team.id) == []


def test_can_add_members_group_through_nested_subgroups(owner, member, moderator, realm, make_group):
    someone = UserFactory(realm=realm)
    inner = make_group(owner, "inner", [moderator])
    outer = make_group(owner, "outer", [], subgroup_ids=[inner.id])
    team = make_group(owner, "team", settings={"can_add_members_group": AnonymousGroupValue((), (outer.id,))})
    assert team.can_add_members_group_id == outer.id
    assert_success(post(moderator, team, add=[someone.id]))
    # Adding is not removing.
    assert_error(post(moderator, team, delete=[someone.id]), 400, "BAD_REQUEST", "Insufficient permission")
    assert_error(post(member, team, add=[member.id]), 400, "BAD_REQUEST", "Insufficient permission")


def test_can_remove_members_group(owner, member, moderator, make_group, sys_groups):
    team = make_group(owner, "team", [member], settings={"can_remove_members_group": sys_groups["role:moderators"].id})
    assert_error(post(moderator, team, add=[moderator.id]), 400, "BAD_REQUEST", "Insufficient permission")
    assert_success(post(moderator, team, delete=[member.id]))


def test_managers_may_do_everything(owner, member, moderator, make_group):
    team = make_group(owner, "team", [member], settings={"can_manage_group": AnonymousGroupValue((moderator.id,), ())})
    assert_success(post(moderator, team, add=[owner.id], delete=[member.id]))


def test_join_and_leave_oneself(owner, member, make_group, sys_groups):
    team = make_group(
        owner,
        "open",
        settings={
            "can_join_group": sys_groups["role:members"].id,
            "can_leave_group": sys_groups["role:nobody"].id,
            "can_manage_group": sys_groups["role:nobody"].id,
            "can_add_members_group": sys_groups["role:nobody"].id,
        },
    )
    assert_success(post(member, team, add=[member.id]))
    assert_error(post(member, team, delete=[member.id]), 400, "BAD_REQUEST", "Insufficient permission")
    assert group_member_ids(team.id) == [member.id]
    # Joining oneself does not allow adding others.
    assert_error(post(member, team, add=[owner.id]), 400, "BAD_REQUEST", "Insufficient permission")


def test_everyone_may_leave_by_default(owner, member, team):
    assert_success(post(member, team, delete=[member.id]))
    assert group_member_ids(team.id) == []


def test_system_groups_are_not_changed_by_hand(owner, member, sys_groups):
    for group in sys_groups.values():
        assert_error(post(owner, group, add=[member.id]), 400, "BAD_REQUEST", "Insufficient permission")
    assert_error(
        post(member, sys_groups["role:members"], delete=[member.id]), 400, "BAD_REQUEST", "Insufficient permission"
    )


def test_other_organizations_groups_are_invalid(owner, foreign_user, make_group):
    theirs = make_group(foreign_user, "theirs", [foreign_user])
    assert_error(post(owner, theirs, add=[owner.id]), 400, "BAD_REQUEST", "Invalid user group")
    assert group_member_ids(theirs.id) == [foreign_user.id]


def test_a_refused_step_undoes_the_earlier_ones(owner, member, admin, team, capture_events):
    with capture_events(owner) as received:
        assert_error(
            post(owner, team, add=[admin.id], delete=[admin.id, 999999]), 400, "BAD_REQUEST", "Invalid user ID: 999999"
        )
    assert group_member_ids(team.id) == [member.id]
    assert received[owner.id] == []
