"""The query counts of register, the user and channel lists, a send to a big channel and
mark_all_as_read, pinned, and the same in a small organization and in one ten times bigger
(issue 21; benchmarks/register measures their time)."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.users.models import User
from tests.api import ApiClient, assert_success

# PostgreSQL numbers events at commit; SQLite as they are written (one more statement).
PINNED = {
    # The member has nothing unread: on PostgreSQL their unread messages' span is read, no more (with
    # unread messages, then the grouped query, its plan set and reset); SQLite reads the rows.
    "register": {"postgresql": 42, "sqlite": 42},
    "users": {"postgresql": 1, "sqlite": 1},
    "streams": {"postgresql": 4, "sqlite": 4},
    # (One of them: whether someone following the topic is to be emailed, apps.email_notifications.)
    "send": {"postgresql": 14, "sqlite": 15},
    # One batch: where it ends (the unread index walked from where the last one ended), its UPDATE.
    "mark_all_as_read": {"postgresql": 7, "sqlite": 7},
}


def people(realm, count: int, start: int) -> list[User]:
    User.objects.bulk_create(
        User(realm=realm, delivery_email=f"p{n}@example.com", full_name=f"P {n}", api_key=f"{n:032d}")
        for n in range(start, start + count)
    )
    return list(User.objects.filter(realm=realm, delivery_email__startswith="p").order_by("id"))


def counts(api: ApiClient, stream) -> dict[str, int]:
    calls = {
        "register": lambda: api.post("/register"),
        "users": lambda: api.get("/users"),
        "streams": lambda: api.get("/streams"),
        "send": lambda: api.post("/messages", {"type": "stream", "to": stream.id, "topic": "t", "content": "hi"}),
        "mark_all_as_read": lambda: api.post("/mark_all_as_read"),
    }
    result = {}
    for name, call in calls.items():
        assert_success(call())  # warm: the organization's cache, the channel's first message
        with CaptureQueriesContext(connection) as queries:
            assert_success(call())
        result[name] = len(queries)
    return result


def test_query_counts_do_not_grow_with_the_organization(realm, member, make_stream, settings):
    settings.REDIS_URL = ""
    api = ApiClient(member)
    stream = make_stream("everyone", member)
    make_stream("a few", member)
    bulk_add_subscriptions(realm, [stream], people(realm, 10, 0), acting_user=None)
    small = counts(api, stream)
    bulk_add_subscriptions(realm, [stream], people(realm, 90, 10), acting_user=None)
    make_stream("more", *people(realm, 0, 0)[:50])
    large = counts(api, stream)
    assert large == small
    assert large == {name: by_vendor[connection.vendor] for name, by_vendor in PINNED.items()}
