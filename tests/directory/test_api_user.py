"""GET /users/{userId}: one active user of the organization, with an ETag for conditional requests."""

import uuid

import pytest

from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.user_settings import do_change_full_name
from tests.directory.api import DirectoryClient, assert_error


def test_user_by_id(directory_for, member, bot):
    response = directory_for(member).get(f"/users/{bot.uuid}")
    assert response.json() == {"id": str(bot.uuid), "name": "Helper Bot"}
    assert response["Content-Type"] == "application/json"


def test_uppercase_id_and_trailing_slash_are_the_same_user(directory_for, member):
    client = directory_for(member)
    expected = {"id": str(member.uuid), "name": "Mel Member"}
    assert client.get(f"/users/{str(member.uuid).upper()}").json() == expected
    response = client.get(f"/users/{member.uuid}/")
    assert (response.status_code, response.json()) == (200, expected)


def test_unknown_deactivated_and_foreign_users_are_the_same_404(directory_for, realm, owner, member, foreign_user):
    gone = member
    do_deactivate_user(gone, acting_user=owner)
    client = directory_for(owner)
    for user_id in (uuid.uuid4(), gone.uuid, foreign_user.uuid):
        response = client.get(f"/users/{user_id}")
        assert_error(response, 404, f'not found: user with id "{user_id}"', "ObjectNotFound")


@pytest.mark.parametrize(("user_id", "shown"), [("not-a-uuid", "not-a-uuid"), ("12", "12"), ("a" * 37, "a" * 37),
                                               ("%00", "\x00"), ("me", "me"),
                                               # What Python's UUID() reads and Rust's does not (the QA pass)
                                               ("8-7-0-7d5a1b6c948d191ead7c8a436d9fc",) * 2,
                                               ("----00000000000000000000000000000000",) * 2,
                                               ("%7B00000000000000000000000000000000%7D", "{" + "0" * 32 + "}"),
                                               ("urn:uuid:" + "0" * 32,) * 2,
                                               ("uuid:00000000-0000-0000-0000-000000000000",) * 2,
                                               ("URN:UUID:00000000-0000-0000-0000-000000000000",) * 2])  # fmt: skip
@pytest.mark.parametrize("authenticated", [True, False])
def test_malformed_id_is_a_400_before_authentication(directory_for, member, user_id, shown, authenticated):
    """Dropshot's path parameter parsing (the directory QA pass: a 404 `Not Found`, the router's)."""
    client = directory_for(member) if authenticated else DirectoryClient()
    message = f"bad parameter in URL path: unable to parse '{shown}' as a UUID"
    assert_error(client.get(f"/users/{user_id}"), 400, message, None)


@pytest.mark.parametrize(
    "user_id",
    ["0" * 32, "{00000000-0000-0000-0000-000000000000}", "urn:uuid:00000000-0000-0000-0000-000000000000"],
)
def test_a_uuid_in_another_form_is_read_as_uuids_are(directory_for, member, user_id):
    """As Rust's uuid (Dropshot's): the simple, braced and URN forms name the same UUID."""
    message = 'not found: user with id "00000000-0000-0000-0000-000000000000"'
    assert_error(directory_for(member).get(f"/users/{user_id}"), 404, message, "ObjectNotFound")


def test_etag_and_if_none_match(directory_for, owner, member):
    client = directory_for(owner)
    response = client.get(f"/users/{member.uuid}")
    etag = response["ETag"]
    assert etag[0] == etag[-1] == '"'
    assert client.get(f"/users/{member.uuid}")["ETag"] == etag

    not_modified = client.get(f"/users/{member.uuid}", HTTP_IF_NONE_MATCH=etag)
    assert (not_modified.status_code, not_modified.content, not_modified["ETag"]) == (304, b"", etag)
    assert not_modified["X-Request-Id"]
    assert client.get(f"/users/{member.uuid}", HTTP_IF_NONE_MATCH=f'"other", {etag}').status_code == 304
    assert client.get(f"/users/{member.uuid}", HTTP_IF_NONE_MATCH='"other"').status_code == 200

    do_change_full_name(member, "Mel Renamed", acting_user=owner)
    changed = client.get(f"/users/{member.uuid}", HTTP_IF_NONE_MATCH=etag)
    assert (changed.status_code, changed.json()["name"]) == (200, "Mel Renamed")
    assert changed["ETag"] != etag


def test_failed_preconditions_are_errors(directory_for, member):
    """If-Match naming another ETag: 412, an Error."""
    client = directory_for(member)
    etag = client.get(f"/users/{member.uuid}")["ETag"]
    assert client.get(f"/users/{member.uuid}", HTTP_IF_MATCH=etag).status_code == 200
    response = client.get(f"/users/{member.uuid}", HTTP_IF_MATCH='"other"')
    assert_error(response, 412, error_code="PreconditionFailed")
    assert response["Content-Type"] == "application/json"


@pytest.mark.parametrize("date", ["Sat, 01 Jan 2000 00:00:00 GMT", "Tue, 01 Dec 2099 00:00:00 GMT"])
def test_if_unmodified_since_is_ignored(directory_for, member, date):
    """The answer has no modification date, so If-Unmodified-Since is ignored (RFC 9110 13.1.4; the
    directory QA pass: every date, even one to come, was a 412)."""
    response = directory_for(member).get(f"/users/{member.uuid}", HTTP_IF_UNMODIFIED_SINCE=date)
    assert (response.status_code, response.json()["id"]) == (200, str(member.uuid))


def test_if_none_match_does_not_hide_a_missing_user(directory_for, member):
    response = directory_for(member).get(f"/users/{uuid.uuid4()}", HTTP_IF_NONE_MATCH="*")
    assert_error(response, 404, error_code="ObjectNotFound")


def test_the_answer_is_json_whatever_the_accept_header_asks(directory_for, member):
    response = directory_for(member).get(f"/users/{member.uuid}", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert response.json() == {"id": str(member.uuid), "name": "Mel Member"}
