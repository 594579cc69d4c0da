"""POST /user_groups/create: the group, its defaults and settings, the event, and every refusal."""

import pytest

from apps.events.backends import get_backend
from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.models import UserGroup
from apps.groups.selectors import group_member_ids, subgroup_ids
from apps.users.actions.activation import do_deactivate_user
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory


def create(user, **params):
    return ApiClient(user).post("/user_groups/create", {"description": "", "members": [], **params})


def test_create_a_group_and_announce_it(owner, admin, member, bot, guest, foreign_user, capture_events, sys_groups):
    with capture_events(admin, member, bot, guest) as received:
        body = assert_success(create(member, name="Support", description="Help desk", members=[member.id, bot.id]))
    group = UserGroup.objects.get(id=body["group_id"])
    assert (group.name, group.description, group.creator_id, group.realm_id) == (
        "Support",
        "Help desk",
        member.id,
        member.realm_id,
    )
    assert group_member_ids(group.id) == [member.id, bot.id]
    creator_only = {"direct_members": [member.id], "direct_subgroups": []}
    expected = {
        "type": "user_group",
        "op": "add",
        "group": {
            "id": group.id,
            "name": "Support",
            "description": "Help desk",
            "members": [member.id, bot.id],
            "direct_subgroup_ids": [],
            "creator_id": member.id,
            "date_created": int(group.date_created.timestamp()),
            "is_system_group": False,
            "deactivated": False,
            "can_add_members_group": creator_only,
            "can_join_group": sys_groups["role:nobody"].id,
            "can_leave_group": sys_groups["role:everyone"].id,
            "can_manage_group": creator_only,
            "can_mention_group": sys_groups["role:everyone"].id,
            "can_remove_members_group": sys_groups["role:nobody"].id,
        },
    }
    for user in (admin, member, bot, guest):
        assert [{k: v for k, v in e.items() if k != "id"} for e in received[user.id]] == [expected]


def test_other_organizations_and_deactivated_users_hear_nothing(realm, owner, member, foreign_user, capture_events):
    gone = UserFactory(realm=realm)
    with capture_events(foreign_user, gone) as received:
        assert_success(create(member, name="quiet"))
        do_deactivate_user(gone, acting_user=owner)
        assert_success(create(member, name="quieter"))
    assert received[foreign_user.id] == []
    assert received[gone.id] == []
    assert get_backend().queue_ids_of_user(gone.id) == []  # deleted with the deactivation


def test_create_with_settings_and_subgroups(owner, member, moderator, make_group, sys_groups):
    helpers = make_group(owner, "helpers", [moderator])
    body = assert_success(
        create(
            owner,
            name="team",
            members=[member.id],
            subgroups=[helpers.id, sys_groups["role:administrators"].id],
            can_manage_group=sys_groups["role:moderators"].id,
            can_mention_group={"direct_members": [member.id], "direct_subgroups": [helpers.id]},
            can_join_group={"direct_members": [], "direct_subgroups": [helpers.id]},
            can_leave_group={"direct_members": [], "direct_subgroups": []},
        )
    )
    group = UserGroup.objects.get(id=body["group_id"])
    assert subgroup_ids(group.id, direct_subgroup_only=True) == sorted(
        [helpers.id, sys_groups["role:administrators"].id]
    )
    assert group.can_manage_group_id == sys_groups["role:moderators"].id
    assert group.can_join_group_id == helpers.id  # a lone subgroup is that group
    assert group.can_leave_group_id == sys_groups["role:nobody"].id  # nothing is nobody
    mention = group.can_mention_group
    assert mention.is_anonymous
    assert list(mention.direct_members.all()) == [member]
    assert list(mention.direct_subgroups.all()) == [helpers]


def test_bots_may_create_groups(bot, member):
    body = assert_success(create(bot, name="bots", members=[member.id]))
    assert UserGroup.objects.get(id=body["group_id"]).creator_id == bot.id


def test_guests_may_not_create_groups(guest):
    assert_error(create(guest, name="guests"), 400, "BAD_REQUEST", "Not allowed for guest users")
    assert not UserGroup.objects.filter(name="guests").exists()


def test_who_may_create_is_the_organizations_can_create_groups(realm, owner, member, moderator, sys_groups):
    """Members by default, as in Zulip; only owners change it (the users QA pass: it did not exist)."""
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_create_groups"] == sys_groups["role:members"].id
    assert state["realm_can_manage_all_groups"] == sys_groups["role:owners"].id
    moderators = {"can_create_groups": f'{{"new": {sys_groups["role:moderators"].id}}}'}
    assert_success(ApiClient(owner).patch("/realm", moderators))
    assert_error(create(member, name="mine"), 400, "BAD_REQUEST", "Insufficient permission")
    assert not UserGroup.objects.filter(name="mine").exists()
    assert_success(create(moderator, name="ours"))


ERRORS = [
    ({"name": None}, "REQUEST_VARIABLE_MISSING", "Missing 'name' argument"),
    ({"description": None}, "REQUEST_VARIABLE_MISSING", "Missing 'description' argument"),
    ({"members": None}, "REQUEST_VARIABLE_MISSING", "Missing 'members' argument"),
    ({"members": "[1"}, "REQUEST_VARIABLE_INVALID", "members is not valid JSON"),
    ({"members": '"1"'}, "REQUEST_VARIABLE_INVALID", "members is not a list"),
    ({"members": [999999]}, "BAD_REQUEST", "Invalid user ID: 999999"),
    ({"name": ""}, "BAD_REQUEST", "User group name can't be empty!"),
    ({"name": "   "}, "BAD_REQUEST", "User group name can't be empty!"),
    ({"name": "a" * 101}, "BAD_REQUEST", "User group name cannot exceed 100 characters."),
    ({"name": "@team"}, "BAD_REQUEST", "User group name cannot start with '@'."),
    ({"name": "role:team"}, "BAD_REQUEST", "User group name cannot start with 'role:'."),
    ({"name": "user:1"}, "BAD_REQUEST", "User group name cannot start with 'user:'."),
    ({"name": "stream:1"}, "BAD_REQUEST", "User group name cannot start with 'stream:'."),
    ({"name": "channel:1"}, "BAD_REQUEST", "User group name cannot start with 'channel:'."),
    ({"name": "te\x00am"}, "REQUEST_VARIABLE_INVALID", "name must not contain null bytes"),
    ({"name": "EXISTING"}, "BAD_REQUEST", "User group 'EXISTING' already exists."),
    ({"can_manage_group": 999999}, "BAD_REQUEST", "Invalid user group"),
    (
        {"can_manage_group": "role:internet"},
        "BAD_REQUEST",
        "'can_manage_group' setting cannot be set to 'role:internet' group.",
    ),
    (
        {"can_manage_group": "role:everyone"},
        "BAD_REQUEST",
        "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    ),
    (
        {"can_mention_group": "role:internet"},
        "BAD_REQUEST",
        "'can_mention_group' setting cannot be set to 'role:internet' group.",
    ),
    ({"can_join_group": "old"}, "BAD_REQUEST", "User group is deactivated."),
    ({"can_join_group": "theirs"}, "BAD_REQUEST", "Invalid user group"),
    ({"can_join_group": "true"}, "REQUEST_VARIABLE_INVALID", "can_join_group does not have the expected format"),
    (
        {"can_join_group": '{"direct_members": []}'},
        "REQUEST_VARIABLE_INVALID",
        "can_join_group does not have the expected format",
    ),
    (
        {"can_join_group": '{"direct_members": [1], "direct_subgroups": ["x"]}'},
        "REQUEST_VARIABLE_INVALID",
        "can_join_group does not have the expected format",
    ),
    (
        {"can_join_group": {"direct_members": [999999, 1], "direct_subgroups": []}},
        "BAD_REQUEST",
        "Invalid user ID: 999999",
    ),
    (
        {"can_join_group": {"direct_members": ["me"], "direct_subgroups": [999999]}},
        "BAD_REQUEST",
        "Invalid user group ID: 999999",
    ),
    (
        {"can_join_group": {"direct_members": ["me"], "direct_subgroups": ["old"]}},
        "BAD_REQUEST",
        "User group is deactivated.",
    ),
    ({"subgroups": [999999]}, "BAD_REQUEST", "Invalid user group ID: 999999"),
    ({"subgroups": ["theirs"]}, "BAD_REQUEST", "Invalid user group ID: {theirs}"),
    ({"subgroups": ["old"]}, "BAD_REQUEST", "User group is deactivated."),
    ({"subgroups": ["anonymous"]}, "BAD_REQUEST", "Invalid user group ID: {anonymous}"),
]


@pytest.mark.parametrize(("params", "code", "msg"), ERRORS, ids=[e[2] for e in ERRORS])
def test_create_refusals_change_nothing(owner, member, foreign_user, make_group, sys_groups, params, code, msg):
    make_group(owner, "existing")
    old = make_group(owner, "old")
    check_deactivate_user_group(old.id, acting_user=owner)
    theirs = make_group(foreign_user, "theirs")
    names = {"old": old.id, "theirs": theirs.id, "anonymous": old.can_manage_group_id, "me": member.id}
    names.update({name: group.id for name, group in sys_groups.items()})

    def resolve(value):
        if isinstance(value, list):
            return [resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        return names.get(value, value) if isinstance(value, str) else value

    request = {"name": "new group", "description": "", "members": [member.id]}
    request.update({key: value if key == "name" else resolve(value) for key, value in params.items()})
    before = UserGroup.objects.count()
    response = ApiClient(member).post("/user_groups/create", {k: v for k, v in request.items() if v is not None})
    assert_error(response, 400, code, msg.format(**names))
    assert UserGroup.objects.count() == before


def test_members_from_other_organizations_and_deactivated_members_are_invalid(realm, owner, member, foreign_user):
    assert_error(
        create(member, name="x", members=[foreign_user.id]), 400, "BAD_REQUEST", f"Invalid user ID: {foreign_user.id}"
    )
    gone = UserFactory(realm=realm)
    do_deactivate_user(gone, acting_user=owner)
    assert_error(create(member, name="x", members=[gone.id]), 400, "BAD_REQUEST", f"Invalid user ID: {gone.id}")
    assert not UserGroup.objects.filter(name="x").exists()


def test_repeated_members_count_once(member, admin):
    body = assert_success(create(member, name="twice", members=[admin.id, admin.id]))
    assert group_member_ids(body["group_id"]) == [admin.id]


def test_unknown_parameters_are_reported(member):
    body = assert_success(create(member, name="x", colour="red"))
    assert body["ignored_parameters_unsupported"] == ["colour"]
