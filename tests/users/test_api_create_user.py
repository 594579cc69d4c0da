"""POST /users: administrators with the can_create_users permission (granted by an operator) create
accounts, as in Zulip; everyone else is refused, and bad input creates nothing."""

from datetime import datetime, timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.users.models import User
from tests.api import ApiClient, api_for, assert_error, assert_success

PASSWORD = "correct horse battery staple"
MEMBER_PASSWORD = "correct horse battery"  # UserFactory's


@pytest.fixture
def provisioner(admin):
    call_command("change_user_role", admin.delivery_email, "can_create_users")
    admin.refresh_from_db()
    return admin


def test_an_administrator_with_the_permission_creates_an_account(realm, provisioner, member, capture_events):
    with capture_events(member) as received:
        answer = assert_success(
            api_for(provisioner).post(
                "/users", {"email": "new@example.com", "password": PASSWORD, "full_name": "New Person"}
            )
        )
    user = User.objects.get(id=answer["user_id"])
    assert (user.realm_id, user.delivery_email, user.full_name, user.is_bot) == (
        realm.id,
        "new@example.com",
        "New Person",
        False,
    )
    assert user.check_password(PASSWORD)
    assert [e["op"] for e in received[member.id] if e["type"] == "realm_user"] == ["add"]
    # The new account can use the API at once.
    profile = assert_success(api_for(user).get("/users/me"))
    assert profile["user_id"] == user.id


def test_the_account_joins_when_its_person_first_signs_in(provisioner, member):
    """As the spec and Zulip: an account made through the API joins at its first sign-in (the spec
    QA pass: date_joined stayed the creation time)."""
    created = assert_success(
        api_for(provisioner).post("/users", {"email": "new@example.com", "password": PASSWORD, "full_name": "New"})
    )
    User.objects.filter(id=created["user_id"]).update(date_joined=timezone.now() - timedelta(days=3))

    def date_joined(user_id: int) -> datetime:
        return datetime.fromisoformat(assert_success(api_for(member).get(f"/users/{user_id}"))["user"]["date_joined"])

    def sign_in(email: str, password: str):
        return ApiClient().post("/fetch_api_key", {"username": email, "password": password})

    made = date_joined(created["user_id"])
    assert made < timezone.now() - timedelta(days=2)
    assert_error(sign_in("new@example.com", "wrong"), 401, "AUTHENTICATION_FAILED")
    assert date_joined(created["user_id"]) == made
    before = timezone.now().replace(second=0, microsecond=0)  # shown to the minute
    assert_success(sign_in("new@example.com", PASSWORD))
    first_sign_in = date_joined(created["user_id"])
    assert first_sign_in >= before
    # Later sign-ins change nothing, nor do those of people who joined otherwise.
    assert_success(sign_in("new@example.com", PASSWORD))
    assert date_joined(created["user_id"]) == first_sign_in
    joined = date_joined(member.id)
    assert_success(sign_in(member.delivery_email, MEMBER_PASSWORD))
    assert date_joined(member.id) == joined


def test_without_the_permission(admin, member):
    response = api_for(admin).post("/users", {"email": "new@example.com", "password": PASSWORD, "full_name": "N"})
    assert_error(response, 400, "BAD_REQUEST", "User not authorized to create users")
    assert_error(
        api_for(member).post("/users", {"email": "new@example.com", "password": PASSWORD, "full_name": "N"}),
        400, "UNAUTHORIZED_PRINCIPAL", None,
    )  # fmt: skip
    assert not User.objects.filter(delivery_email="new@example.com").exists()


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({"email": "member-taken", "password": PASSWORD, "full_name": "Xu"}, None),
        ({"email": "not an email", "password": PASSWORD, "full_name": "Xu"}, "Invalid address."),
        ({"email": "a@example.com", "password": "", "full_name": "Xu"}, "The password is too weak."),
        ({"email": "a@example.com", "password": PASSWORD, "full_name": "  "}, "Name too short!"),
        ({"email": "a@example.com", "password": PASSWORD}, "Missing 'full_name' argument"),
    ],
)
def test_bad_input_creates_nothing(provisioner, member, params, msg):
    if params["email"] == "member-taken":
        params = {**params, "email": member.delivery_email.upper()}
        msg = f"Email '{params['email']}' already in use"
    count = User.objects.count()
    body = assert_error(
        api_for(provisioner).post("/users", params),
        400,
        "BAD_REQUEST" if "Missing" not in (msg or "") else "REQUEST_VARIABLE_MISSING",
        msg,
    )
    assert body["msg"]
    assert User.objects.count() == count


def test_the_permission_can_be_revoked(provisioner):
    call_command("change_user_role", provisioner.delivery_email, "can_create_users", "--revoke")
    response = api_for(provisioner).post("/users", {"email": "n@example.com", "password": PASSWORD, "full_name": "N"})
    assert_error(response, 400, "BAD_REQUEST", "User not authorized to create users")


def test_the_new_address_reaches_only_those_allowed_to_see_it(
    provisioner, owner, moderator, member, guest, capture_events
):
    """The organization's default visibility (administrators only): they get the address in
    realm_user/add, everyone else null; the one event reaches each of them once."""
    with capture_events(owner, provisioner, moderator, member, guest) as received:
        assert_success(
            api_for(provisioner).post("/users", {"email": "new@example.com", "password": PASSWORD, "full_name": "New"})
        )
    addresses = {
        user.id: [e["person"]["delivery_email"] for e in received[user.id] if e["type"] == "realm_user"]
        for user in (owner, provisioner, moderator, member, guest)
    }
    assert addresses == {
        owner.id: ["new@example.com"],
        provisioner.id: ["new@example.com"],
        moderator.id: [None],
        member.id: [None],
        guest.id: [None],
    }
