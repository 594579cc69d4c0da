"""POST /user_groups/{user_group_id}/subgroups (the spec's endpoint) and GET of the same path."""

import json

import pytest

from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.selectors import group_member_ids, subgroup_ids
from apps.groups.serializers import AnonymousGroupValue
from tests.api import ApiClient, assert_error, assert_success


def post(user, group_id, **params):
    return ApiClient(user).post(f"/user_groups/{group_id}/subgroups", {k: json.dumps(v) for k, v in params.items()})


@pytest.fixture
def groups(owner, member, admin, make_group):
    """leadership ⊂ support; test stands alone. The owner created them all."""
    leadership = make_group(owner, "leadership", [admin])
    support = make_group(owner, "support", [member], subgroup_ids=[leadership.id])
    test = make_group(owner, "test")
    return leadership, support, test


def test_add_and_delete_subgroups_with_events(owner, member, groups, capture_events, sys_groups):
    leadership, support, test = groups
    moderators = sys_groups["role:moderators"].id
    with capture_events(member) as received:
        assert_success(post(owner, test.id, add=[support.id, moderators]))
        assert_success(post(owner, support.id, delete=[leadership.id]))
    assert subgroup_ids(test.id, direct_subgroup_only=True) == sorted([support.id, moderators])
    assert subgroup_ids(support.id) == []
    events = [{k: v for k, v in e.items() if k != "id"} for e in received[member.id]]
    assert events == [
        {
            "type": "user_group",
            "op": "add_subgroups",
            "group_id": test.id,
            "direct_subgroup_ids": sorted([support.id, moderators]),
        },
        {
            "type": "user_group",
            "op": "remove_subgroups",
            "group_id": support.id,
            "direct_subgroup_ids": [leadership.id],
        },
    ]


def test_add_and_delete_in_one_request(owner, groups):
    leadership, support, test = groups
    assert_success(post(owner, support.id, add=[test.id], delete=[leadership.id]))
    assert subgroup_ids(support.id, direct_subgroup_only=True) == [test.id]


def test_members_of_subgroups_are_members(owner, admin, member, groups):
    _, support, _ = groups
    assert group_member_ids(support.id) == sorted([admin.id, member.id])


ERRORS = [
    ({}, 'Nothing to do. Specify at least one of "add" or "delete".'),
    ({"add": [], "delete": []}, 'Nothing to do. Specify at least one of "add" or "delete".'),
    ({"group": "support", "add": ["leadership"]}, "User group {leadership} is already a subgroup of this group."),
    (
        {"group": "leadership", "add": ["support"]},
        "User group {leadership} is already a subgroup of one of the passed subgroups.",
    ),
    ({"group": "test", "add": ["test"]}, "User group {test} is already a subgroup of one of the passed subgroups."),
    ({"group": "support", "delete": ["test"]}, "User group {test} is not a subgroup of this group."),
    ({"group": "support", "add": ["test", 999999]}, "Invalid user group ID: 999999"),
    ({"group": "support", "add": ["theirs"]}, "Invalid user group ID: {theirs}"),
    ({"group": "support", "add": ["setting"]}, "Invalid user group ID: {setting}"),
    ({"group": "support", "add": ["old"]}, "User group is deactivated."),
    ({"group": "theirs", "add": ["test"]}, "Invalid user group"),
    ({"group": 999999, "add": ["test"]}, "Invalid user group"),
    ({"group": "setting", "add": ["test"]}, "Invalid user group"),
    ({"group": "role:members", "add": ["test"]}, "Insufficient permission"),
    ({"group": "support", "add": ["test"], "delete": ["test"]}, None),
]


@pytest.mark.parametrize(("params", "msg"), ERRORS, ids=[str(e[1]) for e in ERRORS])
def test_subgroup_refusals_change_nothing(owner, foreign_user, groups, make_group, sys_groups, params, msg):
    leadership, support, test = groups
    old = make_group(owner, "old")
    check_deactivate_user_group(old.id, acting_user=owner)
    theirs = make_group(foreign_user, "theirs")
    ids = {"leadership": leadership.id, "support": support.id, "test": test.id, "old": old.id, "theirs": theirs.id}
    ids["setting"] = support.can_manage_group_id
    ids.update({name: group.id for name, group in sys_groups.items()})
    params = dict(params)
    group_id = ids.get(params.pop("group", "support"), 999999)
    request = {key: [ids.get(item, item) for item in value] for key, value in params.items()}
    before = {g.id: subgroup_ids(g.id, direct_subgroup_only=True) for g in (leadership, support, test)}
    response = post(owner, group_id, **request)
    if msg is None:  # added then removed: the same as before
        assert_success(response)
    else:
        assert_error(response, 400, "BAD_REQUEST", msg.format(**ids))
    assert {g.id: subgroup_ids(g.id, direct_subgroup_only=True) for g in (leadership, support, test)} == before


def test_cycles_through_several_levels_are_refused(owner, make_group):
    a = make_group(owner, "a")
    b = make_group(owner, "b", subgroup_ids=[a.id])
    c = make_group(owner, "c", subgroup_ids=[b.id])
    response = post(owner, a.id, add=[c.id])
    assert_error(
        response, 400, "BAD_REQUEST", f"User group {a.id} is already a subgroup of one of the passed subgroups."
    )
    assert subgroup_ids(a.id) == []


def test_subgroups_of_a_deactivated_group_can_change(owner, groups):
    leadership, support, test = groups
    check_deactivate_user_group(support.id, acting_user=owner)
    assert_success(post(owner, support.id, delete=[leadership.id]))
    assert_success(post(owner, support.id, add=[test.id]))


@pytest.mark.parametrize(
    ("who", "add_error", "delete_error"),
    [
        ("owner", None, None),
        ("admin", "Insufficient permission", "Insufficient permission"),  # can_manage_all_groups: owners
        ("moderator", "Insufficient permission", "Insufficient permission"),
        ("member", "Insufficient permission", "Insufficient permission"),
        ("bot", "Insufficient permission", "Insufficient permission"),
        ("guest", "Not allowed for guest users", "Not allowed for guest users"),
    ],
)
def test_who_may_change_subgroups(request, groups, who, add_error, delete_error):
    leadership, support, test = groups
    user = request.getfixturevalue(who)
    response = post(user, support.id, add=[test.id])
    assert_success(response) if add_error is None else assert_error(response, 400, "BAD_REQUEST", add_error)
    response = post(user, support.id, delete=[leadership.id])
    assert_success(response) if delete_error is None else assert_error(response, 400, "BAD_REQUEST", delete_error)


def test_bots_may_change_subgroups_they_are_allowed_to(owner, bot, make_group):
    managers = make_group(owner, "managers", [bot])
    team = make_group(owner, "team", settings={"can_manage_group": managers.id})
    other = make_group(owner, "other")
    assert_success(post(bot, team.id, add=[other.id]))
    assert_success(post(bot, team.id, delete=[other.id]))


def test_adding_needs_can_add_members_group_and_removing_can_manage_group(owner, moderator, make_group, sys_groups):
    team = make_group(
        owner, "team", settings={"can_add_members_group": AnonymousGroupValue((), (sys_groups["role:moderators"].id,))}
    )
    other = make_group(owner, "other")
    assert_success(post(moderator, team.id, add=[other.id]))
    assert_error(post(moderator, team.id, delete=[other.id]), 400, "BAD_REQUEST", "Insufficient permission")


def test_managers_through_nested_subgroups(owner, member, make_group):
    inner = make_group(owner, "inner", [member])
    middle = make_group(owner, "middle", subgroup_ids=[inner.id])
    team = make_group(owner, "team", settings={"can_manage_group": AnonymousGroupValue((), (middle.id,))})
    other = make_group(owner, "other")
    assert_success(post(member, team.id, add=[other.id]))
    assert_success(post(member, team.id, delete=[other.id]))


def test_bad_parameters(owner, groups):
    _, support, _ = groups
    response = ApiClient(owner).post(f"/user_groups/{support.id}/subgroups", {"add": "1"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "add is not a list")
    response = ApiClient(owner).post(f"/user_groups/{support.id}/subgroups", {"delete": "[0]"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "delete[0] is too small")
