"""PATCH /settings with `target_users`: administrators change others' settings, by user ids and by
groups (their active members), optionally sparing whoever changed a setting themselves."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.groups.selectors import system_groups
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import Role, User
from apps.users.settings_models import USER_SETTINGS
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory, UserFactory


def bulk(user, *, user_ids=(), group_ids=(), skip=False, **settings):
    target = {"user_ids": list(user_ids), "group_ids": list(group_ids), "skip_if_already_edited": skip}
    return ApiClient(user).patch("/settings", {"target_users": target, **settings})


def value(user: User, name: str):
    return getattr(User.objects.get(id=user.id), name)


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_administrators_change_others_settings(request, role, member, moderator):
    actor = request.getfixturevalue(role)
    assert_success(bulk(actor, user_ids=[member.id, moderator.id], emojiset="text", enter_sends=True))
    for user in (member, moderator):
        assert (value(user, "emojiset"), value(user, "enter_sends")) == ("text", True)
    # The administrator's own settings are not among them.
    assert value(actor, "emojiset") == "google"
    entries = RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_SETTING_CHANGED)
    assert {(e.modified_user_id, e.acting_user_id, e.extra_data["property"]) for e in entries} == {
        (user.id, actor.id, name) for user in (member, moderator) for name in ("emojiset", "enter_sends")
    }


@pytest.mark.parametrize("role", ["moderator", "member", "guest"])
def test_others_may_not(request, role, admin):
    actor = request.getfixturevalue(role)
    response = bulk(actor, user_ids=[admin.id], emojiset="text")
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    assert value(admin, "emojiset") == "google"


def test_bots_may_not_even_when_administrators(realm, admin, member):
    bot = BotFactory(realm=realm, bot_owner=admin, role=Role.ADMINISTRATOR)
    response = bulk(bot, user_ids=[member.id], emojiset="text")
    assert_error(response, 400, "BAD_REQUEST", "This endpoint does not accept bot requests.")


def test_one_update_for_everyone_given_the_same_changes(realm, admin):
    people = [UserFactory(realm=realm) for _ in range(5)]
    changes = {name: not USER_SETTINGS[name].default for name in ("enter_sends", "fluid_layout_width", "enable_sounds")}
    with CaptureQueriesContext(connection) as queries:
        assert_success(bulk(admin, user_ids=[user.id for user in people], **changes))
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert len(updates) == 1, updates
    assert all(value(user, "fluid_layout_width") for user in people)


@pytest.mark.parametrize(
    "ids",
    [
        ["foreign"],  # another organization's user
        ["bot"],  # bots have no settings
        [999_999],  # nobody
    ],
)
def test_unknown_users_are_refused_and_nothing_changes(request, admin, member, ids):
    named = {"foreign": "foreign_user", "bot": "bot"}
    user_ids = [request.getfixturevalue(named[i]).id if i in named else i for i in ids]
    response = bulk(admin, user_ids=[member.id, *user_ids], emojiset="text")
    assert_error(response, 400, "BAD_REQUEST", f"Invalid user ID: {user_ids[0]}")
    assert value(member, "emojiset") == "google"


def test_deactivated_people_named_by_id_are_changed(admin, member):
    do_deactivate_user(member, acting_user=admin)
    assert_success(bulk(admin, user_ids=[member.id], twenty_four_hour_time=True))
    assert value(member, "twenty_four_hour_time") is True


def test_groups_mean_their_active_people_through_subgroups(realm, admin, make_group):
    inner_person, outer_person, gone = (UserFactory(realm=realm) for _ in range(3))
    robot = BotFactory(realm=realm, bot_owner=admin)
    inner = make_group(admin, "inner", members=[inner_person, gone, robot])
    outer = make_group(admin, "outer", members=[outer_person], subgroup_ids=[inner.id])
    do_deactivate_user(gone, acting_user=admin)
    assert_success(bulk(admin, group_ids=[outer.id], color_scheme=2))
    assert [value(user, "color_scheme") for user in (inner_person, outer_person, gone, admin)] == [2, 2, 1, 1]
    assert value(robot, "color_scheme") == 1


def test_system_groups_are_groups_too(admin, member, guest, sys_groups):
    assert_success(bulk(admin, group_ids=[sys_groups["role:members"].id], translate_emoticons=True))
    assert (value(member, "translate_emoticons"), value(guest, "translate_emoticons")) == (True, False)
    assert value(admin, "translate_emoticons") is True  # administrators are members too


def test_unknown_groups_are_refused(admin, member, other_realm):
    foreign_group = system_groups(other_realm.id)["role:members"]
    for group_id in (foreign_group.id, 999_999):
        response = bulk(admin, user_ids=[member.id], group_ids=[group_id], emojiset="text")
        assert_error(response, 400, "BAD_REQUEST", f"Invalid user group ID: {group_id}")
    assert value(member, "emojiset") == "google"


def test_skip_if_already_edited_spares_those_who_chose_themselves(realm, admin):
    chose, was_set, untouched = (UserFactory(realm=realm) for _ in range(3))
    assert_success(ApiClient(chose).patch("/settings", {"emojiset": "twitter"}))
    assert_success(ApiClient(chose).patch("/settings", {"emojiset": "google"}))  # back to the default
    assert_success(bulk(admin, user_ids=[was_set.id], emojiset="text"))  # an administrator's choice
    everyone = [chose.id, was_set.id, untouched.id]
    assert_success(bulk(admin, user_ids=everyone, skip=True, emojiset="google-blob", enter_sends=True))
    # Per setting: who chose the emoji set keeps it, and still gets the other setting.
    assert [value(user, "emojiset") for user in (chose, was_set, untouched)] == ["google", "google-blob", "google-blob"]
    assert all(value(user, "enter_sends") for user in (chose, was_set, untouched))
    # Without it, everyone.
    assert_success(bulk(admin, user_ids=everyone, emojiset="text"))
    assert value(chose, "emojiset") == "text"


@pytest.mark.parametrize(
    "params",
    [
        {"full_name": "Renamed"},
        {"email": "new@example.com"},
        {"new_password": "a long new passphrase 42", "old_password": "correct horse battery"},
        {"timezone": "Europe/Paris"},
        {"presence_enabled": False},
        {"email_address_visibility": 4},
        {"send_read_receipts": False},
        {"send_private_typing_notifications": False},
        {"send_stream_typing_notifications": False},
        {"allow_private_data_export": True},
        {"enable_digest_emails": False},
        {"enable_login_emails": False},
        {"enable_marketing_emails": False},
    ],
)
def test_what_is_not_for_administrators_to_choose(admin, member, params):
    before = {name: value(member, name) for name in USER_SETTINGS}
    response = bulk(admin, user_ids=[member.id], enter_sends=True, **params)
    assert_error(response, 400, "BAD_REQUEST", "Cannot change this setting for other users.")
    assert {name: value(member, name) for name in USER_SETTINGS} == before
    assert value(member, "full_name") == "Mel Member"


@pytest.mark.parametrize(
    ("target", "msg"),
    [
        ({"user_ids": [1]}, "skip_if_already_edited key is missing from target_users"),
        ({"skip_if_already_edited": False}, "Either user_ids or group_ids must be provided."),
        (
            {"user_ids": [], "group_ids": [], "skip_if_already_edited": False},
            "Either user_ids or group_ids must be provided.",
        ),
        (
            {"user_ids": [1], "skip_if_already_edited": False, "everyone": True},
            'Argument "everyone" at target_users is unexpected',
        ),
        ({"user_ids": ["1"], "skip_if_already_edited": False}, 'target_users["user_ids"][0] is not an integer'),
        ({"user_ids": [0], "skip_if_already_edited": False}, 'target_users["user_ids"][0] is too small'),
        ({"user_ids": [1], "skip_if_already_edited": "yes"}, 'target_users["skip_if_already_edited"] is not a boolean'),
        ([1, 2], "target_users is not a dict"),
    ],
)
def test_malformed_target_users(admin, target, msg):
    response = ApiClient(admin).patch("/settings", {"target_users": target, "emojiset": "text"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", msg)


def test_invalid_values_are_refused_before_users_are_looked_up(admin):
    response = bulk(admin, user_ids=[999_999], color_scheme=9)
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "Invalid color_scheme")
