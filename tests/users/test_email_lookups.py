"""How an email finds a user: one rule (apps.users.selectors.email_key) for every lookup and for the
password-login limit. ASCII letters match without case; any other character only as it is stored.

PostgreSQL's UPPER() folds U+0131 (dotless i) onto "I" and U+017F (long s) onto "S": a lookup that
relied on it found the victim under spellings the limit counted apart, each with fresh guesses.
"""

import base64

import pytest
from django.test import Client

from apps.realms.models import EmailVisibility
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory

PASSWORD = "correct horse battery"  # set by UserFactory
VICTIM = "kristin.sims@example.com"

# Spellings of VICTIM that are not VICTIM under email_key, with what they are.
LOOKALIKES = {
    "dotless i": VICTIM.replace("ri", "r\u0131", 1),
    "long s": VICTIM.replace("sims", "\u017fims"),
    "Kelvin sign": "\u212a" + VICTIM[1:],
    "full-width k": "\uff4b" + VICTIM[1:],
}


@pytest.fixture
def victim(realm):
    return UserFactory(realm=realm, delivery_email=VICTIM, full_name="Kristin Sims")


def fetch_api_key(username: str, password: str = PASSWORD):
    return ApiClient().post("/fetch_api_key", {"username": username, "password": password})


def basic(email: str, api_key: str) -> str:
    return "Basic " + base64.b64encode(f"{email}:{api_key}".encode()).decode()


@pytest.mark.parametrize("spelling", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_locked_username_stays_locked_under_every_spelling_the_lookup_accepts(
    rate_limit_backend, settings, victim, spelling
):
    settings.RATE_LIMIT_API_BY_IP = (1000, 60)
    for _ in range(5):
        assert_error(fetch_api_key(VICTIM, "wrong"), 401, "AUTHENTICATION_FAILED")
    assert_error(fetch_api_key(VICTIM), 429, "RATE_LIMIT_HIT")
    assert_error(fetch_api_key(VICTIM.upper()), 429, "RATE_LIMIT_HIT")  # the same name
    # Another spelling is another name, counted on its own, and no account has it.
    response = fetch_api_key(spelling)
    assert response.status_code in (400, 401), response.json()
    assert response.json()["code"] in ("BAD_REQUEST", "AUTHENTICATION_FAILED"), response.json()
    assert "api_key" not in response.json()


def admin_login(username: str, password: str = PASSWORD) -> int:
    """The status of a sign-in to the Django admin: 302 into the admin, 200 back to its form."""
    return Client().post("/admin/login/?next=/admin/", {"username": username, "password": password}).status_code


@pytest.mark.parametrize("spelling", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_locked_username_stays_locked_in_the_admin_under_every_spelling(rate_limit_backend, victim, spelling):
    victim.is_staff = victim.is_superuser = True
    victim.save()
    assert admin_login(VICTIM.upper()) == 302
    for _ in range(5):
        assert admin_login(VICTIM, "wrong") == 200
    assert admin_login(VICTIM) == 200
    # The admin's form folds some spellings itself (NFKC: long s, Kelvin sign and full-width letters
    # become ASCII): those are the locked name; the others find nobody.
    assert admin_login(spelling) == 200


@pytest.mark.parametrize("spelling", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_another_spelling_does_not_authenticate_an_api_key(victim, spelling):
    response = ApiClient(authorization=basic(spelling, victim.api_key)).get("/users/me")
    assert_error(response, 401, "UNAUTHORIZED", "Invalid API key")
    assert_success(ApiClient(authorization=basic(VICTIM.upper(), victim.api_key)).get("/users/me"))


def test_another_spelling_does_not_authenticate_a_long_poll(transactional_db, event_backend, victim):
    """The long-poll's own light lookup (active_user_id_by_api_credentials), on a pool thread: the
    data must be committed for it to see."""
    for spelling in LOOKALIKES.values():
        response = ApiClient(authorization=basic(spelling, victim.api_key)).get("/events", {"dont_block": True})
        assert_error(response, 401, "UNAUTHORIZED", "Invalid API key")
    response = ApiClient(authorization=basic(VICTIM.upper(), victim.api_key)).get("/events", {"dont_block": True})
    assert_success(response)


@pytest.mark.parametrize("spelling", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_another_spelling_in_a_path_finds_nobody(victim, admin, spelling):
    api = ApiClient(admin)
    assert_error(api.get(f"/users/{spelling}"), 400, "BAD_REQUEST", "No such user")
    assert_error(api.patch(f"/users/{spelling}", {"full_name": "Renamed"}), 400, "BAD_REQUEST", "No such user")
    assert assert_success(api.get(f"/users/{VICTIM.upper()}"))["user"]["user_id"] == victim.id
    victim.refresh_from_db()
    assert victim.full_name == "Kristin Sims"


def arabic_indic(number: int) -> str:
    """`number` in Arabic-Indic digits, which Python's int() and \\d read like ASCII ones."""
    return "".join(chr(0x660 + int(digit)) for digit in str(number))


@pytest.fixture
def hidden(realm):
    return UserFactory(realm=realm, email_address_visibility=EmailVisibility.ADMINS, full_name="Hidden Person")


def test_a_hidden_address_is_written_with_ascii_digits_only(hidden, member, admin):
    # "testserver" is not a valid email domain, so hidden addresses use FAKE_EMAIL_DOMAIN.
    address = f"user{hidden.id}@parley.invalid"
    assert assert_success(ApiClient(member).get(f"/users/{address.upper()}"))["user"]["user_id"] == hidden.id
    for other in (f"user{arabic_indic(hidden.id)}@parley.invalid", f"u\u017fer{hidden.id}@parley.invalid"):
        assert_error(ApiClient(member).get(f"/users/{other}"), 400, "BAD_REQUEST", "No such user")
        response = ApiClient(admin).patch(f"/users/{other}", {"full_name": "Renamed"})
        assert_error(response, 400, "BAD_REQUEST", "No such user")
        response = ApiClient(authorization=basic(other, hidden.api_key)).get("/users/me")
        assert_error(response, 401, "UNAUTHORIZED", "Invalid API key")
    hidden.refresh_from_db()
    assert hidden.full_name == "Hidden Person"
