"""Query counts that must not grow with channels, subscribers or users (pinned)."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.events.models import OutboxEvent
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.subscriptions.models import Stream, Subscription
from apps.users.actions.create_user import do_create_user
from apps.users.models import Role, User
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory


def count_queries(call) -> int:
    with CaptureQueriesContext(connection) as queries:
        call()
    return len(queries)


def grow(realm, make_stream, member, *, channels: int, subscribers: int) -> None:
    users = [UserFactory(realm=realm) for _ in range(subscribers)]
    for n in range(channels):
        make_stream(f"channel {len(users)}-{n}", member, *users)
        make_stream(f"private {len(users)}-{n}", *users, private=True)


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/users/me/subscriptions", {"include_subscribers": True}),
        ("/streams", {}),
    ],
)
def test_channel_lists_take_a_fixed_number_of_queries(realm, member, make_stream, path, params):
    api = ApiClient(member)
    grow(realm, make_stream, member, channels=1, subscribers=1)
    assert_success(api.get(path, params))  # caches warm (the organization by host)
    small = count_queries(lambda: assert_success(api.get(path, params)))
    grow(realm, make_stream, member, channels=5, subscribers=8)
    assert count_queries(lambda: assert_success(api.get(path, params))) == small


def test_register_takes_a_fixed_number_of_queries(realm, member, make_stream, event_backend):
    api = ApiClient(member)
    params = {"fetch_event_types": ["subscription", "stream", "user_topic"], "include_subscribers": "true"}
    grow(realm, make_stream, member, channels=1, subscribers=1)
    assert_success(api.post("/register", params))  # caches warm (the organization by host)
    small = count_queries(lambda: assert_success(api.post("/register", params)))
    grow(realm, make_stream, member, channels=5, subscribers=8)
    body = {}
    large = count_queries(lambda: body.update(assert_success(api.post("/register", params))))
    assert large == small
    assert len(body["subscriptions"]) == 6


def test_subscribing_a_thousand_users_is_a_bulk_operation(realm, admin, make_stream):
    stream = make_stream("everyone")
    User.objects.bulk_create(
        User(realm=realm, delivery_email=f"bulk{n}@example.com", full_name=f"Bulk {n}", api_key=f"{n:032d}")
        for n in range(1000)
    )
    users = list(User.objects.filter(realm=realm, delivery_email__startswith="bulk"))
    with CaptureQueriesContext(connection) as queries:
        subscribed, already = bulk_add_subscriptions(realm, [stream], users, acting_user=admin)
    assert (len(subscribed), len(already)) == (1000, 0)
    assert Subscription.objects.filter(stream=stream, active=True).count() == 1000
    # Inserts are batched by the database's limit on parameters (SQLite: 999); everything else,
    # events included, is a handful of queries.
    inserts = [q for q in queries if q["sql"].startswith('INSERT INTO "subscriptions_subscription"')]
    assert len(queries) - len(inserts) <= 25, [q["sql"][:80] for q in queries]
    assert len(inserts) <= 15


SUBSCRIBER_READ = (
    'SELECT "subscriptions_subscription"."stream_id" AS "stream_id", "subscriptions_subscription"."user_id"'
)
PEOPLE_READ = 'SELECT "users_user"."id" AS "id", "users_user"."role" AS "role" FROM'


def reads_subscribers(sql: str) -> bool:
    """A channel's subscribers read (its active subscriptions of active users), not only some users'."""
    return sql.startswith(SUBSCRIBER_READ) and 'INNER JOIN "users_user"' in sql


@pytest.mark.parametrize(("private", "people_reads"), [(False, 0), (True, 1)])
def test_joining_a_channel_reads_its_subscribers_once(realm, admin, member, make_stream, private, people_reads):
    """What joining a channel costs grows with its subscribers (subscription/add names them): they
    are read once, not once per event. Who sees a private channel is worked out from the
    organization's people, read once; a public one is seen by everyone but the guests not
    subscribed: its people are not read (recipients and shapes: test_events.py)."""
    stream = make_stream("everyone", admin, *(UserFactory(realm=realm) for _ in range(3)), private=private)
    with CaptureQueriesContext(connection) as queries:
        bulk_add_subscriptions(realm, [stream], [member], acting_user=admin)
    sql = [q["sql"] for q in queries]
    reads = (sum(map(reads_subscribers, sql)), sum(s.startswith(PEOPLE_READ) for s in sql))
    assert reads == (1, people_reads), sql
    assert not [s for s in sql if "COUNT(" in s]  # the new subscriber_count from what was read
    stream.refresh_from_db()
    assert stream.subscriber_count == 5


def test_a_person_created_into_default_channels_reads_none_of_their_people(realm, admin, make_stream):
    """Creating a person who joins default channels everyone is in costs the same however many are
    in them (issue 21): the person has no event queue yet, so their subscription/add (which names
    every subscriber) is not written, the channels' subscribers and people are not read, and the
    peer_add goes to everyone but the guests not subscribed, not to a list of everyone's ids."""
    people = [UserFactory(realm=realm) for _ in range(3)]
    stream = make_stream("everyone", admin, *people)
    Stream.objects.filter(id=stream.id).update(is_default=True)
    guest = UserFactory(realm=realm, role=Role.GUEST)
    written_before = OutboxEvent.objects.order_by("id").last().id
    with CaptureQueriesContext(connection) as queries:
        person = do_create_user(realm, "new@example.com", "New Person", acting_user=None)
    sql = [q["sql"] for q in queries]
    assert not [s for s in sql if reads_subscribers(s) or s.startswith(PEOPLE_READ) or "COUNT(" in s], sql
    stream.refresh_from_db()
    assert stream.subscriber_count == 5  # admin, three people, the new person (the guest is not in it)
    events = OutboxEvent.objects.filter(event_type="subscription", id__gt=written_before)
    assert [(json.loads(e.payload)["op"], e.user_ids) for e in events] == [
        ("peer_add", {"everyone_except": sorted([guest.id, person.id])})
    ]
