"""PATCH /realm: the organization's settings (its own and its group-valued ones), by administrators,
with Zulip's checks, answer and events (realm/update, realm/update_dict)."""

import pytest

from apps.groups.actions.realm import check_update_realm
from apps.groups.models import SystemGroups
from apps.groups.selectors import get_system_group
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog
from tests.api import api_for, assert_error, assert_success


def fresh(realm):
    return Realm.objects.get(id=realm.id)


def test_administrators_change_settings_and_everyone_is_told(realm, admin, member, capture_events):
    with capture_events(member) as received:
        answer = assert_success(
            api_for(admin).patch(
                "/realm",
                {
                    "name": "Renamed",
                    "message_content_edit_limit_seconds": 3600,
                    "move_messages_within_stream_limit_seconds": "unlimited",
                    "message_edit_history_visibility_policy": "moves",
                    "allow_message_editing": False,
                },
            )
        )
    assert answer["name"] == "Renamed"
    assert answer["message_content_edit_limit_seconds"] == 3600
    realm = fresh(realm)
    assert realm.name == "Renamed"
    assert realm.message_content_edit_limit_seconds == 3600
    assert realm.move_messages_within_stream_limit_seconds is None
    assert realm.message_edit_history_visibility_policy == "moves"
    assert realm.allow_message_editing is False
    assert {"type": "realm", "op": "update", "property": "name", "value": "Renamed"} in received[member.id]
    assert {
        "type": "realm",
        "op": "update_dict",
        "property": "default",
        "data": {"message_content_edit_limit_seconds": 3600},
    } in received[member.id]
    assert {
        "type": "realm",
        "op": "update_dict",
        "property": "default",
        "data": {"allow_message_editing": False},
    } in received[member.id]
    assert {
        "type": "realm",
        "op": "update",
        "property": "move_messages_within_stream_limit_seconds",
        "value": None,
    } in received[member.id]
    assert RealmAuditLog.objects.filter(realm=realm, event_type=AuditLogEventType.REALM_PROPERTY_CHANGED).count() == 5


def test_register_shows_the_new_values(realm, admin, member):
    assert_success(api_for(admin).patch("/realm", {"message_content_delete_limit_seconds": 60}))
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_message_content_delete_limit_seconds"] == 60


def test_group_settings_take_a_group_or_members(realm, admin, member, moderator, capture_events):
    moderators = get_system_group(realm.id, SystemGroups.MODERATORS)
    with capture_events(member) as received:
        answer = assert_success(
            api_for(admin).patch("/realm", {"can_create_public_channel_group": {"new": moderators.id}})
        )
    assert answer["can_create_public_channel_group"] == moderators.id
    assert fresh(realm).can_create_public_channel_group_id == moderators.id
    assert received[member.id] == [
        {"type": "realm", "op": "update_dict", "property": "default",
         "data": {"can_create_public_channel_group": moderators.id}}
    ]  # fmt: skip
    value = {"direct_members": [member.id], "direct_subgroups": [moderators.id]}
    answer = assert_success(api_for(admin).patch("/realm", {"can_resolve_topics_group": {"new": value}}))
    assert answer["can_resolve_topics_group"] == value
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_can_resolve_topics_group"] == value
    # The same value again changes nothing.
    assert "can_resolve_topics_group" not in assert_success(
        api_for(admin).patch("/realm", {"can_resolve_topics_group": {"new": value}})
    )


def test_old_must_be_the_current_value(realm, admin):
    admins = get_system_group(realm.id, SystemGroups.ADMINISTRATORS)
    members = get_system_group(realm.id, SystemGroups.MEMBERS)
    change = {"new": admins.id, "old": admins.id}
    response = api_for(admin).patch("/realm", {"can_create_public_channel_group": change, "name": "Not this"})
    assert_error(response, 400, "EXPECTATION_MISMATCH", "'old' value does not match the expected value.")
    assert fresh(realm).name != "Not this"
    change = {"new": admins.id, "old": members.id}
    assert_success(api_for(admin).patch("/realm", {"can_create_public_channel_group": change}))


INVALID = "REQUEST_VARIABLE_INVALID"
BAD = "BAD_REQUEST"


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"message_content_edit_limit_seconds": 0}, INVALID, "Bad value for 'message_content_edit_limit_seconds': 0"),
        ({"message_content_delete_limit_seconds": -5}, INVALID,
         "Bad value for 'message_content_delete_limit_seconds': -5"),
        ({"move_messages_between_streams_limit_seconds": "forever"}, INVALID,
         "Bad value for 'move_messages_between_streams_limit_seconds': forever"),
        ({"message_content_edit_limit_seconds": '"1"'}, INVALID,
         "Bad value for 'message_content_edit_limit_seconds': 1"),
        # Nested deeper than a parser goes (the hostile-input QA pass: a 500).
        ({"message_content_delete_limit_seconds": "[" * 1100}, INVALID, None),
        ({"message_edit_history_visibility_policy": "some"}, INVALID, "Invalid message_edit_history_visibility_policy"),
        ({"allow_message_editing": "maybe"}, INVALID, "allow_message_editing is not valid JSON"),
        ({"name": ""}, "BAD_REQUEST", None),
        ({"can_create_public_channel_group": {"new": "admins"}}, INVALID,
         "can_create_public_channel_group does not have the expected format"),
        ({"can_create_public_channel_group": {"new": 10**9}}, "BAD_REQUEST", "Invalid user group"),
    ],
)  # fmt: skip
def test_bad_values_change_nothing(realm, admin, params, code, msg):
    before = Realm.objects.filter(id=realm.id).values().get()
    assert_error(api_for(admin).patch("/realm", {**params, "description": "changed?"}), 400, code, msg)
    assert Realm.objects.filter(id=realm.id).values().get() == before


def test_settings_refusing_everyone(realm, admin):
    everyone = get_system_group(realm.id, SystemGroups.EVERYONE)
    response = api_for(admin).patch("/realm", {"can_delete_any_message_group": {"new": everyone.id}})
    msg = "'can_delete_any_message_group' setting cannot be set to 'role:everyone' group."
    assert_error(response, 400, "BAD_REQUEST", msg)


def test_another_organizations_group_is_invalid(realm, admin, other_realm):
    foreign = get_system_group(other_realm.id, SystemGroups.MEMBERS)
    response = api_for(admin).patch("/realm", {"can_resolve_topics_group": {"new": foreign.id}})
    assert_error(response, 400, "BAD_REQUEST", "Invalid user group")


def test_only_administrators(member, moderator, guest):
    for user in (member, moderator, guest):
        assert_error(api_for(user).patch("/realm", {"name": "Mine"}), 400, "UNAUTHORIZED_PRINCIPAL", None)


OWNERS_ONLY = (
    "create_multiuse_invite_group",
    "can_invite_users_group",
    "can_create_groups",
    "can_manage_all_groups",
)


@pytest.mark.parametrize("setting", OWNERS_ONLY)
def test_who_may_invite_and_manage_groups_is_for_owners_to_say(realm, owner, admin, setting):
    """As Zulip's update_realm (administrators could change them; the users QA pass)."""
    moderators = get_system_group(realm.id, SystemGroups.MODERATORS).id
    change = {setting: f'{{"new": {moderators}}}'}
    assert_error(api_for(admin).patch("/realm", change), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
    assert getattr(fresh(realm), f"{setting}_id") != moderators
    assert_success(api_for(owner).patch("/realm", change))
    assert getattr(fresh(realm), f"{setting}_id") == moderators


@pytest.mark.parametrize("group", [SystemGroups.EVERYONE, SystemGroups.NOBODY])
def test_every_group_may_not_be_left_without_a_manager_nor_given_to_everyone(realm, owner, group):
    """can_manage_all_groups is never role:nobody nor role:everyone (Zulip's GroupPermissionSetting)."""
    value = get_system_group(realm.id, group).id
    response = api_for(owner).patch("/realm", {"can_manage_all_groups": f'{{"new": {value}}}'})
    assert_error(response, 400, "BAD_REQUEST", f"'can_manage_all_groups' setting cannot be set to '{group}' group.")
    assert fresh(realm).can_manage_all_groups.name == SystemGroups.OWNERS


def test_a_setting_changed_meanwhile_is_changed_from_its_new_value(realm, owner, member):
    """Two changes of a group setting at once (the fuzzing QA pass: the second read the anonymous
    group the first deleted, and answered 500): the second starts from what the first left."""
    anonymous = GroupSettingChange(new=AnonymousGroupValue(direct_members=(member.id,), direct_subgroups=()), old=None)
    check_update_realm(fresh(realm), {}, {"can_invite_users_group": anonymous}, acting_user=owner)
    stale = fresh(realm)  # the anonymous group's id, read before the next change deletes it
    admins = GroupSettingChange(get_system_group(realm.id, SystemGroups.ADMINISTRATORS).id, None)
    check_update_realm(fresh(realm), {}, {"can_invite_users_group": admins}, acting_user=owner)
    answer = check_update_realm(stale, {}, {"can_invite_users_group": anonymous}, acting_user=owner)
    assert answer == {"can_invite_users_group": {"direct_members": [member.id], "direct_subgroups": []}}
