"""Page tokens: only a token exactly as this server issued it, for this organization, is accepted;
anything else is a 400, never a 500 and never another organization's users."""

import base64
import json
import uuid

import pytest

from apps.directory.pagination import MAX_TOKEN_LENGTH, NAME_FILTER_MAX_LENGTH, PageStart, encode_page_token
from apps.users.models import User
from tests.directory.api import assert_error
from tests.factories import UserFactory

CORRUPTED = "unable to parse query string: failed to parse pagination token: corrupted token"


@pytest.fixture
def token(directory_for, realm, member):
    """A real first-page token (more users follow it)."""
    UserFactory.create_batch(4, realm=realm)
    return directory_for(member).get("/users", {"limit": 2}).json()["next_page"]


def decoded(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token))


def encoded(data: dict, **dumps_options) -> str:
    options = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False, **dumps_options}
    return base64.urlsafe_b64encode(json.dumps(data, **options).encode()).decode()


def uppercase_position(data: dict) -> dict:
    return {**data, "page_start": {"after": data["page_start"]["after"].upper()}}


def assert_refused(directory_for, user, page_token: str, message: str = CORRUPTED) -> None:
    response = directory_for(user).get("/users", {"page_token": page_token})
    assert_error(response, 400, message, "InvalidPageToken")


def test_token_is_urlsafe_base64_of_versioned_json(token):
    data = decoded(token)
    assert data["v"] == "v1"
    assert set(data) == {"v", "page_start", "sig"}
    assert set(data["page_start"]) == {"after"}
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")
    assert encoded(data) == token


def test_every_single_character_change_is_refused(directory_for, member, token):
    alphabet = "AaZz09-_="
    for position in range(len(token)):
        replacement = next(c for c in alphabet if c != token[position])
        assert_refused(directory_for, member, token[:position] + replacement + token[position + 1 :])


def test_every_truncation_is_refused(directory_for, member, token):
    for length in range(len(token)):
        assert_refused(directory_for, member, token[:length])


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda data: {**data, "page_start": {"after": str(uuid.uuid4())}}, id="after"),
        pytest.param(lambda data: {**data, "page_start": {**data["page_start"], "name": "x"}}, id="added-filter"),
        pytest.param(lambda data: {**data, "v": "v2"}, id="version"),
        pytest.param(lambda data: {**data, "sig": data["sig"][::-1]}, id="signature"),
        pytest.param(lambda data: {key: value for key, value in data.items() if key != "sig"}, id="unsigned"),
        pytest.param(lambda data: {**data, "extra": 1}, id="extra-field"),
    ],
)
def test_changed_content_is_refused(directory_for, member, token, change):
    assert_refused(directory_for, member, encoded(change(decoded(token))))


@pytest.mark.parametrize(
    "reencode",
    [
        pytest.param(lambda token: token[:20] + "\n" + token[20:], id="line-break"),
        pytest.param(lambda token: token.rstrip("="), id="no-padding"),
        pytest.param(lambda token: token + "==", id="extra-padding"),
        pytest.param(lambda token: encoded(decoded(token), separators=(", ", ": ")), id="json-spaces"),
        pytest.param(lambda token: encoded(decoded(token), sort_keys=False, indent=1), id="json-layout"),
        pytest.param(lambda token: encoded(uppercase_position(decoded(token))), id="uppercase-uuid"),
    ],
)
def test_reencoded_token_is_refused(directory_for, member, token, reencode):
    reencoded = reencode(token)
    assert reencoded != token
    assert_refused(directory_for, member, reencoded)


def test_standard_base64_alphabet_is_refused(directory_for, realm, member):
    # "~" in the name filter puts "-" in the token; standard base64 would spell it "+".
    token = encode_page_token(realm, PageStart(after=member.uuid, name="~~~"))
    assert "-" in token
    assert directory_for(member).get("/users", {"page_token": token}).status_code == 200
    assert_refused(directory_for, member, base64.b64encode(base64.urlsafe_b64decode(token)).decode())


@pytest.mark.parametrize(
    "garbage",
    [
        "q",
        "",
        "====",
        "%%%",
        "\u00e9t\u00e9",
        "null",
        base64.urlsafe_b64encode(b"not json").decode(),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
        encoded([1, 2]),  # type: ignore[arg-type]
        encoded({"v": "v1", "page_start": "x", "sig": "y"}),
        encoded({"v": "v1", "page_start": {"after": 5}, "sig": "y"}),
    ],
)
def test_garbage_token_is_refused(directory_for, member, garbage):
    assert_refused(directory_for, member, garbage)


def test_oversized_token_is_refused(directory_for, member, token):
    too_long = "A" * (MAX_TOKEN_LENGTH + 1)
    message = "unable to parse query string: failed to parse pagination token: too large"
    assert_refused(directory_for, member, too_long, message)
    assert_refused(directory_for, member, token + "A" * (MAX_TOKEN_LENGTH + 1 - len(token)), message)


def test_token_of_another_organization_is_refused(directory_for, realm, other_realm, member, foreign_user):
    UserFactory.create_batch(3, realm=other_realm)
    foreign = directory_for(foreign_user, host="zephyr.testserver")
    foreign_token = foreign.get("/users", {"limit": 1}).json()["next_page"]
    # Also a token that names a position inside our organization, signed for the other one.
    ours = str(User.objects.filter(realm=realm).values_list("uuid", flat=True).first())
    forged = encode_page_token(other_realm, PageStart(after=ours))
    for page_token in (foreign_token, forged):
        assert_refused(directory_for, member, page_token)


def test_token_signed_with_another_secret_is_refused(directory_for, realm, member, token, settings):
    issued_elsewhere = encode_page_token(realm, PageStart(after=decoded(token)["page_start"]["after"]))
    assert issued_elsewhere == token  # the same key gives the same token...
    settings.SECRET_KEY = "another-secret-" * 5
    assert_refused(directory_for, member, token)  # ...and another key refuses it


def test_token_survives_a_key_rotation_with_fallback(directory_for, member, token, settings):
    old_key = settings.SECRET_KEY
    settings.SECRET_KEY = "a-new-secret-" * 5
    settings.SECRET_KEY_FALLBACKS = [old_key]
    assert directory_for(member).get("/users", {"page_token": token}).status_code == 200


@pytest.mark.parametrize("character", ["\x01", "\U0001f600", '"', "\\"])
def test_longest_possible_token_fits_the_limit(realm, character):
    start = PageStart(after="ffffffff-ffff-4fff-bfff-ffffffffffff", name=character * NAME_FILTER_MAX_LENGTH)
    assert len(encode_page_token(realm, start)) <= MAX_TOKEN_LENGTH
