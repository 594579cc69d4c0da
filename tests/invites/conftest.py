"""Shared helpers of the invitation tests: links made over the API, the organization's setting of
who may make them, and a snapshot of every row the invitation endpoints write."""

import re

import pytest

from apps.events.models import OutboxEvent
from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.selectors import system_groups
from apps.invites.models import MultiuseInvite
from apps.realms.models import RealmAuditLog
from tests.api import api_for, assert_success

api = api_for  # an API client of a user, on their organization's host

LINK_RE = re.compile(r"(?P<realm_url>https?://[^/]+)/join/(?P<key>[a-z2-7]{32})/")


def create_link(user, **params) -> str:
    """POST /invites/multiuse; the link."""
    return assert_success(api(user).post("/invites/multiuse", params))["invite_link"]


def invite_of(link: str) -> MultiuseInvite:
    return MultiuseInvite.objects.get(key=LINK_RE.fullmatch(link)["key"])


def listed(user) -> list[dict]:
    return assert_success(api(user).get("/invites"))["invites"]


def let_create_links(realm, group_name: str) -> None:
    """The organization's create_multiuse_invite_group becomes this system group."""
    group_id = system_groups(realm.id)[group_name].id
    do_change_realm_permission_group_setting(realm, "create_multiuse_invite_group", group_id, acting_user=None)


def db_state() -> dict:
    """Every row the invitation endpoints write: equal before and after a refused request."""
    return {
        "invites": list(MultiuseInvite.objects.order_by("id").values()),
        "streams": list(MultiuseInvite.streams.through.objects.order_by("id").values()),
        "groups": list(MultiuseInvite.groups.through.objects.order_by("id").values()),
        "audit": RealmAuditLog.objects.count(),
        "events": OutboxEvent.objects.count(),
    }


@pytest.fixture
def members_create_links(realm):
    let_create_links(realm, "role:members")
