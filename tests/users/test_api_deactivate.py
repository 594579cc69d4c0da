"""DELETE /users/{id} (deactivate), DELETE /users/me (leave) and POST /users/{id}/reactivate."""

import pytest

from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.models import Role
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory, UserFactory


def is_active(user) -> bool:
    user.refresh_from_db()
    return user.is_active


def test_admin_deactivates_a_member_and_their_bots(admin, member, bot):
    assert_success(ApiClient(admin).delete(f"/users/{member.id}"))
    assert not is_active(member)
    assert not is_active(bot)
    assert_error(ApiClient(member).get("/users/me"), 401, "USER_DEACTIVATED", "Account is deactivated")
    assert_error(ApiClient(bot).get("/users/me"), 401, "USER_DEACTIVATED", "Account is deactivated")


@pytest.mark.parametrize("actor", ["moderator", "member", "guest", "bot"])
def test_non_administrators_cannot_deactivate(request, actor, admin):
    response = ApiClient(request.getfixturevalue(actor)).delete(f"/users/{admin.id}")
    assert_error(response, 400, "BAD_REQUEST", "Insufficient permission")
    assert is_active(admin)


def test_administrators_cannot_deactivate_owners(admin, owner, realm):
    UserFactory(realm=realm, role=Role.OWNER)
    assert_error(
        ApiClient(admin).delete(f"/users/{owner.id}"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"
    )
    assert is_active(owner)


def test_the_only_owner_cannot_be_deactivated(owner):
    response = ApiClient(owner).delete(f"/users/{owner.id}")
    assert_error(response, 400, "BAD_REQUEST", "Cannot deactivate the only organization owner")
    assert is_active(owner)


def test_an_owner_deactivates_another_owner(owner, realm):
    other = UserFactory(realm=realm, role=Role.OWNER)
    assert_success(ApiClient(owner).delete(f"/users/{other.id}"))
    assert not is_active(other)


def test_bots_are_not_deactivated_through_this_endpoint(admin, bot):
    assert_error(ApiClient(admin).delete(f"/users/{bot.id}"), 400, "BAD_REQUEST", "No such user")
    assert is_active(bot)


def test_deactivating_twice(admin, member):
    assert_success(ApiClient(admin).delete(f"/users/{member.id}"))
    assert_error(ApiClient(admin).delete(f"/users/{member.id}"), 400, "BAD_REQUEST", "User is deactivated")


def test_users_of_other_organizations_do_not_exist(admin, foreign_user):
    assert_error(ApiClient(admin).delete(f"/users/{foreign_user.id}"), 400, "BAD_REQUEST", "No such user")
    assert_error(ApiClient(admin).post(f"/users/{foreign_user.id}/reactivate"), 400, "BAD_REQUEST", "No such user")
    assert is_active(foreign_user)


def test_reactivate(admin, member, realm):
    deactivated_bot = BotFactory(realm=realm, bot_owner=admin, is_active=False)
    member.is_active = False
    member.save()
    assert_success(ApiClient(admin).post(f"/users/{member.id}/reactivate"))
    assert_success(ApiClient(admin).post(f"/users/{deactivated_bot.id}/reactivate"))
    assert is_active(member)
    assert is_active(deactivated_bot)
    assert_success(ApiClient(member).get("/users/me"))


def test_reactivating_an_active_user_is_harmless(admin, member):
    assert_success(ApiClient(admin).post(f"/users/{member.id}/reactivate"))
    assert is_active(member)


@pytest.mark.parametrize("actor", ["moderator", "member", "guest", "bot"])
def test_non_administrators_cannot_reactivate(request, actor, realm):
    target = UserFactory(realm=realm, is_active=False)
    response = ApiClient(request.getfixturevalue(actor)).post(f"/users/{target.id}/reactivate")
    assert_error(response, 400, "BAD_REQUEST", "Insufficient permission")
    assert not is_active(target)


# --- DELETE /users/me ------------------------------------------------------------------------------


def test_a_member_leaves_with_their_bots(member, owner, bot, capture_events):
    with capture_events(owner, event_types=["realm_user"]) as received:
        assert_success(ApiClient(member).delete("/users/me"))
    assert (is_active(member), is_active(bot)) == (False, False)
    assert_error(ApiClient(member).get("/users/me"), 401, "USER_DEACTIVATED", "Account is deactivated")
    gone = {e["person"]["user_id"] for e in received[owner.id] if e["person"].get("is_active") is False}
    assert gone == {member.id, bot.id}
    entry = RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_DEACTIVATED, modified_user=member).get()
    assert entry.acting_user_id == member.id


def test_the_only_owner_cannot_leave_but_one_of_two_can(owner, member, realm):
    response = ApiClient(owner).delete("/users/me")
    body = assert_error(response, 400, "CANNOT_DEACTIVATE_LAST_USER", "Cannot deactivate the only organization owner.")
    assert (body["is_last_owner"], body["entity"]) == (True, "organization owner")
    assert is_active(owner)
    UserFactory(realm=realm, role=Role.OWNER)
    assert_success(ApiClient(owner).delete("/users/me"))
    assert not is_active(owner)


def test_the_only_user_cannot_leave(owner, realm):
    # Bots are not people: an organization of one person and their bot keeps its person.
    bot = BotFactory(realm=realm, bot_owner=owner)
    body = assert_error(ApiClient(owner).delete("/users/me"), 400, "CANNOT_DEACTIVATE_LAST_USER")
    assert (body["msg"], body["is_last_owner"], body["entity"]) == ("Cannot deactivate the only user.", False, "user")
    assert (is_active(owner), is_active(bot)) == (True, True)


def test_a_bot_leaves_alone(bot, member):
    assert_success(ApiClient(bot).delete("/users/me"))
    assert (is_active(bot), is_active(member)) == (False, True)
