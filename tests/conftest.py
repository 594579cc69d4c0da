from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from apps.core import ratelimit
from apps.core.redis_client import get_redis, redis_breaker
from apps.events import publish
from apps.events.backends import _backend_for, get_backend
from apps.events.credentials import credential_cache
from apps.events.registry import adapt_event, shows_event
from apps.groups.models import UserGroup
from apps.groups.selectors import system_groups
from apps.realms import selectors as realm_selectors
from apps.realms.selectors import realm_cache
from apps.users import access
from apps.users.models import BotType, Role
from tests.api import ApiClient, api_for, assert_success
from tests.factories import (
    BotFactory,
    RealmFactory,
    UserFactory,
    create_group,
    create_stream,
    events_committed_so_far,
)
from tests.server import start_server


def reset_process_state() -> None:
    """Forget the rate limits, event queues and caches that live in this process (or under this
    worker's Redis prefix)."""
    _backend_for.cache_clear()
    access._is_members_group.cache_clear()
    credential_cache.clear()
    realm_cache.clear()
    realm_selectors._rendered_description.cache_clear()
    ratelimit._in_process.reset_all()
    ratelimit._leases.forget()
    redis_breaker.reset()
    publish._undropped_credentials.discard()
    if settings.REDIS_URL:
        client = get_redis()
        keys = list(client.scan_iter(f"{settings.REDIS_KEY_PREFIX}:*", count=1000))
        if keys:
            client.delete(*keys)
    else:
        cache.clear()  # Django's cache in this process's memory (with Redis: under the prefix, above)


@pytest.fixture(autouse=True)
def _fresh_state():
    """Every test starts from no rate limits, event queues or cached organizations and credentials."""
    reset_process_state()


@pytest.fixture
def redis_down(settings):
    """Settings pointing at a Redis that refuses connections: a real closed port, not a mock."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": settings.REDIS_URL,
            "OPTIONS": {"CONNECTION_POOL_KWARGS": settings.REDIS_CONNECTION_KWARGS},
        }
    }


@pytest.fixture(params=["in_process", "redis"])
def rate_limit_backend(request, settings):
    """Run the test with the in-process limiter, then with Redis (skipped without REDIS_URL)."""
    if request.param == "redis" and not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    if request.param == "in_process":
        settings.REDIS_URL = ""
    return request.param


@pytest.fixture(params=["memory", "redis"])
def event_backend(request, settings):
    """Run the test with event queues in memory, then in Redis (skipped without REDIS_URL)."""
    if request.param == "redis" and not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    if request.param == "memory":
        settings.REDIS_URL = ""
    return get_backend()


@pytest.fixture
def live_server_factory(tmp_path):
    """`live_server_factory(**env)`: a real server process; all are stopped after the test."""
    servers = []

    def start(**env):
        server = start_server(tmp_path, **env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def realm(db):
    """The default organization (reached on the bare host)."""
    return RealmFactory(string_id="", name="Parley Test")


@pytest.fixture
def other_realm(db):
    return RealmFactory(string_id="zephyr", name="Zephyr")


@pytest.fixture
def owner(realm):
    return UserFactory(realm=realm, role=Role.OWNER, full_name="Olivia Owner", delivery_email="owner@example.com")


@pytest.fixture
def admin(realm):
    return UserFactory(realm=realm, role=Role.ADMINISTRATOR, full_name="Adam Admin", delivery_email="admin@example.com")


@pytest.fixture
def moderator(realm):
    return UserFactory(realm=realm, role=Role.MODERATOR, full_name="Mona Moderator", delivery_email="mod@example.com")


@pytest.fixture
def member(realm):
    return UserFactory(realm=realm, role=Role.MEMBER, full_name="Mel Member", delivery_email="member@example.com")


@pytest.fixture
def guest(realm):
    return UserFactory(realm=realm, role=Role.GUEST, full_name="Gus Guest", delivery_email="guest@example.com")


@pytest.fixture
def bot(realm, member):
    return BotFactory(realm=realm, bot_owner=member, bot_type=BotType.GENERIC, full_name="Helper Bot")


@pytest.fixture
def foreign_user(other_realm):
    return UserFactory(realm=other_realm, role=Role.OWNER, full_name="Zed Foreign", delivery_email="member@example.com")


@pytest.fixture
def client_for():
    """`client_for(user)`: an API client authenticated as `user`, sending form-encoded bodies."""
    return ApiClient


@pytest.fixture
def anonymous():
    return ApiClient()


@pytest.fixture
def staff(owner):
    """A browser session of the owner as a staff user, for the Django admin."""
    owner.is_staff = owner.is_superuser = True
    owner.save()
    client = Client()
    client.force_login(owner)
    return client


ROLE_FIXTURES = ["owner", "admin", "moderator", "member", "guest", "bot"]


@pytest.fixture(params=ROLE_FIXTURES)
def any_role_user(request):
    return request.getfixturevalue(request.param)


@pytest.fixture
def queue_of(event_backend):
    """`queue_of(user, event_types=None, **params)`: registers a queue over POST /register and returns a
    function giving its new events (without their ids), read over GET /events."""

    def make(user, event_types=None, **params):
        api = ApiClient(user)
        types = list(event_types) if event_types is not None else None
        queue_id = assert_success(api.post("/register", {"event_types": types, **params}))["queue_id"]
        seen = [-1]

        def events():
            body = assert_success(
                api.get("/events", {"queue_id": queue_id, "last_event_id": seen[0], "dont_block": True})
            )
            if body["events"]:
                seen[0] = body["events"][-1]["id"]
            return [{k: v for k, v in e.items() if k != "id"} for e in body["events"]]

        return events

    return make


@pytest.fixture
def capture_events(settings, django_capture_on_commit_callbacks):
    """`with capture_events(user, ..., **register_params) as received:` registers a queue for each
    user (POST /register, in this process's memory) before the block, runs the block's commit
    callbacks at its end (events leave on commit), then `received[user.id]` lists what each queue
    got, as GET /events gives it (only the events it shows), without the ids the queue numbered them with."""
    settings.REDIS_URL = ""

    @contextmanager
    def capture(*users, **register_params) -> Iterator[dict[int, list[dict]]]:
        events_committed_so_far()
        queue_ids = {
            user.id: assert_success(api_for(user).post("/register", register_params))["queue_id"] for user in users
        }
        received: dict[int, list[dict]] = {}
        with django_capture_on_commit_callbacks(execute=True):
            yield received
        for user in users:
            if queue_ids[user.id] not in get_backend().queue_ids_of_user(user.id):
                received[user.id] = []  # deleted (its user deactivated): nothing can be read from it
                continue
            # Read the queue directly: GET /events answers from another thread (another connection).
            start = get_backend().get_events(queue_ids[user.id], user.id, -1)
            shown = [event for event in start.events if shows_event(event, start.options)]
            events = [adapt_event(event, start.options, queue_ids[user.id]) for event in shown]
            received[user.id] = [{k: v for k, v in e.items() if k != "id"} for e in _flatten(events)]

    return capture


def _flatten(events: list) -> list[dict]:
    return [each for event in events for each in (event if isinstance(event, list) else [event])]


@pytest.fixture
def make_stream(realm):
    """`make_stream(name, *subscribers, private=False, history_public=None, in_realm=None,
    creator=None, description="")`: a channel as the actions create it (tests.factories)."""

    def make(name, *subscribers, in_realm=None, **options):
        return create_stream(in_realm or realm, name, *subscribers, **options)

    return make


@pytest.fixture
def make_group():
    """`make_group(creator, name, members=[...], **options)`: a group made through the action."""
    return create_group


@pytest.fixture
def sys_groups(realm) -> dict[str, UserGroup]:
    """The default organization's system groups by name (role:members, ...)."""
    return system_groups(realm.id)
