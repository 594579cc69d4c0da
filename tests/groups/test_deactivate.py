"""POST /user_groups/{id}/deactivate (and the official client's DELETE): refused while the group is in
use; announced as each queue's capability asks."""

import pytest
from django.db import connection

from apps.groups.models import UserGroup
from apps.groups.serializers import AnonymousGroupValue
from tests.api import ApiClient, assert_error, assert_success
from tests.concurrency import at_once


@pytest.fixture
def team(member, make_group):
    return make_group(member, "team", [member])


@pytest.mark.parametrize("method", ["post", "delete"])
def test_deactivate(member, team, method):
    api = ApiClient(member)
    response = (
        api.post(f"/user_groups/{team.id}/deactivate") if method == "post" else api.delete(f"/user_groups/{team.id}")
    )
    assert_success(response)
    team.refresh_from_db()
    assert team.deactivated
    assert UserGroup.objects.filter(id=team.id).exists()  # deactivated, never deleted


KEEPS_DEACTIVATED = {"notification_settings_null": True, "include_deactivated_groups": True}


def test_deactivation_reaches_each_queue_in_its_form(owner, member, team, capture_events):
    def plain_and_keeping():
        return capture_events(owner), capture_events(owner, client_capabilities=KEEPS_DEACTIVATED)

    plain, keeping = plain_and_keeping()
    with plain as plain_got, keeping as keeping_got:
        assert_success(ApiClient(member).post(f"/user_groups/{team.id}/deactivate"))
    assert plain_got[owner.id] == [{"type": "user_group", "op": "remove", "group_id": team.id}]
    assert keeping_got[owner.id] == [
        {"type": "user_group", "op": "update", "group_id": team.id, "data": {"deactivated": True}}
    ]

    plain, keeping = plain_and_keeping()
    with plain as plain_got, keeping as keeping_got:
        assert_success(ApiClient(member).patch(f"/user_groups/{team.id}", {"deactivated": "false"}))
    [added] = plain_got[owner.id]
    assert (added["op"], added["group"]["id"], added["group"]["members"]) == ("add", team.id, [member.id])
    assert "for_reactivation" not in added
    assert keeping_got[owner.id] == [
        {"type": "user_group", "op": "update", "group_id": team.id, "data": {"deactivated": False}}
    ]


def test_register_state_leaves_deactivated_groups_to_clients_that_keep_them(owner, member, team):
    assert_success(ApiClient(member).post(f"/user_groups/{team.id}/deactivate"))
    api = ApiClient(owner)
    plain = assert_success(api.post("/register", {"fetch_event_types": '["realm_user_groups"]'}))
    keeping = assert_success(
        api.post("/register", {"fetch_event_types": '["realm_user_groups"]', "client_capabilities": KEEPS_DEACTIVATED})
    )
    assert team.id not in [g["id"] for g in plain["realm_user_groups"]]
    assert [g["deactivated"] for g in keeping["realm_user_groups"] if g["id"] == team.id] == [True]


def test_a_group_in_use_cannot_be_deactivated(owner, member, team, make_group):
    user = make_group(owner, "user of team", subgroup_ids=[team.id])
    setting_user = make_group(owner, "setting user", settings={"can_mention_group": team.id})
    anonymous_user = make_group(
        owner, "anonymous user", settings={"can_join_group": AnonymousGroupValue((owner.id,), (team.id,))}
    )
    response = ApiClient(member).post(f"/user_groups/{team.id}/deactivate")
    body = assert_error(response, 400, "CANNOT_DEACTIVATE_GROUP_IN_USE", "Cannot deactivate user group in use.")
    assert body["objections"] == [
        {"type": "subgroup", "supergroup_ids": [user.id]},
        {"type": "user_group", "group_id": setting_user.id, "settings": ["can_mention_group"]},
        {"type": "user_group", "group_id": anonymous_user.id, "settings": ["can_join_group"]},
    ]
    team.refresh_from_db()
    assert not team.deactivated
    # Users that are deactivated themselves do not count.
    for group in (user, setting_user, anonymous_user):
        assert_success(ApiClient(owner).post(f"/user_groups/{group.id}/deactivate"))
    assert_success(ApiClient(member).post(f"/user_groups/{team.id}/deactivate"))


def test_who_may_deactivate(owner, admin, moderator, team, sys_groups, foreign_user, make_group):
    assert_error(
        ApiClient(moderator).post(f"/user_groups/{team.id}/deactivate"), 400, "BAD_REQUEST", "Insufficient permission"
    )
    assert_error(
        ApiClient(owner).post(f"/user_groups/{sys_groups['role:nobody'].id}/deactivate"),
        400,
        "BAD_REQUEST",
        "Insufficient permission",
    )
    theirs = make_group(foreign_user, "theirs")
    assert_error(
        ApiClient(owner).post(f"/user_groups/{theirs.id}/deactivate"), 400, "BAD_REQUEST", "Invalid user group"
    )
    assert_error(  # can_manage_all_groups: owners
        ApiClient(admin).post(f"/user_groups/{team.id}/deactivate"), 400, "BAD_REQUEST", "Insufficient permission"
    )
    assert_success(ApiClient(owner).post(f"/user_groups/{team.id}/deactivate"))
    response = ApiClient(owner).post(f"/user_groups/{team.id}/deactivate")
    assert_error(response, 400, "BAD_REQUEST", "User group is deactivated.")


def test_deactivated_groups_cannot_be_used(owner, team):
    assert_success(ApiClient(owner).post(f"/user_groups/{team.id}/deactivate"))
    response = ApiClient(owner).post(
        "/user_groups/create", {"name": "x", "description": "", "members": "[]", "can_mention_group": str(team.id)}
    )
    assert_error(response, 400, "BAD_REQUEST", "User group is deactivated.")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_deactivated_while_edited(owner, make_group):
    # The QA pass: a deactivation (the organization's row locked, then the group's) and edits (the
    # group's row, then their audit entries, which refer to the organization) deadlocked: 503s.
    def race(path: str) -> list:
        edits = (lambda n=n: ApiClient(owner).patch(path, {"description": f"edit {n}"}) for n in range(4))
        return at_once(lambda: ApiClient(owner).post(f"{path}/deactivate"), *edits)

    for n in range(3):
        group = make_group(owner, f"group {n}", [owner])
        answers = race(f"/user_groups/{group.id}")
        assert [answer.status_code for answer in answers] == [200] * 5
        assert UserGroup.objects.get(id=group.id).deactivated
