"""GET /avatar/{user_id_or_email}[/medium]: Zulip's redirect to a person's picture, with API
credentials (the apps) or the browser's session; what it answers for someone the requester may not
look up is Gravatar's picture of what was asked, as Zulip's, whoever it is."""

import hashlib

import pytest
from django.test import Client

from apps.realms.models import EmailVisibility
from apps.users.models import AvatarSource
from tests.api import ApiClient, assert_error
from tests.factories import UserFactory


def gravatar(text: str, *, medium: bool = False) -> str:
    digest = hashlib.md5(text.lower().encode(), usedforsecurity=False).hexdigest()
    return f"https://secure.gravatar.com/avatar/{digest}?d=identicon{'&s=500' if medium else ''}&version=1"


def redirect_of(client: ApiClient, path: str) -> str:
    response = client.client.get(path, **client.headers)
    assert response.status_code == 302, response.content
    return response["Location"]


@pytest.fixture(autouse=True)
def gravatar_on(settings):
    settings.ENABLE_GRAVATAR = True


def test_by_id_or_email_it_is_the_persons_picture(member, admin):
    admin.avatar_source, admin.avatar_hash, admin.avatar_version = AvatarSource.UPLOADED, "a" * 32, 3
    admin.save()
    uploaded = f"/user_avatars/{admin.realm_id}/{'a' * 32}.png?version=3"
    client = ApiClient(member)
    assert redirect_of(client, f"/avatar/{admin.id}") == uploaded
    assert redirect_of(client, f"/avatar/{admin.delivery_email}") == uploaded
    assert redirect_of(client, f"/avatar/{admin.id}/medium") == uploaded.replace(".png", "-medium.png")
    # The query string is passed on (Zulip's clients add their own, e.g. a size).
    assert redirect_of(client, f"/avatar/{admin.id}?s=30") == f"{uploaded}&s=30"
    assert redirect_of(client, f"/avatar/{member.id}") == gravatar(member.delivery_email)
    assert redirect_of(client, f"/avatar/{member.id}/medium") == gravatar(member.delivery_email, medium=True)


def test_a_browser_session_may_ask_too(member, admin):
    browser = Client(raise_request_exception=False)
    browser.force_login(member)
    response = browser.get(f"/avatar/{admin.id}")
    assert (response.status_code, response["Location"]) == (302, gravatar(admin.delivery_email))


def test_nobody_unauthenticated(member):
    assert_error(Client().get(f"/avatar/{member.id}"), 401, "UNAUTHORIZED")
    assert_error(ApiClient(member, api_key="x" * 32).client.get(f"/avatar/{member.id}"), 401, "UNAUTHORIZED")


def test_who_cannot_be_looked_up_is_the_picture_of_what_was_asked(member, foreign_user, realm):
    """Another organization's id, an unknown id or address, an address hidden from the requester:
    Gravatar's picture of the text asked for, never the person's (nothing tells they exist)."""
    hidden = UserFactory(realm=realm, email_address_visibility=EmailVisibility.ADMINS)
    hidden.avatar_source, hidden.avatar_hash = AvatarSource.UPLOADED, "b" * 32
    hidden.save()
    client = ApiClient(member)
    for asked in (str(foreign_user.id), "999999", "9" * 40, foreign_user.delivery_email, hidden.delivery_email):
        assert redirect_of(client, f"/avatar/{asked}") == gravatar(asked)
    # Its id still finds it: an id is no secret.
    assert redirect_of(client, f"/avatar/{hidden.id}").startswith(f"/user_avatars/{realm.id}/{'b' * 32}.png")


@pytest.mark.parametrize("asked", ["%00", "someone", "%D9%A1%D9%A2", "a%00b@example.com"])
def test_what_is_neither_an_id_nor_an_email_address_is_refused(member, asked):
    client = ApiClient(member)
    response = client.client.get(f"/avatar/{asked}", **client.headers)
    assert_error(response, 400, "BAD_REQUEST", "Invalid user ID or email address")


def test_only_get_and_head(member):
    client = ApiClient(member)
    assert_error(client.client.post(f"/avatar/{member.id}", **client.headers), 405, "BAD_REQUEST")
    assert client.client.head(f"/avatar/{member.id}", **client.headers).status_code == 302
