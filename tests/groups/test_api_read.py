"""GET /user_groups and the membership reads: shapes, nesting, guests, other organizations."""

import pytest

from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.models import UserGroup
from apps.groups.serializers import AnonymousGroupValue
from apps.users.actions.activation import do_deactivate_user
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory


@pytest.fixture
def team(owner, member, make_group, sys_groups):
    """ "team": member directly, moderators (and so administrators and owners) through a subgroup."""
    return make_group(
        owner,
        "team",
        [member],
        description="The team",
        subgroup_ids=[sys_groups["role:moderators"].id],
        settings={"can_mention_group": AnonymousGroupValue((member.id,), (sys_groups["role:owners"].id,))},
    )


def test_list_shows_every_named_group_in_zulips_shape(owner, admin, member, bot, team, sys_groups):
    groups = assert_success(ApiClient(member).get("/user_groups"))["user_groups"]
    assert [g["name"] for g in groups] == [*sys_groups, "team"]
    nobody = sys_groups["role:nobody"].id
    owners = next(g for g in groups if g["name"] == "role:owners")
    assert owners == {
        "id": sys_groups["role:owners"].id,
        "name": "role:owners",
        "description": "Owners of this organization",
        "members": [owner.id],
        "direct_subgroup_ids": [],
        "creator_id": None,
        "date_created": int(sys_groups["role:owners"].date_created.timestamp()),
        "is_system_group": True,
        "deactivated": False,
        **dict.fromkeys(UserGroup.SETTINGS, nobody),
    }
    assert next(g for g in groups if g["name"] == "role:members")["members"] == [member.id, bot.id]
    assert next(g for g in groups if g["name"] == "role:administrators")["direct_subgroup_ids"] == [
        sys_groups["role:owners"].id
    ]
    assert groups[-1] == {
        "id": team.id,
        "name": "team",
        "description": "The team",
        "members": [member.id],
        "direct_subgroup_ids": [sys_groups["role:moderators"].id],
        "creator_id": owner.id,
        "date_created": int(team.date_created.timestamp()),
        "is_system_group": False,
        "deactivated": False,
        "can_add_members_group": {"direct_members": [owner.id], "direct_subgroups": []},
        "can_join_group": nobody,
        "can_leave_group": sys_groups["role:everyone"].id,
        "can_manage_group": {"direct_members": [owner.id], "direct_subgroups": []},
        "can_mention_group": {"direct_members": [member.id], "direct_subgroups": [sys_groups["role:owners"].id]},
        "can_remove_members_group": nobody,
    }


def test_deactivated_groups_are_listed_only_on_request(owner, make_group):
    old = make_group(owner, "old")
    check_deactivate_user_group(old.id, acting_user=owner)
    api = ApiClient(owner)
    assert "old" not in [g["name"] for g in assert_success(api.get("/user_groups"))["user_groups"]]
    listed = assert_success(api.get("/user_groups", {"include_deactivated_groups": True}))["user_groups"]
    assert [g["deactivated"] for g in listed if g["name"] == "old"] == [True]


def test_other_organizations_groups_are_not_listed(owner, foreign_user, make_group):
    make_group(foreign_user, "zephyr-team", [foreign_user])
    names = [g["name"] for g in assert_success(ApiClient(owner).get("/user_groups"))["user_groups"]]
    assert "zephyr-team" not in names
    assert len(names) == 8


def test_members_directly_and_through_subgroups(owner, admin, moderator, member, team):
    api = ApiClient(member)
    assert assert_success(api.get(f"/user_groups/{team.id}/members"))["members"] == sorted(
        [owner.id, admin.id, moderator.id, member.id]
    )
    direct = api.get(f"/user_groups/{team.id}/members", {"direct_member_only": True})
    assert assert_success(direct)["members"] == [member.id]


def test_subgroups_directly_and_at_any_depth(member, team, sys_groups):
    api = ApiClient(member)
    nested = [sys_groups[name].id for name in ("role:owners", "role:administrators", "role:moderators")]
    assert assert_success(api.get(f"/user_groups/{team.id}/subgroups"))["subgroups"] == nested
    direct = api.get(f"/user_groups/{team.id}/subgroups", {"direct_subgroup_only": True})
    assert assert_success(direct)["subgroups"] == [sys_groups["role:moderators"].id]


@pytest.mark.parametrize(
    ("who", "direct_member_only", "expected"),
    [("member", False, True), ("member", True, True), ("owner", False, True), ("owner", True, False)],
)
def test_is_user_group_member(request, member, team, who, direct_member_only, expected):
    user = request.getfixturevalue(who)
    response = ApiClient(member).get(
        f"/user_groups/{team.id}/members/{user.id}", {"direct_member_only": direct_member_only}
    )
    assert assert_success(response)["is_user_group_member"] is expected


def test_is_user_group_member_through_deep_nesting(owner, member, make_group):
    inner = make_group(owner, "inner", [member])
    middle = make_group(owner, "middle", [], subgroup_ids=[inner.id])
    outer = make_group(owner, "outer", [], subgroup_ids=[middle.id])
    body = assert_success(ApiClient(owner).get(f"/user_groups/{outer.id}/members/{member.id}"))
    assert body["is_user_group_member"] is True
    assert assert_success(ApiClient(owner).get(f"/user_groups/{outer.id}/members"))["members"] == [member.id]


def test_is_user_group_member_of_people_who_cannot_be_asked_about(realm, owner, member, bot, team, foreign_user):
    api = ApiClient(owner)
    assert_error(api.get(f"/user_groups/{team.id}/members/{foreign_user.id}"), 400, "BAD_REQUEST", "No such user")
    assert_error(api.get(f"/user_groups/{team.id}/members/{bot.id}"), 400, "BAD_REQUEST", "No such user")
    assert_error(api.get(f"/user_groups/{team.id}/members/999999"), 400, "BAD_REQUEST", "No such user")
    gone = UserFactory(realm=realm)
    do_deactivate_user(gone, acting_user=owner)
    assert_error(api.get(f"/user_groups/{team.id}/members/{gone.id}"), 400, "BAD_REQUEST", "User is deactivated")


@pytest.mark.parametrize(
    "path",
    ["/user_groups/{id}/members", "/user_groups/{id}/subgroups", "/user_groups/{id}/members/{user}"],
)
def test_groups_of_other_organizations_and_setting_groups_are_invalid(owner, foreign_user, team, make_group, path):
    theirs = make_group(foreign_user, "theirs", [foreign_user])
    anonymous = team.can_mention_group_id
    api = ApiClient(owner)
    for group_id in (theirs.id, anonymous, 999999):
        response = api.get(path.format(id=group_id, user=owner.id))
        assert_error(response, 400, "BAD_REQUEST", "Invalid user group")


def test_reads_of_a_deactivated_group_are_refused(owner, make_group):
    old = make_group(owner, "old", [owner])
    check_deactivate_user_group(old.id, acting_user=owner)
    response = ApiClient(owner).get(f"/user_groups/{old.id}/members")
    assert_error(response, 400, "BAD_REQUEST", "User group is deactivated.")


@pytest.mark.parametrize(
    "path",
    ["/user_groups", "/user_groups/{id}/members", "/user_groups/{id}/subgroups", "/user_groups/{id}/members/{user}"],
)
def test_guests_may_not_read_groups_and_bots_may(guest, bot, team, path):
    url = path.format(id=team.id, user=guest.id)
    assert_error(ApiClient(guest).get(url), 400, "BAD_REQUEST", "Not allowed for guest users")
    assert_success(ApiClient(bot).get(path.format(id=team.id, user=bot.bot_owner_id)))


def test_reads_refuse_bad_parameters(member, team):
    response = ApiClient(member).get("/user_groups", {"include_deactivated_groups": "yes"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "include_deactivated_groups is not valid JSON")
    response = ApiClient(member).get(f"/user_groups/{team.id}/members", {"direct_member_only": 1})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "direct_member_only is not a boolean")


def test_reads_need_authentication(anonymous, team):
    assert_error(anonymous.get("/user_groups"), 401, "UNAUTHORIZED")
