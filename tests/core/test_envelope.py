"""The envelope every response shares, including Django's own 404/405/500 and request ids."""

import io
import logging
import uuid

import pytest
from django.test import Client

from tests.api import ApiClient, assert_error, assert_success


def test_unknown_api_path_is_json_404(client_for, member):
    body = assert_error(client_for(member).get("/no/such/endpoint"), 404, "BAD_REQUEST", "Not Found")
    assert set(body) == {"result", "msg", "code"}


def test_unknown_path_outside_api_is_json_404(anonymous, realm):
    assert_error(anonymous.get("/nothing-here"), 404, "BAD_REQUEST", "Not Found")


@pytest.mark.parametrize("authenticated", [True, False])
def test_wrong_method_is_405_with_allowed_methods(client_for, member, anonymous, authenticated):
    api = client_for(member) if authenticated else anonymous
    response = api.put("/users/me")
    body = assert_error(response, 405, "BAD_REQUEST", "Method Not Allowed")
    assert body["allowed_methods"] == ["GET", "DELETE", "HEAD"]
    assert response["Allow"] == "GET, DELETE, HEAD"


def test_options_is_not_answered_with_framework_metadata(client_for, member):
    assert_error(client_for(member).request("OPTIONS", "/users/me"), 405, "BAD_REQUEST")


@pytest.mark.urls("tests.core.urls")
def test_unexpected_error_is_json_500_without_details(realm, caplog):
    response = ApiClient().get("/test/crash")
    body = assert_error(response, 500, "INTERNAL_SERVER_ERROR", "Internal server error")
    assert "boom" not in response.content.decode()
    assert "secret-settings-value" not in response.content.decode()
    assert set(body) == {"result", "msg", "code"}
    assert any("boom" in (r.exc_text or "") for r in caplog.records), "the traceback goes to the log"


@pytest.mark.urls("tests.core.urls")
def test_error_outside_rest_framework_is_json_500(realm):
    response = ApiClient().client.get("/plain-crash")
    assert_error(response, 500, "INTERNAL_SERVER_ERROR", "Internal server error")
    assert "boom" not in response.content.decode()


@pytest.mark.urls("tests.core.urls")
def test_database_error_is_503_with_retry_after(realm):
    response = ApiClient().get("/test/database-down")
    body = assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert "database" in body["msg"]
    assert "127.0.0.1" not in body["msg"]
    assert int(response["Retry-After"]) > 0


@pytest.mark.urls("tests.core.urls")
def test_unknown_parameters_are_listed_not_rejected(realm):
    api = ApiClient()
    body = assert_success(api.get("/test/echo", {"dont_block": True, "zeta": "1", "alpha": "x"}))
    assert body["ignored_parameters_unsupported"] == ["alpha", "dont_block", "zeta"]
    body = assert_success(api.post("/test/echo", {"dont_block": True}))
    assert body["ignored_parameters_unsupported"] == ["dont_block"]


@pytest.mark.urls("tests.core.urls")
def test_no_ignored_parameters_key_when_all_are_used(realm):
    assert "ignored_parameters_unsupported" not in assert_success(ApiClient().get("/test/echo"))


def test_used_parameters_are_not_reported_as_ignored(client_for, member):
    body = assert_success(client_for(member).get("/users", {"client_gravatar": False, "dont_block": True}))
    assert body["ignored_parameters_unsupported"] == ["dont_block"]


def test_json_request_body_is_refused_in_the_envelope(client_for, member, admin):
    response = client_for(admin).client.generic(
        "PATCH",
        f"/api/v1/users/{member.id}",
        '{"full_name": "X"}',
        content_type="application/json",
        **client_for(admin).headers,
    )
    assert_error(response, 415, "BAD_REQUEST")
    member.refresh_from_db()
    assert member.full_name == "Mel Member"


@pytest.mark.parametrize("path", ["/api/v1/users/me", "/api/v1/nope", "/health/live", "/api/v1/server_settings"])
def test_every_response_has_a_request_id(client_for, member, path):
    first = client_for(member).get(path)
    second = client_for(member).get(path)
    assert str(uuid.UUID(first["X-Request-Id"], version=4)) == first["X-Request-Id"]  # as Dropshot's
    assert first["X-Request-Id"] != second["X-Request-Id"]


def test_log_lines_of_a_request_carry_its_request_id(client_for, member, caplog):
    caplog.set_level(logging.INFO, logger="parley.access")
    response = client_for(member).get("/users/me")
    access = [r for r in caplog.records if r.name == "parley.access"]
    assert len(access) == 1
    assert access[0].request_id == response["X-Request-Id"]
    assert "GET /api/v1/users/me 200" in access[0].getMessage()
    assert f"user={member.id}" in access[0].getMessage()


def test_a_pages_access_log_line_names_whom_its_session_authenticated(member, owner, caplog):
    """The web app's pages and the admin, as the API's requests (the newcomer QA pass: user=-)."""
    caplog.set_level(logging.INFO, logger="parley.access")
    client = Client(HTTP_HOST=member.realm.host)
    client.force_login(member)
    assert client.get("/account/").status_code == 200
    owner.is_staff = owner.is_superuser = True  # as bootstrap_demo makes the demo's owner
    owner.save()
    client.force_login(owner)
    assert client.get("/admin/").status_code == 200
    client.logout()
    assert client.get("/login/").status_code == 200
    account, admin, login = [r.getMessage() for r in caplog.records if r.name == "parley.access"][-3:]
    assert ("GET /account/ 200" in account, f"user={member.id} " in account) == (True, True)
    assert ("GET /admin/ 200" in admin, f"user={owner.id} " in admin) == (True, True)
    assert ("GET /login/ 200" in login, "user=- " in login) == (True, True)


def test_disallowed_host_is_json_400(realm):
    response = ApiClient(host="evil.example.org").get("/users/me")
    assert_error(response, 400, "BAD_REQUEST", "Bad Request")


@pytest.mark.parametrize("accept", ["text/html", "application/xml", "application/json; indent=4"])
def test_the_answer_is_json_whatever_the_accept_header_asks(client_for, member, accept):
    # As Zulip's: a browser's Accept header is no reason to refuse (REST framework's default is a 406).
    response = client_for(member).get("/users/me", HTTP_ACCEPT=accept)
    assert assert_success(response)["user_id"] == member.id
    assert response["Content-Type"] == "application/json"
    assert b"\n" not in response.content


def test_a_disallowed_host_is_one_warning_line_in_the_log(realm):
    # Django logs it as an ERROR with a traceback: anyone could fill the operator's log with them.
    (handler,) = [h for h in logging.getLogger().handlers if getattr(h, "name", None) == "stderr"]
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        ApiClient(host="evil.example.org").get("/users/me")
    finally:
        handler.setStream(previous)
    (line,) = [line for line in stream.getvalue().splitlines() if "django.security" in line]
    assert " WARNING " in line
    assert "Invalid HTTP_HOST header: 'evil.example.org'" in line
    assert "Traceback" not in stream.getvalue()
