"""The organization's waiting period (waiting_period_threshold, in days): members become full members
(role:fullmembers) only once it has passed: at a change of the setting, when they join or change
role, and as time passes (the task worker's hourly promote_new_full_members), as Zulip does."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.groups.models import SystemGroups, UserGroupMembership
from apps.groups.receivers import promote_new_full_members
from apps.groups.selectors import get_system_group
from apps.realms.models import Realm
from apps.users.actions.create_user import do_create_user
from apps.users.models import Role, User
from tests.api import api_for, assert_error, assert_success
from tests.factories import UserFactory


def full_member_ids(realm) -> set[int]:
    group = get_system_group(realm.id, SystemGroups.FULL_MEMBERS)
    return set(UserGroupMembership.objects.filter(user_group=group).values_list("user_id", flat=True))


def joined_days_ago(user, days) -> None:
    User.objects.filter(id=user.id).update(date_joined=timezone.now() - timedelta(days=days))


def test_the_waiting_period_takes_new_members_out_and_back(realm, owner, admin, member, capture_events):
    veteran = UserFactory(realm=realm, role=Role.MEMBER)
    joined_days_ago(veteran, 30)
    assert full_member_ids(realm) == {member.id, veteran.id}
    full_members = get_system_group(realm.id, SystemGroups.FULL_MEMBERS)
    # Owners only, as Zulip's update_realm (administrators could; the users QA pass).
    owners_only = "Must be an organization owner"
    assert_error(
        api_for(admin).patch("/realm", {"waiting_period_threshold": 10}), 400, "UNAUTHORIZED_PRINCIPAL", owners_only
    )
    with capture_events(admin) as received:
        answer = assert_success(api_for(owner).patch("/realm", {"waiting_period_threshold": 10}))
    assert answer["waiting_period_threshold"] == 10
    assert full_member_ids(realm) == {veteran.id}
    assert received[admin.id] == [
        {"type": "realm", "op": "update", "property": "waiting_period_threshold", "value": 10},
        {"type": "user_group", "op": "remove_members", "group_id": full_members.id, "user_ids": [member.id]},
    ]
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_waiting_period_threshold"] == 10
    assert_success(api_for(owner).patch("/realm", {"waiting_period_threshold": 0}))
    assert full_member_ids(realm) == {member.id, veteran.id}


def test_members_join_and_are_promoted_when_their_time_comes(realm, admin, moderator):
    realm.waiting_period_threshold = 3
    realm.save(update_fields=["waiting_period_threshold"])
    newcomer = do_create_user(realm, "newcomer@example.com", "Nina Newcomer", acting_user=None)
    assert newcomer.id not in full_member_ids(realm)
    # A moderator made a member, recently joined: not a full member either.
    assert_success(api_for(admin).patch(f"/users/{moderator.id}", {"role": Role.MEMBER}))
    assert moderator.id not in full_member_ids(realm)
    promote_new_full_members()
    assert full_member_ids(realm).isdisjoint({newcomer.id, moderator.id})
    joined_days_ago(newcomer, 3)
    promote_new_full_members()
    assert newcomer.id in full_member_ids(realm)
    # Leaving the member role leaves the group; coming back after the wait rejoins it.
    assert_success(api_for(admin).patch(f"/users/{newcomer.id}", {"role": Role.GUEST}))
    assert newcomer.id not in full_member_ids(realm)
    assert_success(api_for(admin).patch(f"/users/{newcomer.id}", {"role": Role.MEMBER}))
    assert newcomer.id in full_member_ids(realm)


def test_permissions_given_to_full_members_wait(realm, owner, admin, member):
    full_members = get_system_group(realm.id, SystemGroups.FULL_MEMBERS)
    assert_success(api_for(admin).patch("/realm", {"can_create_public_channel_group": {"new": full_members.id}}))
    assert_success(api_for(owner).patch("/realm", {"waiting_period_threshold": 7}))
    create = {"subscriptions": '[{"name": "new-channel"}]'}
    assert_error(api_for(member).post("/users/me/subscriptions", create), 400, "BAD_REQUEST", "Insufficient permission")
    joined_days_ago(member, 8)
    promote_new_full_members()
    assert_success(api_for(member).post("/users/me/subscriptions", create))


@pytest.mark.parametrize("value", ["-1", "soon", "1.5", str(10**7)])
def test_bad_waiting_periods_change_nothing(realm, admin, value):
    assert_error(api_for(admin).patch("/realm", {"waiting_period_threshold": value}), 400, "REQUEST_VARIABLE_INVALID")
    assert Realm.objects.get(id=realm.id).waiting_period_threshold == 0
