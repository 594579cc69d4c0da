from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from apps.events.backends import get_backend
from apps.events.registry import adapt_event
from apps.groups.actions import check_add_user_group
from apps.groups.models import UserGroup
from apps.groups.selectors import system_groups
from tests.api import ApiClient, assert_success


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
def capture_events(settings, django_capture_on_commit_callbacks):
    """`with capture_events(user, ..., **register_params) as received:`: queues registered over the
    API for each user before the block; after it, `received[user.id]` lists what each queue got, as
    GET /events would give it. Events leave on commit: the block's commit callbacks are run."""
    settings.REDIS_URL = ""  # the in-process queues of this test process

    @contextmanager
    def capture(*users, **register_params) -> Iterator[dict[int, list[dict]]]:
        queues = {
            user.id: assert_success(ApiClient(user).post("/register", register_params))["queue_id"] for user in users
        }
        received: dict[int, list[dict]] = {}
        with django_capture_on_commit_callbacks(execute=True):
            yield received
        for user in users:
            start = get_backend().get_events(queues[user.id], user.id, -1)
            received[user.id] = [adapt_event(event, start.options) for event in start.events]

    return capture
