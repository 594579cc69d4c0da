"""HTTP Basic authentication with API email and key, exactly as Zulip answers each failure."""

import base64

import pytest

from apps.realms.models import EmailVisibility
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory


def basic(value: str) -> str:
    return "Basic " + base64.b64encode(value.encode()).decode()


def assert_unauthorized(response, msg: str) -> None:
    assert_error(response, 401, "UNAUTHORIZED", msg)
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'


def test_delivery_email_and_key_authenticate(member):
    assert assert_success(ApiClient(member).get("/users/me"))["user_id"] == member.id


def test_email_is_case_insensitive_and_trimmed(member):
    api = ApiClient(authorization=basic(f" {member.delivery_email.upper()} :{member.api_key} "))
    assert_success(api.get("/users/me"))


def test_hidden_email_user_authenticates_with_api_email(realm):
    user = UserFactory(realm=realm, email_address_visibility=EmailVisibility.ADMINS)
    # "testserver" is not a valid email domain, so hidden addresses use FAKE_EMAIL_DOMAIN.
    api = ApiClient(email=f"user{user.id}@parley.invalid", api_key=user.api_key)
    body = assert_success(api.get("/users/me"))
    assert body["email"] == f"user{user.id}@parley.invalid"
    assert body["delivery_email"] == user.delivery_email


def test_no_authorization_header(realm):
    assert_unauthorized(ApiClient().get("/users/me"), "Not logged in: API authentication or user session required")


@pytest.mark.parametrize(
    "header", ["Basic !!!notbase64", basic("no-colon-here"), "Basic " + base64.b64encode(b"\xff:\xfe").decode()]
)
def test_unparseable_header(realm, header):
    assert_unauthorized(ApiClient(authorization=header).get("/users/me"), "Invalid authorization header for basic auth")


def test_other_scheme_is_400(realm):
    response = ApiClient(authorization="Bearer abc").get("/users/me")
    assert_error(response, 400, "BAD_REQUEST", "This endpoint requires HTTP basic authentication.")


@pytest.mark.parametrize("key", ["short", "a" * 33, "a" * 31 + "-", ""])
def test_malformed_key(member, key):
    assert_unauthorized(ApiClient(email=member.delivery_email, api_key=key).get("/users/me"), "Malformed API key")


def test_unknown_key(member):
    assert_unauthorized(ApiClient(email=member.delivery_email, api_key="A" * 32).get("/users/me"), "Invalid API key")


def test_key_of_another_user_is_invalid(member, admin):
    api = ApiClient(email=member.delivery_email, api_key=admin.api_key)
    assert_unauthorized(api.get("/users/me"), "Invalid API key")


def test_key_of_another_organization_is_refused(realm, foreign_user):
    api = ApiClient(foreign_user)
    assert_unauthorized(api.get("/users/me"), "Account is not associated with this subdomain")


def test_same_email_in_two_organizations_each_key_works_on_its_own_host(member, foreign_user):
    assert member.delivery_email == foreign_user.delivery_email
    assert assert_success(ApiClient(member).get("/users/me"))["user_id"] == member.id
    body = assert_success(ApiClient(foreign_user, host="zephyr.testserver").get("/users/me"))
    assert body["user_id"] == foreign_user.id


def test_deactivated_user(member):
    member.is_active = False
    member.save()
    response = ApiClient(member).get("/users/me")
    assert_error(response, 401, "USER_DEACTIVATED", "Account is deactivated")  # Zulip's code
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'


def test_deactivated_organization(member, realm):
    realm.deactivated = True
    realm.save()
    response = ApiClient(member).get("/users/me")
    assert_error(response, 401, "REALM_DEACTIVATED", "This organization has been deactivated")  # Zulip's code
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'


def test_bots_authenticate(bot):
    body = assert_success(ApiClient(bot).get("/users/me"))
    assert body["is_bot"] is True
    assert "profile_data" not in body
