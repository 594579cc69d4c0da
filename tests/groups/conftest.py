from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from apps.events.backends import get_backend
from apps.events.registry import adapt_event
from apps.groups.actions import check_add_user_group
from apps.groups.models import UserGroup
from apps.groups.selectors import system_groups
from tests.api import ApiClient, assert_success


def client_in_own_realm(user) -> ApiClient:
    """An API client for `user` on their organization's host."""
    string_id = user.realm.string_id
    return ApiClient(user, host=f"{string_id}.testserver" if string_id else "testserver")


@pytest.fixture
def make_group():
    """`make_group(creator, name, members=[...], **options)`: a group made through the action."""

    def make(creator, name: str, members=(), **options) -> UserGroup:
        member_ids = [m.id for m in members]
        return check_add_user_group(creator.realm, name, member_ids, acting_user=creator, **options)

    return make


@pytest.fixture
def sys_groups(realm) -> dict[str, UserGroup]:
    """The default organization's system groups by name (role:members, ...)."""
    return system_groups(realm.id)


@pytest.fixture
def queues(settings):
    """`(register, received)`: `register(user, **params)` makes a queue over the API (in this
    process's memory); `received(user, queue_id)` is what it got, as GET /events would give it."""
    settings.REDIS_URL = ""

    def register(user, **params) -> str:
        return assert_success(client_in_own_realm(user).post("/register", params))["queue_id"]

    def received(user, queue_id: str) -> list[dict]:
        start = get_backend().get_events(queue_id, user.id, -1)
        return [adapt_event(event, start.options) for event in start.events]

    return register, received


@pytest.fixture
def capture_events(queues, django_capture_on_commit_callbacks):
    """`with capture_events(user, ..., **register_params) as received:`: a queue for each user
    before the block; after it, `received[user.id]` lists what each queue got. Events leave on
    commit: the block's commit callbacks are run at its end."""
    register, received_by = queues

    @contextmanager
    def capture(*users, **register_params) -> Iterator[dict[int, list[dict]]]:
        queue_ids = {user.id: register(user, **register_params) for user in users}
        received: dict[int, list[dict]] = {}
        with django_capture_on_commit_callbacks(execute=True):
            yield received
        for user in users:
            received[user.id] = received_by(user, queue_ids[user.id])

    return capture
