"""Who may subscribe others to a channel, as Zulip: the organization's can_add_subscribers_group
(members by default) for every channel they may see, administrators always, and per channel its
administrators and its own can_add_subscribers_group; guests never. A new channel's creator may add
anyone to it. Invitations naming channels follow the same rule, default channels always allowed."""

import importlib
import json

import pytest
from django.apps import apps as django_apps

from apps.groups.actions.groups import check_add_user_group
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import SystemGroups, UserGroup
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.users.models import Role, User
from tests.api import ApiClient, assert_error, assert_success
from tests.subscriptions.test_api import db_state, is_active_subscriber, refused, subscribe

INSUFFICIENT = "Insufficient permission"
INVITE_REFUSED = "You do not have permission to subscribe other users to channels."


@pytest.fixture
def admins_only(realm, sys_groups):
    group = sys_groups[SystemGroups.ADMINISTRATORS]
    do_change_realm_permission_group_setting(realm, "can_add_subscribers_group", group.id, acting_user=None)


def test_members_subscribe_others_by_default(realm, member, moderator, make_stream, sys_groups):
    assert Realm.objects.get(id=realm.id).can_add_subscribers_group_id == sys_groups[SystemGroups.MEMBERS].id
    stream = make_stream("design", member)
    assert_success(subscribe(member, "design", principals=[moderator.id]))
    assert is_active_subscriber(moderator, stream)


@pytest.mark.usefixtures("admins_only")
def test_the_organizations_setting_refuses_others_not_yourself(member, moderator, admin, make_stream):
    stream = make_stream("design", admin)
    refused(subscribe(member, "design", principals=[moderator.id]), INSUFFICIENT, db_state())
    # With one other among the principals, nothing is done.
    before = db_state()
    refused(subscribe(member, "design", principals=[member.id, moderator.id]), INSUFFICIENT, before)
    assert_success(subscribe(member, "design", principals=[member.id]))
    assert_success(subscribe(admin, "design", principals=[moderator.id]))
    assert is_active_subscriber(member, stream)
    assert is_active_subscriber(moderator, stream)


@pytest.mark.usefixtures("admins_only")
def test_a_channels_own_settings_let_members_add_to_it(realm, member, moderator, guest, admin, make_stream, sys_groups):
    team = check_add_user_group(realm, "door keepers", [member.id], acting_user=admin)
    stream = make_stream("design", admin)
    other = make_stream("other", admin)
    params = {"can_add_subscribers_group": json.dumps({"new": team.id})}
    assert_success(ApiClient(admin).patch(f"/streams/{stream.id}", params))
    assert_success(subscribe(member, "design", principals=[guest.id]))
    refused(subscribe(member, "design", "other", principals=[moderator.id]), INSUFFICIENT, db_state())
    # Administering a channel (its creator does by default) is enough too.
    mine = make_stream("mine", member, creator=member)
    assert_success(subscribe(member, "mine", principals=[moderator.id]))
    assert is_active_subscriber(guest, stream)
    assert is_active_subscriber(moderator, mine)
    assert not is_active_subscriber(moderator, other)


@pytest.mark.usefixtures("admins_only")
def test_a_new_channels_creator_adds_anyone(member, moderator):
    body = assert_success(subscribe(member, "brand-new", principals=[moderator.id]))
    assert body["subscribed"] == {str(moderator.id): ["brand-new"]}
    stream_id = assert_success(
        ApiClient(member).post("/channels/create", {"name": "newer", "subscribers": json.dumps([moderator.id])})
    )["id"]
    assert is_active_subscriber(moderator, Stream.objects.get(id=stream_id))


def test_register_patch_realm_and_the_event(realm, admin, member, sys_groups, capture_events):
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_add_subscribers_group"] == sys_groups[SystemGroups.MEMBERS].id
    everyone = json.dumps({"new": sys_groups[SystemGroups.EVERYONE].id})  # guests may never
    assert_error(ApiClient(admin).patch("/realm", {"can_add_subscribers_group": everyone}), 400, "BAD_REQUEST")
    refused_for_member = ApiClient(member).patch("/realm", {"can_add_subscribers_group": everyone})
    assert refused_for_member.status_code == 400
    moderators = sys_groups[SystemGroups.MODERATORS].id
    with capture_events(member) as received:
        assert_success(ApiClient(admin).patch("/realm", {"can_add_subscribers_group": json.dumps({"new": moderators})}))
    [event] = [e for e in received[member.id] if e["type"] == "realm"]
    assert event["data"] == {"can_add_subscribers_group": moderators}
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_add_subscribers_group"] == moderators


@pytest.mark.usefixtures("admins_only")
def test_invitations_naming_channels_follow_the_rule(member, admin, make_stream):
    design = make_stream("design", admin)
    welcome = make_stream("welcome", admin)
    assert_success(ApiClient(admin).post("/default_streams", {"stream_id": welcome.id}))

    def invite(*streams):
        stream_ids = json.dumps([s.id for s in streams])
        return ApiClient(member).post("/invites", {"invitee_emails": "new@example.com", "stream_ids": stream_ids})

    before = db_state()
    assert_error(invite(design), 400, "BAD_REQUEST", INVITE_REFUSED)
    assert_error(invite(welcome, design), 400, "BAD_REQUEST", INVITE_REFUSED)
    assert db_state() == before
    assert_success(invite(welcome))  # a default channel: everyone who joins is added to it anyway
    assert_success(
        ApiClient(admin).post("/invites", {"invitee_emails": "b@example.com", "stream_ids": f"[{design.id}]"})
    )


def test_guests_never_subscribe_others(realm, guest, member, sys_groups, make_stream):
    make_stream("design", guest, member)
    before = db_state()
    response = subscribe(guest, "design", principals=[member.id])
    assert response.json()["result"] == "error"
    assert db_state() == before


def test_the_migration_sets_existing_organizations_to_members(db):
    groups_migration = importlib.import_module("apps.groups.migrations.0002_system_groups_of_existing_realms")
    migration = importlib.import_module("apps.realms.migrations.0019_can_add_subscribers_group")
    old = Realm.objects.create(string_id="old", name="Old")
    User.objects.create(realm=old, delivery_email="m@old.example", full_name="Old", role=Role.MEMBER)
    groups_migration.create_system_groups(django_apps, None)
    assert Realm.objects.get(id=old.id).can_add_subscribers_group_id is None
    migration.set_default(django_apps, None)
    members = UserGroup.objects.get(realm=old, name=SystemGroups.MEMBERS)
    assert Realm.objects.get(id=old.id).can_add_subscribers_group_id == members.id
