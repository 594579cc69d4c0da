"""Every 4xx and 5xx under the directory's URLs is Dropshot's `Error`, with x-request-id equal to
its request_id (the client checks that and the document's shapes on every response)."""

import base64
import uuid

import jsonschema
import pytest
from openapi_core.validation.response.exceptions import InvalidData

from apps.core.version import PARLEY_VERSION
from tests.directory.api import DirectoryClient, assert_error, check_response
from tests.factories import UserFactory

PATHS = ["/users", "/users/00000000-0000-4000-8000-000000000000", "/version", "/openapi.json"]


@pytest.mark.parametrize(
    "path",
    [
        "/users/00000000-0000-4000-8000-000000000000/groups",
        "/users/me/x",
        "/version/1",
        "/openapi.json/x",
    ],
)
def test_unknown_path_is_404_not_found(directory_for, member, path):
    assert_error(directory_for(member).get(path), 404, "Not Found", None)


def test_empty_path_segments_are_ignored(directory_for, member):
    """As Dropshot's router (the directory QA pass: `/users//` was a 404)."""
    client = directory_for(member)
    listed = client.get("/users").json()
    assert client.get("/users//").json() == client.get("/users///").json() == listed
    assert client.get(f"/users//{member.uuid}//").json() == client.get(f"/users/{member.uuid}").json()
    assert client.get("/version//").status_code == 200


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
@pytest.mark.parametrize("authenticated", [True, False])
def test_wrong_method_is_405_with_allow(directory_for, member, path, method, authenticated):
    response = (directory_for(member) if authenticated else DirectoryClient()).request(method, path)
    assert response["Allow"] == "GET"
    if method != "HEAD":
        assert_error(response, 405, "Method Not Allowed", None)
    else:
        assert (response.status_code, response.content) == (405, b"")


@pytest.mark.parametrize("path", PATHS[:2])
def test_without_credentials_is_401(realm, path):
    response = DirectoryClient().get(path)
    message = "credentials missing or invalid: HTTP Basic authentication with an email and API key"
    assert_error(response, 401, message, "Unauthorized")
    assert response["WWW-Authenticate"].startswith("Basic")


@pytest.mark.parametrize(
    ("authorization", "message"),
    [
        ("Basic " + base64.b64encode(b"member@example.com:" + b"A" * 32).decode(), "Invalid API key"),
        ("Basic " + base64.b64encode(b"member@example.com:short").decode(), "Malformed API key"),
        ("Basic not-base64!", "Invalid authorization header for basic auth"),
        ("Basic " + base64.b64encode(b"no-colon").decode(), "Invalid authorization header for basic auth"),
    ],
)
def test_bad_credentials_are_401(directory_for, member, authorization, message):
    client = DirectoryClient()
    client.headers["HTTP_AUTHORIZATION"] = authorization
    assert_error(client.get("/users"), 401, message, "Unauthorized")


def test_other_scheme_is_401_naming_basic(member):
    client = DirectoryClient()
    client.headers["HTTP_AUTHORIZATION"] = "Bearer abc"
    response = client.get("/users")
    assert_error(response, 401, "This endpoint requires HTTP basic authentication.", "Unauthorized")
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'


def test_deactivated_user_is_401(directory_for, realm, owner, member):
    member.is_active = False
    member.save()
    assert_error(directory_for(member).get("/users"), 401, "Account is deactivated", "Unauthorized")


def test_user_of_another_organization_is_401_and_sees_nothing(directory_for, realm, member, foreign_user):
    response = directory_for(foreign_user).get("/users")
    assert_error(response, 401, "Account is not associated with this subdomain", "Unauthorized")
    assert "Mel" not in response.content.decode()


def test_each_organization_sees_only_its_users(directory_for, realm, member, other_realm, foreign_user):
    UserFactory.create_batch(3, realm=other_realm)
    ours = directory_for(member).get("/users").json()["items"]
    theirs = directory_for(foreign_user, host="zephyr.testserver").get("/users").json()["items"]
    assert [item["id"] for item in ours] == [str(member.uuid)]
    assert len(theirs) == 4
    assert str(member.uuid) not in str(theirs)
    response = directory_for(foreign_user, host="zephyr.testserver").get(f"/users/{member.uuid}")
    assert_error(response, 404, error_code="ObjectNotFound")


def test_unknown_organization_is_404(member):
    response = DirectoryClient(member, host="nowhere.testserver").get("/users")
    assert_error(response, 404, "Invalid subdomain", "NoSuchOrganization")


def test_disallowed_host_is_400(member):
    assert_error(DirectoryClient(member, host="evil.example.org").get("/users"), 400, "Bad Request", None)


def test_too_many_query_parameters_say_so(directory_for, member):
    """(The directory QA pass: a 400 "Bad Request" that did not say why.)"""
    query = "&".join(["limit=1", *["x=1"] * 1000])
    response = directory_for(member).get(f"/users?{query}")
    assert_error(response, 400, "Too many parameters (the limit is 1,000)", None)


def test_rate_limit_is_429_with_retry_after(directory_for, member, settings):
    settings.RATE_LIMIT_API_BY_USER = (2, 60)
    client = directory_for(member)
    assert client.get("/users").status_code == 200
    assert client.get("/users")["X-RateLimit-Remaining"] == "0"
    response = client.get("/users")
    assert_error(response, 429, "API usage exceeded rate limit", "TooManyRequests")
    assert int(response["Retry-After"]) > 0


@pytest.mark.urls("tests.directory.urls")
def test_crash_is_500_internal_without_details(realm, caplog):
    response = DirectoryClient().get("/users/test/crash")
    assert_error(response, 500, "Internal server error", "Internal")
    assert "boom" not in response.content.decode()
    assert any("boom" in (record.exc_text or "") for record in caplog.records), "the traceback goes to the log"


@pytest.mark.urls("tests.directory.urls")
def test_crash_outside_rest_framework_is_500_internal(realm):
    response = DirectoryClient().get("/users/test/plain-crash")
    assert_error(response, 500, "Internal server error", "Internal")
    assert "boom" not in response.content.decode()


@pytest.mark.urls("tests.directory.urls")
def test_database_down_is_503_with_retry_after(realm):
    response = DirectoryClient().get("/users/test/database-down")
    body = assert_error(response, 503, error_code="ServiceUnavailable")
    assert "database" in body["message"]
    assert "127.0.0.1" not in body["message"]
    assert int(response["Retry-After"]) > 0


def test_request_ids_are_fresh_and_match_the_body(directory_for, member):
    client = directory_for(member)
    first, second = client.get("/users/nope"), client.get("/users/nope")
    assert first["X-Request-Id"] != second["X-Request-Id"]
    assert first.json()["request_id"] == first["X-Request-Id"]
    # A UUID v4 string, as Dropshot's (it was the dash-less hex form).
    assert str(uuid.UUID(first["X-Request-Id"], version=4)) == first["X-Request-Id"]


def test_version_needs_no_credentials_and_shares_the_server_settings_version(realm, directory_for, member):
    assert DirectoryClient().get("/version").json() == {"name": "parley", "version": PARLEY_VERSION}
    assert directory_for(member, api_key="B" * 32).get("/version/").status_code == 200
    settings_version = DirectoryClient().client.get("/api/v1/server_settings").json()["zulip_version"]
    assert settings_version == PARLEY_VERSION


def test_messaging_api_keeps_its_envelope(realm):
    """The boundary: paths outside the directory's answer in Zulip's envelope."""
    for path in ("/api/v1/nope", "/nothing-here"):
        body = DirectoryClient().client.get(path).json()
        assert body == {"result": "error", "msg": "Not Found", "code": "BAD_REQUEST"}


def test_contract_check_rejects_other_shapes(directory_for, member):
    """The check run on every response above has teeth: Zulip's shapes are not the document's."""
    client = directory_for(member).client
    cases = [
        ("/api/v1/users", "/users", InvalidData, "'items' is a required property"),
        ("/api/v1/nope", "/users/x/y", jsonschema.ValidationError, "'message' is a required property"),
    ]
    for zulip_path, directory_path, error, message in cases:
        response = client.get(zulip_path, **directory_for(member).headers)
        response.wsgi_request.path = directory_path
        with pytest.raises(error, match=message):
            check_response(response)
