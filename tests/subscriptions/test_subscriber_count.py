"""A channel's maintained subscriber_count: the active subscriptions of active users, kept by
every change that moves it, and what the lists and events say."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions, bulk_remove_subscriptions
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import subscriber_ids_by_stream
from apps.users.actions.activation import do_deactivate_user, do_reactivate_user
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory


def stored(stream: Stream) -> int:
    return Stream.objects.get(id=stream.id).subscriber_count


def assert_counts_right(*streams: Stream) -> None:
    """The maintained count is the count of the rows, for each channel."""
    rows = subscriber_ids_by_stream([s.id for s in streams])
    assert {s.id: stored(s) for s in streams} == {s.id: len(rows[s.id]) for s in streams}


def test_the_count_follows_subscribes_unsubscribes_and_activation(realm, owner, member, make_stream):
    others = [UserFactory(realm=realm) for _ in range(3)]
    public = make_stream("public", member, *others)
    private = make_stream("private", member, others[0], private=True)
    assert (stored(public), stored(private)) == (4, 2)

    bulk_add_subscriptions(realm, [public, private], [owner, *others], acting_user=None)  # some already in
    assert (stored(public), stored(private)) == (5, 5)
    bulk_remove_subscriptions(realm, [member, others[1]], [public], acting_user=None)
    assert (stored(public), stored(private)) == (3, 5)
    bulk_remove_subscriptions(realm, [member], [public], acting_user=None)  # not subscribed: nothing moves
    assert stored(public) == 3

    # A deactivated user leaves the counts of their channels (their rows stay), and comes back.
    do_deactivate_user(others[0], acting_user=owner)
    assert (stored(public), stored(private)) == (2, 4)
    assert_counts_right(public, private)
    bulk_remove_subscriptions(realm, [others[0]], [public], acting_user=None)  # a deactivated user leaves
    assert stored(public) == 2
    do_reactivate_user(others[0], acting_user=owner)
    assert (stored(public), stored(private)) == (2, 5)
    bulk_add_subscriptions(realm, [public], [member], acting_user=None)  # a rejoin reactivates the row
    assert stored(public) == 3
    assert_counts_right(public, private)

    # Subscribing counts from the rows it read and the users' state in the database, not in memory.
    stale = UserFactory(realm=realm)
    type(stale).objects.filter(id=stale.id).update(is_active=False)
    bulk_add_subscriptions(realm, [public, private], [stale, owner], acting_user=None)
    assert (stored(public), stored(private), public.subscriber_count) == (3, 5, 3)
    assert_counts_right(public, private)


def test_deactivating_a_user_with_bots_counts_each_once(realm, owner, member, make_stream):
    bot = UserFactory(realm=realm, bot_type=1, bot_owner=member)
    stream = make_stream("with bots", owner, member, bot)
    assert stored(stream) == 3
    do_deactivate_user(member, acting_user=owner)  # their bot goes with them
    assert stored(stream) == 1
    assert_counts_right(stream)


def test_lists_and_events_say_the_maintained_count(realm, member, make_stream, capture_events):
    others = [UserFactory(realm=realm) for _ in range(2)]
    stream = make_stream("counted", member, *others)
    [shape] = [s for s in assert_success(ApiClient(member).get("/streams"))["streams"] if s["stream_id"] == stream.id]
    assert shape["subscriber_count"] == 3
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": ["subscription", "stream"]}))
    [sub] = [s for s in state["subscriptions"] if s["stream_id"] == stream.id]
    assert sub["subscriber_count"] == 3
    assert "subscribers" not in sub
    [listed] = [s for s in state["streams"] if s["stream_id"] == stream.id]
    assert listed["subscriber_count"] == 3

    newcomer = UserFactory(realm=realm)
    with capture_events(newcomer) as received:
        bulk_add_subscriptions(realm, [stream], [newcomer], acting_user=None)
    [added] = [e for e in received[newcomer.id] if e["type"] == "subscription" and e["op"] == "add"]
    assert added["subscriptions"][0]["subscriber_count"] == 4
    assert sorted(added["subscriptions"][0]["subscribers"]) == sorted([member.id, newcomer.id, *(u.id for u in others)])


def test_a_new_private_channel_is_announced_then_its_subscribers(realm, admin, member, capture_events):
    with capture_events(admin) as received:
        assert_success(
            ApiClient(member).post(
                "/users/me/subscriptions",
                {"subscriptions": [{"name": "new secret"}], "invite_only": True},
            )
        )
    # As Zulip's: announced as made (no subscribers yet), then its subscribers (peer_add): a client
    # keeping the count from events counts 1, as a fresh register says.
    [created] = [e for e in received[admin.id] if e["type"] == "stream" and e["op"] == "create"]
    assert created["streams"][0]["subscriber_count"] == 0
    [peer_add] = [e for e in received[admin.id] if e["type"] == "subscription" and e["op"] == "peer_add"]
    assert peer_add["user_ids"] == [member.id]
    stream_id = created["streams"][0]["stream_id"]
    assert assert_success(ApiClient(admin).get(f"/streams/{stream_id}"))["stream"]["subscriber_count"] == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
def test_a_deactivation_locks_the_channels_in_id_order_before_counting(realm, owner, member, make_stream):
    """A deactivation recounts its channels with an UPDATE, which locks their rows in the order it
    finds them; subscribing (a new person into the default channels) locks them in id order. The two
    deadlocked under load (the directory QA pass: 503s); the recount now locks in id order first."""
    channels = [make_stream(name, member) for name in ("b-channel", "a-channel", "c-channel")]
    with CaptureQueriesContext(connection) as queries:
        do_deactivate_user(member, acting_user=owner)
    table = Stream._meta.db_table
    statements = [q["sql"] for q in queries.captured_queries if f'"{table}"' in q["sql"]]
    locking = next(i for i, sql in enumerate(statements) if "FOR UPDATE" in sql)
    counting = next(i for i, sql in enumerate(statements) if sql.startswith(f'UPDATE "{table}"'))
    assert locking < counting
    assert "ORDER BY 1 ASC FOR UPDATE" in statements[locking]  # the id, the one column selected
    assert f"IN ({', '.join(str(c.id) for c in sorted(channels, key=lambda c: c.id))})" in statements[locking]
    assert [stored(c) for c in channels] == [0, 0, 0]
