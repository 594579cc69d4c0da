"""System groups: created with each organization, nested by role, kept in step with roles and activity."""

import importlib
import json
from itertools import pairwise

import pytest
from django.apps import apps as django_apps

from apps.core.errors import JsonableError
from apps.groups.actions.system_groups import do_update_full_members
from apps.groups.models import GroupGroupMembership, SystemGroups, UserGroup, UserGroupMembership
from apps.groups.selectors import group_member_ids, is_user_in_group, system_groups
from apps.groups.serializers import AnonymousGroupValue
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.users.actions.activation import do_deactivate_user, do_reactivate_user
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.actions.create_user import do_create_user
from apps.users.actions.roles import do_change_user_role
from apps.users.models import Role, User
from tests.api import ApiClient, assert_success

ROLE_GROUPS = {
    Role.OWNER: {"role:owners"},
    Role.ADMINISTRATOR: {"role:administrators"},
    Role.MODERATOR: {"role:moderators"},
    Role.MEMBER: {"role:members", "role:fullmembers"},
    Role.GUEST: {"role:everyone"},
}


def direct_group_names(user: User) -> set[str]:
    return set(UserGroup.objects.filter(memberships__user=user).values_list("name", flat=True))


def test_a_new_organization_has_its_nested_system_groups(db):
    realm, owner = do_create_realm_with_owner(
        "acme", "Acme", owner_email="o@acme.example", owner_full_name="Olga", acting_user=None
    )
    groups = list(UserGroup.objects.filter(realm=realm).order_by("id"))
    assert [g.name for g in groups] == [
        "role:nobody",
        "role:owners",
        "role:administrators",
        "role:moderators",
        "role:fullmembers",
        "role:members",
        "role:everyone",
        "role:internet",
    ]
    assert all(g.is_system_group and not g.deactivated and g.creator_id is None for g in groups)
    nobody = groups[0]
    assert all(getattr(g, f"{name}_id") == nobody.id for g in groups for name in UserGroup.SETTINGS)
    links = set(GroupGroupMembership.objects.filter(supergroup__realm=realm).values_list("supergroup", "subgroup"))
    by_name = {g.name: g.id for g in groups}
    assert links == {(by_name[larger], by_name[smaller]) for smaller, larger in pairwise(SystemGroups.NESTED)}
    assert direct_group_names(owner) == {"role:owners"}


@pytest.mark.parametrize("role", list(ROLE_GROUPS))
def test_new_users_are_direct_members_of_their_roles_groups(realm, owner, role):
    user = do_create_user(realm, f"new{role}@example.com", "New Person", role=role, acting_user=owner)
    assert direct_group_names(user) == ROLE_GROUPS[role]


def test_bots_join_the_groups_of_their_role(realm, member):
    bot = do_create_user(realm, "helper-bot@example.com", "Helper", bot_type=1, bot_owner=member, acting_user=member)
    assert direct_group_names(bot) == {"role:members", "role:fullmembers"}


def test_the_servers_own_bots_join_none(realm, owner, member, capture_events):
    # The zulip-terminal QA pass: the Notification Bot, made for a first notice, joined role:members
    # and role:fullmembers (in POST /register's realm_user_groups, and their add_members events)
    # while POST /register lists it among cross_realm_bots, as Zulip does its own bots.
    with capture_events(member) as received:
        bot = do_create_notification_bot(realm)
    assert direct_group_names(bot) == set()
    assert [event for event in received[member.id] if event["type"] == "user_group"] == []
    realm.waiting_period_threshold = 0
    do_update_full_members(realm, acting_user=None)
    assert direct_group_names(bot) == set()
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": ["realm_user_groups"]}))
    assert all(bot.id not in group["members"] for group in state["realm_user_groups"])


def test_the_migration_takes_the_servers_own_bots_out(realm, member):
    migration = importlib.import_module("apps.groups.migrations.0003_system_bots_leave_system_groups")
    bot = do_create_notification_bot(realm)
    groups = system_groups(realm.id)
    for name in ("role:members", "role:fullmembers"):
        UserGroupMembership.objects.create(user_group=groups[name], user=bot)
    team = UserGroup.objects.create(realm=realm, name="team")
    UserGroupMembership.objects.create(user_group=team, user=bot)
    migration.leave_system_groups(django_apps, None)
    assert direct_group_names(bot) == {"team"}
    assert direct_group_names(member) == {"role:members", "role:fullmembers"}


@pytest.mark.parametrize(
    ("role", "inside", "outside"),
    [
        (Role.OWNER, ["role:owners", "role:administrators", "role:members", "role:internet"], ["role:nobody"]),
        (Role.MODERATOR, ["role:moderators", "role:fullmembers", "role:everyone"], ["role:administrators"]),
        (Role.MEMBER, ["role:members", "role:fullmembers", "role:everyone"], ["role:moderators"]),
        (Role.GUEST, ["role:everyone", "role:internet"], ["role:members", "role:fullmembers"]),
    ],
)
def test_membership_through_the_nesting_follows_the_role(realm, owner, role, inside, outside):
    user = do_create_user(realm, "someone@example.com", "Some One", role=role, acting_user=owner)
    groups = system_groups(realm.id)
    assert all(is_user_in_group(groups[name].id, user) for name in inside)
    assert not any(is_user_in_group(groups[name].id, user) for name in outside)


def user_group_events(events: list[dict]) -> list[tuple]:
    return [(e["op"], e["group_id"], e["user_ids"]) for e in events if e["type"] == "user_group"]


def test_role_changes_move_the_user_and_say_so(realm, owner, member, admin, capture_events):
    groups = {name: g.id for name, g in system_groups(realm.id).items()}
    with capture_events(owner, admin) as received:
        do_change_user_role(member, Role.MODERATOR, acting_user=owner)
    assert direct_group_names(member) == {"role:moderators"}
    expected = [
        ("remove_members", groups["role:members"], [member.id]),
        ("add_members", groups["role:moderators"], [member.id]),
        ("remove_members", groups["role:fullmembers"], [member.id]),
    ]
    assert user_group_events(received[owner.id]) == expected
    assert user_group_events(received[admin.id]) == expected

    with capture_events(owner) as received:
        do_change_user_role(member, Role.MEMBER, acting_user=owner)
    assert direct_group_names(member) == {"role:members", "role:fullmembers"}
    assert user_group_events(received[owner.id]) == [
        ("remove_members", groups["role:moderators"], [member.id]),
        ("add_members", groups["role:members"], [member.id]),
        ("add_members", groups["role:fullmembers"], [member.id]),
    ]


def test_role_change_over_the_api_updates_the_groups(owner, member, sys_groups):
    assert_success(ApiClient(owner).patch(f"/users/{member.id}", {"role": 200}))
    assert direct_group_names(member) == {"role:administrators"}
    assert member.id in group_member_ids(sys_groups["role:owners"].id) + group_member_ids(
        sys_groups["role:administrators"].id
    )
    assert member.id not in group_member_ids(sys_groups["role:fullmembers"].id, direct_member_only=True)


def test_a_refused_role_change_changes_no_group(owner, sys_groups):
    with pytest.raises(JsonableError, match="only organization owner"):
        do_change_user_role(owner, Role.MEMBER, acting_user=owner)
    assert direct_group_names(owner) == {"role:owners"}


def test_deactivated_users_are_left_out_of_groups_and_come_back(owner, member, make_group, sys_groups, capture_events):
    team = make_group(owner, "team", [member])
    members_group = sys_groups["role:members"]
    do_deactivate_user(member, acting_user=owner)
    # Memberships are kept, but no read shows them.
    assert UserGroupMembership.objects.filter(user=member).count() == 3
    assert member.id not in group_member_ids(members_group.id)
    assert group_member_ids(team.id) == []
    assert not is_user_in_group(team.id, member)
    listed = assert_success(ApiClient(owner).get("/user_groups"))["user_groups"]
    assert all(member.id not in g["members"] for g in listed)

    with capture_events(owner) as received:
        do_reactivate_user(member, acting_user=owner)
    assert user_group_events(received[owner.id]) == [
        ("add_members", sys_groups["role:fullmembers"].id, [member.id]),
        ("add_members", sys_groups["role:members"].id, [member.id]),
        ("add_members", team.id, [member.id]),
    ]
    assert group_member_ids(team.id) == [member.id]


def test_deactivation_changes_setting_values_that_listed_the_user(owner, member, admin, make_group, capture_events):
    team = make_group(owner, "team", [], settings={"can_mention_group": AnonymousGroupValue((member.id, admin.id), ())})
    with capture_events(owner) as received:
        do_deactivate_user(member, acting_user=owner)
    updates = [e for e in received[owner.id] if e["type"] == "user_group"]
    assert updates == [
        {
            "type": "user_group",
            "op": "update",
            "group_id": team.id,
            "data": {"can_mention_group": {"direct_members": [admin.id], "direct_subgroups": []}},
        }
    ]
    with capture_events(owner) as received:
        do_reactivate_user(member, acting_user=owner)
    updates = [e for e in received[owner.id] if e["type"] == "user_group" and e["op"] == "update"]
    assert [e["data"] for e in updates] == [
        {"can_mention_group": {"direct_members": sorted([admin.id, member.id]), "direct_subgroups": []}}
    ]


def test_the_organizations_and_channels_settings_that_listed_the_user_too(
    owner, member, admin, make_stream, capture_events
):
    """As Zulip's send_update_events_for_anonymous_group_settings, and the channels' likewise: a
    channel's creator administers it through an anonymous group listing them."""
    members = system_groups(owner.realm_id)["role:members"]
    value = json.dumps({"new": {"direct_members": [member.id], "direct_subgroups": [members.id]}})
    assert_success(ApiClient(owner).patch("/realm", {"can_create_public_channel_group": value}))
    assert_success(ApiClient(member).post("/channels/create", {"name": "made", "subscribers": "[]"}))
    made = Stream.objects.get(name="made")
    kinds = ("realm", "stream")
    for act, listed in ((do_deactivate_user, []), (do_reactivate_user, [member.id])):
        with capture_events(admin, event_types=kinds) as received:
            act(member, acting_user=owner)
        updates = {
            (e["type"], e.get("property")): e for e in received[admin.id] if e["op"] in ("update", "update_dict")
        }
        realm_value = updates[("realm", "default")]["data"]["can_create_public_channel_group"]
        assert realm_value == {"direct_members": listed, "direct_subgroups": [members.id]}
        channel_value = updates[("stream", "can_administer_channel_group")]
        assert (channel_value["stream_id"], channel_value["value"]) == (
            made.id,
            {"direct_members": listed, "direct_subgroups": []},
        )
    state = assert_success(
        ApiClient(admin).post("/register", {"fetch_event_types": json.dumps([*kinds, "subscription"])})
    )
    assert state["realm_can_create_public_channel_group"] == realm_value


def test_the_migration_gives_existing_organizations_their_system_groups(db):
    migration = importlib.import_module("apps.groups.migrations.0002_system_groups_of_existing_realms")
    old = Realm.objects.create(string_id="old", name="Old")
    people = {
        role: User.objects.create(realm=old, delivery_email=f"{role}@old.example", full_name="Old", role=role)
        for role in ROLE_GROUPS
    }
    migration.create_system_groups(django_apps, None)
    migration.create_system_groups(django_apps, None)  # organizations that have them are left alone
    assert UserGroup.objects.filter(realm=old).count() == 8
    for role, user in people.items():
        assert direct_group_names(user) == ROLE_GROUPS[role]
    groups = system_groups(old.id)
    assert is_user_in_group(groups["role:everyone"].id, people[Role.OWNER])
    assert not is_user_in_group(groups["role:members"].id, people[Role.GUEST])
