"""Who may create channels, how many at once and how often: the organization's
can_create_public_channel_group / can_create_private_channel_group, the per-request cap and the
per-user rate limit (RATE_LIMIT_CHANNEL_CREATION)."""

import importlib

import pytest
from django.apps import apps as django_apps

from apps.core.errors import JsonableError
from apps.groups.actions.groups import check_add_user_group, check_deactivate_user_group
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import SystemGroups, UserGroup
from apps.groups.selectors import system_groups
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import Membership, can_create_channels
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.models import Role, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import realm_admin_form
from tests.subscriptions.test_api import db_state, refused, subscribe

PUBLIC, PRIVATE = "can_create_public_channel_group", "can_create_private_channel_group"


def set_policy(realm, setting: str, group_name: str) -> None:
    group_id = system_groups(realm.id)[group_name].id
    do_change_realm_permission_group_setting(realm, setting, group_id, acting_user=None)


def created(*names: str) -> bool:
    return set(Stream.objects.filter(name__in=names).values_list("name", flat=True)) == set(names)


# --- the organization's policy --------------------------------------------------------------------


def test_members_create_public_and_private_channels_by_default(member, realm):
    groups = system_groups(realm.id)
    realm.refresh_from_db()
    assert realm.can_create_public_channel_group_id == groups[SystemGroups.MEMBERS].id
    assert realm.can_create_private_channel_group_id == groups[SystemGroups.MEMBERS].id
    assert_success(subscribe(member, "open"))
    assert_success(subscribe(member, "closed", invite_only=True))
    assert created("open", "closed")


@pytest.mark.parametrize(("setting", "invite_only"), [(PUBLIC, False), (PRIVATE, True)])
def test_policy_of_administrators_refuses_members(realm, member, admin, setting, invite_only):
    set_policy(realm, setting, SystemGroups.ADMINISTRATORS)
    before = db_state()
    refused(subscribe(member, "new", invite_only=invite_only), "Insufficient permission", before)
    assert_success(subscribe(admin, "new", invite_only=invite_only))
    assert Stream.objects.get(name="new").invite_only == invite_only


def test_public_and_private_policies_are_separate(realm, member):
    set_policy(realm, PRIVATE, SystemGroups.NOBODY)
    assert_success(subscribe(member, "open"))
    before = db_state()
    refused(subscribe(member, "closed", invite_only=True), "Insufficient permission", before)


def test_policy_does_not_stop_joining_existing_channels(realm, member, admin, make_stream):
    stream = make_stream("design", admin)
    set_policy(realm, PUBLIC, SystemGroups.NOBODY)
    assert_success(subscribe(member, "design"))
    assert stream.subscriptions.filter(user=member, active=True).exists()
    before = db_state()
    # One new name among existing ones refuses the whole request.
    refused(subscribe(member, "design", "brand-new"), "Insufficient permission", before)


def test_policy_through_a_user_defined_group(realm, admin, member, moderator):
    team = check_add_user_group(realm, "channel makers", [member.id], acting_user=admin)
    do_change_realm_permission_group_setting(realm, PUBLIC, team.id, acting_user=admin)
    assert_success(subscribe(member, "made-by-member"))
    refused(subscribe(moderator, "made-by-moderator"), "Insufficient permission", db_state())


def test_guests_never_create_channels(realm, admin, guest):
    # Even when the setting's group lists the guest (the setting cannot be role:everyone).
    team = check_add_user_group(realm, "with a guest", [guest.id], acting_user=admin)
    do_change_realm_permission_group_setting(realm, PUBLIC, team.id, acting_user=admin)
    assert not can_create_channels(Membership(guest), invite_only=False)
    refused(subscribe(guest, "guest-made"), "Not allowed for guest users", db_state())


def test_policy_cannot_be_everyone_or_internet(realm, admin):
    for name in (SystemGroups.EVERYONE, SystemGroups.EVERYONE_ON_INTERNET):
        with pytest.raises(JsonableError) as error:
            set_policy(realm, PUBLIC, name)
        assert error.value.msg == f"'{PUBLIC}' setting cannot be set to '{name}' group."


def test_changing_privacy_needs_the_permission_to_create_that_kind(realm, member, make_stream):
    stream = make_stream("mine", member, creator=member)  # its creator administers it
    set_policy(realm, PRIVATE, SystemGroups.ADMINISTRATORS)
    api = ApiClient(member)
    before = db_state()
    refused(api.patch(f"/streams/{stream.id}", {"is_private": True}), "Insufficient permission", before)
    set_policy(realm, PRIVATE, SystemGroups.MEMBERS)
    assert_success(api.patch(f"/streams/{stream.id}", {"is_private": True}))
    set_policy(realm, PUBLIC, SystemGroups.ADMINISTRATORS)
    refused(api.patch(f"/streams/{stream.id}", {"is_private": False}), "Insufficient permission", db_state())


def test_a_group_in_use_by_the_policy_cannot_be_deactivated(realm, admin, member):
    team = check_add_user_group(realm, "channel makers", [member.id], acting_user=admin)
    do_change_realm_permission_group_setting(realm, PRIVATE, team.id, acting_user=admin)
    with pytest.raises(JsonableError) as error:
        check_deactivate_user_group(team.id, acting_user=admin)
    assert error.value.msg == "Cannot deactivate user group in use."
    assert error.value.data["objections"] == [{"type": "realm", "settings": [PRIVATE]}]


def test_other_organizations_groups_are_invalid_values(realm, other_realm):
    foreign = system_groups(other_realm.id)[SystemGroups.MEMBERS]
    with pytest.raises(JsonableError) as error:
        do_change_realm_permission_group_setting(realm, PUBLIC, foreign.id, acting_user=None)
    assert error.value.msg == "Invalid user group"


# --- how many at once, and how often ------------------------------------------------------------


def test_one_request_creates_at_most_the_limit(realm, member, admin, make_stream, settings):
    settings.RATE_LIMIT_CHANNEL_CREATION = (3, 3600)
    make_stream("old-1", admin)
    make_stream("old-2", admin)
    before = db_state()
    body = assert_error(
        subscribe(member, "a", "b", "c", "d"),
        400,
        "REQUEST_VARIABLE_INVALID",
        "Too many new channels in one request: 4 (limit: 3)",
    )
    assert body["var_name"] == "subscriptions"
    assert db_state() == before
    # Channels that exist already do not count; the same name twice is one channel.
    assert_success(subscribe(member, "old-1", "old-2", "a", "b", "c", "C "))
    assert created("a", "b", "c")


def test_the_cap_applies_even_without_rate_limits(realm, owner, settings):
    settings.RATE_LIMITING_ENABLED = False
    settings.RATE_LIMIT_CHANNEL_CREATION = (2, 3600)
    before = db_state()
    assert_error(subscribe(owner, "a", "b", "c"), 400, "REQUEST_VARIABLE_INVALID")
    assert db_state() == before


def test_creation_is_rate_limited_per_user(rate_limit_backend, realm, member, admin, settings):
    settings.RATE_LIMIT_CHANNEL_CREATION = (3, 3600)
    assert_success(subscribe(member, "a", "b"))
    before = db_state()
    body = assert_error(subscribe(member, "c", "d"), 429, "RATE_LIMIT_HIT", "API usage exceeded rate limit")
    assert 3500 < body["retry-after"] <= 3600
    assert db_state() == before  # refused whole: no channel of the two
    assert_success(subscribe(member, "c"))
    assert_error(subscribe(member, "d"), 429, "RATE_LIMIT_HIT")
    # Joining existing channels is not creating; other users have their own allowance.
    assert_success(subscribe(member, "a", "b", "c"))
    assert_success(subscribe(admin, "d", "e", "f"))
    assert created("a", "b", "c", "d", "e", "f")


def test_refused_requests_use_no_allowance(realm, member, settings):
    settings.RATE_LIMIT_CHANNEL_CREATION = (2, 3600)
    refused(
        subscribe(member, "a", "b", "c"),
        "Too many new channels in one request: 3 (limit: 2)",
        db_state(),
        code="REQUEST_VARIABLE_INVALID",
    )
    set_policy(realm, PUBLIC, SystemGroups.ADMINISTRATORS)
    refused(subscribe(member, "a", "b"), "Insufficient permission", db_state())
    set_policy(realm, PUBLIC, SystemGroups.MEMBERS)
    assert_success(subscribe(member, "a", "b"))


def test_creation_limit_fails_closed_when_redis_is_down(realm, member, redis_down):
    before = db_state()
    assert_error(subscribe(member, "a"), 503, "SERVICE_UNAVAILABLE")
    assert db_state() == before


# --- what clients are told ------------------------------------------------------------------------


def test_register_state_has_the_policy(realm, member, event_backend):
    groups = system_groups(realm.id)
    body = assert_success(ApiClient(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert body["realm_can_create_public_channel_group"] == groups[SystemGroups.MEMBERS].id
    assert body["realm_can_create_private_channel_group"] == groups[SystemGroups.MEMBERS].id
    set_policy(realm, PRIVATE, SystemGroups.ADMINISTRATORS)
    body = assert_success(ApiClient(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert body["realm_can_create_private_channel_group"] == groups[SystemGroups.ADMINISTRATORS].id


@pytest.mark.django_db(transaction=True)
def test_a_policy_change_is_sent_to_the_organization(queue_of, realm, member, guest):
    events = {user.id: queue_of(user, event_types=["realm"]) for user in (member, guest)}
    admins = system_groups(realm.id)[SystemGroups.ADMINISTRATORS].id
    do_change_realm_permission_group_setting(realm, PUBLIC, admins, acting_user=None)
    do_change_realm_permission_group_setting(realm, PUBLIC, admins, acting_user=None)  # no change: no event
    for received in events.values():
        assert received() == [{"type": "realm", "op": "update_dict", "property": "default", "data": {PUBLIC: admins}}]


def test_admin_edits_the_policy(staff, realm, member):
    groups = system_groups(realm.id)
    form = realm_admin_form(
        realm, **{PUBLIC: groups[SystemGroups.ADMINISTRATORS].id, PRIVATE: groups[SystemGroups.MEMBERS].id}
    )
    response = staff.post(f"/admin/realms/realm/{realm.id}/change/", form)
    assert response.status_code == 302
    assert Realm.objects.get(id=realm.id).can_create_public_channel_group_id == groups[SystemGroups.ADMINISTRATORS].id
    refused(subscribe(member, "new"), "Insufficient permission", db_state())

    response = staff.post(f"/admin/realms/realm/{realm.id}/change/", {**form, PUBLIC: groups[SystemGroups.EVERYONE].id})
    assert (
        f"&#x27;{PUBLIC}&#x27; setting cannot be set to &#x27;role:everyone&#x27; group." in response.content.decode()
    )
    assert Realm.objects.get(id=realm.id).can_create_public_channel_group_id == groups[SystemGroups.ADMINISTRATORS].id


def test_the_migration_sets_existing_organizations_to_members(db):
    groups_migration = importlib.import_module("apps.groups.migrations.0002_system_groups_of_existing_realms")
    migration = importlib.import_module("apps.realms.migrations.0002_channel_creation_policy")
    old = Realm.objects.create(string_id="old", name="Old")
    User.objects.create(realm=old, delivery_email="m@old.example", full_name="Old", role=Role.MEMBER)
    groups_migration.create_system_groups(django_apps, None)
    assert Realm.objects.get(id=old.id).can_create_public_channel_group_id is None
    migration.set_defaults(django_apps, None)
    members = UserGroup.objects.get(realm=old, name=SystemGroups.MEMBERS)
    old.refresh_from_db()
    assert (old.can_create_public_channel_group_id, old.can_create_private_channel_group_id) == (members.id,) * 2


def test_new_organizations_get_the_defaults(db):
    realm, _ = do_create_realm_with_owner(
        "new", "New", owner_email="o@new.example", owner_full_name="Olga", acting_user=None
    )
    members = system_groups(realm.id)[SystemGroups.MEMBERS].id
    realm = Realm.objects.get(id=realm.id)
    assert (realm.can_create_public_channel_group_id, realm.can_create_private_channel_group_id) == (members,) * 2
