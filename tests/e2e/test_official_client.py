"""The official `zulip` Python client from PyPI, unchanged, against a real server process."""

import uuid

import pytest
import requests
import zulip
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.factories import CustomProfileFieldFactory

pytestmark = pytest.mark.e2e


def test_client_reads_and_changes_users(parley_server, people):
    realm, owner, member = people
    field = CustomProfileFieldFactory(realm=realm, name="Team")
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=parley_server.url)
    assert client.zulip_version
    assert client.feature_level == 496

    profile = client.get_profile()
    assert profile["result"] == "success"
    assert (profile["user_id"], profile["full_name"], profile["role"]) == (owner.id, "Olive Owner", 100)

    members = client.get_members()
    assert {m["user_id"] for m in members["members"]} == {owner.id, member.id}

    result = client.update_user_by_id(
        member.id, full_name="Mick Renamed", role=300, profile_data=[{"id": field.id, "value": "Platform"}]
    )
    assert result == {"result": "success", "msg": ""}

    user = client.get_user_by_id(member.id, include_custom_profile_fields=True)["user"]
    assert (user["full_name"], user["role"]) == ("Mick Renamed", 300)
    assert user["profile_data"] == {str(field.id): {"value": "Platform", "rendered_value": "<p>Platform</p>"}}
    member.refresh_from_db()
    assert member.full_name == "Mick Renamed"


def test_client_sees_errors_in_the_envelope(parley_server, people):
    _, owner, member = people
    client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=parley_server.url)
    result = client.update_user_by_id(owner.id, full_name="Nope")
    assert (result["result"], result["code"], result["msg"]) == ("error", "BAD_REQUEST", "Insufficient permission")
    bad = zulip.Client(email=member.delivery_email, api_key="A" * 32, site=parley_server.url)
    assert bad.get_profile()["code"] == "UNAUTHORIZED"


def test_fetch_api_key_then_use_it(parley_server, people):
    _, _, member = people
    # The server hashes with Django's default hasher, not the tests' fast one.
    member.password = PBKDF2PasswordHasher().encode("a good passphrase", PBKDF2PasswordHasher().salt())
    member.save()
    response = requests.post(
        f"{parley_server.url}/api/v1/fetch_api_key",
        data={"username": member.delivery_email, "password": "a good passphrase"},
        timeout=10,
    )
    assert response.status_code == 200
    key = response.json()["api_key"]
    client = zulip.Client(email=member.delivery_email, api_key=key, site=parley_server.url)
    assert client.get_profile()["user_id"] == member.id


def test_real_server_headers_and_errors(parley_server, people):
    _, owner, _ = people
    response = requests.get(
        f"{parley_server.url}/api/v1/users/me", auth=(owner.delivery_email, owner.api_key), timeout=10
    )
    assert response.status_code == 200
    assert str(uuid.UUID(response.headers["X-Request-Id"], version=4)) == response.headers["X-Request-Id"]
    assert response.headers["X-RateLimit-Limit"] == "200"
    missing = requests.get(f"{parley_server.url}/api/v1/nonexistent", timeout=10)
    assert missing.status_code == 404
    assert missing.json() == {"result": "error", "msg": "Not Found", "code": "BAD_REQUEST"}
    # The access log line carries the request id.
    assert response.headers["X-Request-Id"] in parley_server.log()
