"""The Host header picks the organization; nothing crosses between organizations."""

import pytest
from django.test import RequestFactory

from apps.core.api import begin_api_request
from apps.core.errors import InvalidSubdomainError
from apps.realms.selectors import subdomain_for_host
from tests.api import ApiClient, assert_error, assert_success


@pytest.mark.parametrize(
    ("host", "string_id"),
    [
        ("testserver", ""),
        ("TestServer:8000", ""),
        ("localhost", ""),
        ("localhost:9000", ""),
        ("127.0.0.1:8000", ""),
        ("[::1]:8000", ""),
        ("zephyr.testserver", "zephyr"),
        ("Zephyr.TestServer:443", "zephyr"),
        ("unrelated.example.com", ""),
    ],
)
def test_subdomain_for_host(host, string_id):
    assert subdomain_for_host(host) == string_id


def test_unknown_subdomain_is_404(realm):
    for path in ("/server_settings", "/users/me"):
        assert_error(ApiClient(host="nowhere.testserver").get(path), 404, "NONEXISTENT_SUBDOMAIN", "Invalid subdomain")


def test_an_anonymous_request_to_an_unknown_organization_is_refused_first(realm):
    """As an authenticated one (async views' serve_async_api(authenticated=False) included)."""
    with pytest.raises(InvalidSubdomainError):
        begin_api_request(RequestFactory().get("/api/v1/x", HTTP_HOST="nowhere.testserver"), authenticated=False)
    assert begin_api_request(RequestFactory().get("/api/v1/x"), authenticated=False) is None


def test_subdomain_organization_is_served(member, foreign_user):
    body = assert_success(ApiClient(host="zephyr.testserver").get("/server_settings"))
    assert body["realm_name"] == "Zephyr"
    assert body["realm_url"] == "http://zephyr.testserver"
    body = assert_success(ApiClient(host="localhost").get("/server_settings"))
    assert body["realm_name"] == "Parley Test"


def test_no_organization_at_all_is_404(db):
    assert_error(ApiClient().get("/server_settings"), 404, "NONEXISTENT_SUBDOMAIN")


@pytest.mark.django_db(transaction=True)
def test_organization_changes_are_seen_at_once_despite_the_cache(realm, member):
    from apps.realms.actions import do_change_realm_settings, do_set_realm_deactivated

    api = ApiClient()
    assert assert_success(api.get("/server_settings"))["realm_name"] == "Parley Test"
    do_change_realm_settings(realm, {"name": "Renamed"}, acting_user=None)
    assert assert_success(api.get("/server_settings"))["realm_name"] == "Renamed"
    do_set_realm_deactivated(realm, True, acting_user=None)
    assert_error(ApiClient(member).get("/users/me"), 401, "REALM_DEACTIVATED", "This organization has been deactivated")
