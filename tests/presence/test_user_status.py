"""POST /users/me/status and GET /users/{id}/status: a status text and emoji (checked as reactions'
are), Zulip's errors, user_status events to the organization and the `user_status` state."""

import importlib

import pytest
from django.apps import apps as django_apps

from apps.presence.models import UserStatus
from tests.api import api_for, assert_error, assert_success


def set_status(user, **params):
    return api_for(user).post("/users/me/status", params)


def state_of(user) -> dict:
    return assert_success(api_for(user).post("/register", {"fetch_event_types": ["user_status"]}))["user_status"]


def test_a_status_text_and_emoji_reach_everyone(member, admin, capture_events):
    with capture_events(admin) as received:
        assert_success(set_status(member, status_text=" In a meeting ", emoji_name="calendar"))
    expected = {"status_text": "In a meeting", "emoji_name": "calendar", "emoji_code": "1f4c5",
                "reaction_type": "unicode_emoji"}  # fmt: skip
    assert received[admin.id] == [{"type": "user_status", "user_id": member.id, **expected}]
    assert state_of(admin) == {str(member.id): expected}
    assert assert_success(api_for(admin).get(f"/users/{member.id}/status"))["status"] == expected


def test_clearing_the_text_and_the_emoji(member, admin):
    assert_success(set_status(member, status_text="Busy", emoji_name="octopus"))
    assert_success(set_status(member, status_text="", emoji_name=""))
    assert state_of(admin) == {}
    assert assert_success(api_for(admin).get(f"/users/{member.id}/status"))["status"] == {}


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({}, "Client did not pass any new values."),
        ({"emoji_code": "1f419"}, "Client did not pass any new values."),
        (
            {"status_text": "x", "emoji_code": "1f419"},
            "Client must pass emoji_name if they pass either emoji_code or reaction_type.",
        ),
        ({"emoji_name": "no_such_emoji"}, "Emoji 'no_such_emoji' does not exist"),
        ({"emoji_name": "octopus", "emoji_code": "1f600"}, "Invalid emoji name."),
        ({"status_text": "x" * 61}, None),
    ],
)
def test_bad_statuses_are_refused(member, params, msg):
    response = set_status(member, **params)
    body = response.json()
    assert response.status_code == 400, body
    if msg is not None:
        assert body["msg"] == msg
    assert not UserStatus.objects.exists()


def test_another_organizations_user_has_no_status_here(member, foreign_user):
    assert_error(api_for(member).get(f"/users/{foreign_user.id}/status"), 400, "BAD_REQUEST", "No such user")


def test_staff_see_statuses_read_only(staff, member):
    assert_success(set_status(member, status_text="Findable"))
    assert "Findable" in staff.get("/admin/presence/userstatus/?q=Findable").content.decode()
    assert staff.get("/admin/presence/userstatus/add/").status_code == 403


# --- POST /users/{user_id}/status: an administrator sets someone's status ---------------------------


def test_an_administrator_sets_someones_status(member, admin, capture_events):
    with capture_events(member) as received:
        assert_success(api_for(admin).post(f"/users/{member.id}/status", {"status_text": "On leave",
                                                                          "emoji_name": "palm_tree"}))  # fmt: skip
    expected = {"status_text": "On leave", "emoji_name": "palm_tree", "emoji_code": "1f334",
                "reaction_type": "unicode_emoji"}  # fmt: skip
    assert received[member.id] == [{"type": "user_status", "user_id": member.id, **expected}]
    assert assert_success(api_for(member).get(f"/users/{member.id}/status"))["status"] == expected
    assert_success(api_for(admin).post(f"/users/{member.id}/status", {"status_text": "", "emoji_name": ""}))
    assert state_of(admin) == {}


def test_only_administrators_set_others_statuses(member, moderator, admin, foreign_user):
    for caller in (member, moderator):
        response = api_for(caller).post(f"/users/{admin.id}/status", {"status_text": "Fired"})
        assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    response = api_for(admin).post(f"/users/{foreign_user.id}/status", {"status_text": "x"})
    assert_error(response, 400, "BAD_REQUEST", "No such user")
    assert_error(api_for(admin).post(f"/users/{member.id}/status", {}), 400, "BAD_REQUEST",
                 "Client did not pass any new values.")  # fmt: skip
    # `away` is the user's own (POST /users/me/status): ignored here, so nothing to change.
    assert_error(api_for(admin).post(f"/users/{member.id}/status", {"away": "true"}), 400, "BAD_REQUEST",
                 "Client did not pass any new values.")  # fmt: skip
    assert not UserStatus.objects.exists()


def test_the_migration_writes_stored_codes_in_four_digits(member, admin, guest):
    """Statuses set before codes were padded (apps/presence/migrations/0004): Zulip's codes."""
    migration = importlib.import_module("apps.presence.migrations.0004_emoji_codes_four_digits")
    UserStatus.objects.create(user=member, realm=member.realm, emoji_name="one", emoji_code="31-20e3")
    UserStatus.objects.create(user=admin, realm=admin.realm, emoji_name="calendar", emoji_code="1f4c5")
    UserStatus.objects.create(
        user=guest, realm=guest.realm, emoji_name="x", emoji_code="7", reaction_type="realm_emoji"
    )
    migration.pad_codes(django_apps, None)
    assert dict(UserStatus.objects.values_list("user_id", "emoji_code")) == {
        member.id: "0031-20e3",
        admin.id: "1f4c5",
        guest.id: "7",  # a custom emoji's code is its id
    }


def test_the_migration_makes_stored_names_and_codes_agree(member, admin, guest, moderator):
    """Statuses set before Zulip's emoji table was taken up (apps/presence/migrations/0005)."""
    migration = importlib.import_module("apps.presence.migrations.0005_emoji_names_agree_with_codes")
    stored = ((member, "smile", "1f604"), (admin, "smile", "1f642"), (moderator, "calendar", "ffff1"))
    for user, name, code in stored:
        UserStatus.objects.create(user=user, realm=user.realm, emoji_name=name, emoji_code=code)
    UserStatus.objects.create(user=guest, realm=guest.realm, status_text="away")  # no emoji
    migration.agree(django_apps, None)
    assert sorted(UserStatus.objects.values_list("user_id", "emoji_name", "emoji_code")) == sorted([
        (member.id, "big_smile", "1f604"),
        (admin.id, "smile", "1f642"),
        (moderator.id, "calendar", "1f4c5"),
        (guest.id, "", ""),
    ])  # fmt: skip
