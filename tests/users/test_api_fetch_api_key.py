"""POST /fetch_api_key: email and password for the API key, with a per-username failure limit."""

import time

import pytest

from tests.api import ApiClient, assert_error, assert_success

PASSWORD = "correct horse battery"  # set by UserFactory


def fetch(username: str, password: str, host: str = "testserver"):
    return ApiClient(host=host).post("/fetch_api_key", {"username": username, "password": password})


def test_success(member):
    body = assert_success(fetch("Member@Example.com", PASSWORD))
    assert body["api_key"] == member.api_key
    assert body["email"] == member.delivery_email
    assert body["user_id"] == member.id


def test_credentials_sent_in_basic_auth_are_not_needed(member):
    api = ApiClient(member, api_key="x" * 32)
    assert_success(api.post("/fetch_api_key", {"username": member.delivery_email, "password": PASSWORD}))


@pytest.mark.parametrize(("username", "password"), [("member@example.com", "wrong"), ("nobody@example.com", PASSWORD)])
def test_wrong_credentials(member, username, password):
    assert_error(fetch(username, password), 401, "AUTHENTICATION_FAILED", "Your username or password is incorrect")


def test_user_of_another_organization(member, other_realm):
    # member@example.com exists only in the default organization.
    assert_error(fetch("member@example.com", PASSWORD, host="zephyr.testserver"), 401, "AUTHENTICATION_FAILED")


def test_unknown_subdomain(member):
    assert_error(fetch("member@example.com", PASSWORD, host="nope.testserver"), 404, "NONEXISTENT_SUBDOMAIN")


def test_invalid_email(realm):
    assert_error(fetch("not-an-email", "x"), 400, "BAD_REQUEST", "Enter a valid email address.")


def test_missing_password(realm):
    response = ApiClient().post("/fetch_api_key", {"username": "a@example.com"})
    assert_error(response, 400, "REQUEST_VARIABLE_MISSING", "Missing 'password' argument")


def test_deactivated_user(member):
    member.is_active = False
    member.save()
    assert_error(fetch(member.delivery_email, PASSWORD), 401, "USER_DEACTIVATED", "Account is deactivated")
    # Without the right password, nothing is revealed.
    assert_error(fetch(member.delivery_email, "wrong"), 401, "AUTHENTICATION_FAILED")


def test_deactivated_organization(member, realm):
    realm.deactivated = True
    realm.save()
    assert_error(
        fetch(member.delivery_email, PASSWORD), 401, "REALM_DEACTIVATED", "This organization has been deactivated"
    )


def test_password_auth_disabled(member, realm):
    realm.password_auth_enabled = False
    realm.save()
    response = fetch(member.delivery_email, PASSWORD)
    assert_error(response, 401, "PASSWORD_AUTH_DISABLED", "Password authentication is disabled in this organization")


def test_bots_cannot_log_in_with_a_password(bot):
    assert_error(fetch(bot.delivery_email, ""), 401, "AUTHENTICATION_FAILED")


def test_five_failures_lock_the_username(rate_limit_backend, settings, member, admin):
    settings.RATE_LIMIT_API_BY_IP = (1000, 60)
    for _ in range(5):
        assert_error(fetch(member.delivery_email, "wrong"), 401, "AUTHENTICATION_FAILED")
    response = fetch(member.delivery_email, PASSWORD)
    body = assert_error(response, 429, "RATE_LIMIT_HIT")
    assert 1700 < body["retry-after"] <= 1800
    assert int(response["Retry-After"]) >= 1700
    # The headers are the refusing limit's (they were the general limit's: 994 left, of 1,000).
    assert (response["X-RateLimit-Limit"], response["X-RateLimit-Remaining"]) == ("5", "0")
    assert int(response["X-RateLimit-Reset"]) >= time.time() + 1700
    # Other usernames are not affected.
    assert_success(fetch(admin.delivery_email, PASSWORD))


def test_failures_and_lockouts_are_logged_naming_the_account(rate_limit_backend, settings, member, caplog):
    """The operator QA pass: the log said only 401 and 429, not who was guessed at, nor who was locked out."""
    settings.RATE_LIMIT_API_BY_IP = (1000, 60)
    caplog.set_level("WARNING", logger="apps.users.backends")
    assert_error(fetch("nobody@example.com", "wrong"), 401, "AUTHENTICATION_FAILED")
    for _ in range(5):
        assert_error(fetch(member.delivery_email, "wrong"), 401, "AUTHENTICATION_FAILED")
    assert_error(fetch(member.delivery_email, PASSWORD), 429, "RATE_LIMIT_HIT")
    where = "in organization '(default)' from 127.0.0.1"
    assert [record.getMessage() for record in caplog.records] == [
        f"Login failed for 'nobody@example.com' {where}: no such account",
        *[f"Login failed for '{member.delivery_email}' {where}: wrong password"] * 5,
        f"Login refused for '{member.delivery_email}' {where}: the account's failed logins are over their limit",
    ]
    assert PASSWORD not in caplog.text


def test_success_clears_earlier_failures(rate_limit_backend, settings, member):
    for _ in range(4):
        assert_error(fetch(member.delivery_email, "wrong"), 401, "AUTHENTICATION_FAILED")
    assert_success(fetch(member.delivery_email, PASSWORD))
    for _ in range(4):
        assert_error(fetch(member.delivery_email, "wrong"), 401, "AUTHENTICATION_FAILED")
    assert_success(fetch(member.delivery_email, PASSWORD))


def test_login_limit_fails_closed_when_redis_is_down(redis_down, member):
    response = fetch(member.delivery_email, PASSWORD)
    assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert "api_key" not in response.json()
    assert int(response["Retry-After"]) > 0
