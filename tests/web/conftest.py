"""Shared helpers of the sign-in page tests: browsers (Django's test client, with CSRF checks as a
browser meets them) on an organization's host, and invitation links."""

import re

import pytest
from django.test import Client

from apps.invites.actions.invites import do_create_multiuse_invite
from apps.invites.actions.welcome import do_create_welcome_bot

PASSWORD = "a long and unusual passphrase 47"


def browser(host: str = "testserver") -> Client:
    """A browser: CSRF tokens are checked, as for a real one."""
    return Client(enforce_csrf_checks=True, HTTP_HOST=host)


def csrf_token(page) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())[1]


def submit(client: Client, path: str, data: dict, *, page=None):
    """Post a form the way a browser does: with the token of the page it was shown on."""
    page = page if page is not None else client.get(path)
    return client.post(path, {"csrfmiddlewaretoken": csrf_token(page), **data})


def join_path(invite) -> str:
    return f"/join/{invite.key}/"


@pytest.fixture
def welcome_bot(realm):
    return do_create_welcome_bot(realm)


@pytest.fixture
def invite(realm, admin):
    return do_create_multiuse_invite(realm, acting_user=admin)
