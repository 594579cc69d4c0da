"""The queue backends (memory and Redis) behave alike: numbering, acknowledgement, waking, caps, expiry."""

import asyncio
import gc
import json
import time
import uuid

import pytest

from apps.core.errors import JsonableError
from apps.core.redis_client import get_redis
from apps.events.backends import (
    AlreadyPublished,
    BadEventQueueIdError,
    Everyone,
    PredecessorMissing,
    Waiters,
    get_backend,
)
from apps.events.credentials import CredentialCache, Identity
from apps.events.longpoll import long_poll
from apps.events.models import OutboxEvent
from apps.events.publish import publish_missed_events, send_event_on_commit
from apps.events.registry import QueueOptions
from apps.realms.selectors import realm_cache

ALICE, BOB = 101, 102


REALM = 1


def publish(
    backend, event_type: str, user_ids: list[int] | Everyone, seq: int | None = None, force=False, **fields
) -> int:
    """Publish as the organization's next event (or as event `seq`)."""
    if seq is None:
        seq = backend.last_published_seqs([REALM]).get(REALM, 0) + 1
    return backend.publish(REALM, seq, json.dumps({"type": event_type, **fields}), event_type, user_ids, force=force)


def ids(events: list[dict]) -> list[int]:
    return [event["id"] for event in events]


def test_events_are_numbered_per_queue_and_filtered_by_type(event_backend):
    everything = event_backend.create_queue(ALICE, 1, QueueOptions())
    users_only = event_backend.create_queue(ALICE, 1, QueueOptions(event_types=frozenset({"realm_user"})))
    publish(event_backend, "custom_profile_fields", [ALICE], fields=[])
    publish(event_backend, "realm_user", [ALICE], op="update")
    assert [(e["id"], e["type"]) for e in event_backend.get_events(everything, ALICE, -1).events] == [
        (0, "custom_profile_fields"),
        (1, "realm_user"),
    ]
    assert [(e["id"], e["type"]) for e in event_backend.get_events(users_only, ALICE, -1).events] == [(0, "realm_user")]


def test_acknowledged_events_are_deleted_and_others_redelivered(event_backend):
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    for _ in range(3):
        publish(event_backend, "realm_user", [ALICE])
    assert ids(event_backend.get_events(queue, ALICE, -1).events) == [0, 1, 2]
    # The response was lost: the same poll again gets the same events.
    assert ids(event_backend.get_events(queue, ALICE, -1).events) == [0, 1, 2]
    assert ids(event_backend.get_events(queue, ALICE, 1).events) == [2]
    assert ids(event_backend.get_events(queue, ALICE, 2).events) == []


def test_bad_acknowledgements_change_nothing(event_backend):
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    for _ in range(3):
        publish(event_backend, "realm_user", [ALICE])
    event_backend.get_events(queue, ALICE, 0)
    with pytest.raises(JsonableError, match="An event newer than -1 has already been pruned!"):
        event_backend.get_events(queue, ALICE, -1)
    with pytest.raises(JsonableError, match="Event 7 was not in this queue"):
        event_backend.get_events(queue, ALICE, 7)
    assert ids(event_backend.get_events(queue, ALICE, 0).events) == [1, 2]


def test_queues_belong_to_their_user(event_backend):
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    publish(event_backend, "realm_user", [ALICE])
    with pytest.raises(BadEventQueueIdError) as error:
        event_backend.get_events(queue, BOB, -1)
    assert error.value.to_dict() == {
        "result": "error",
        "msg": f"Bad event queue id: {queue}",
        "code": "BAD_EVENT_QUEUE_ID",
        "queue_id": queue,
    }
    with pytest.raises(BadEventQueueIdError):
        event_backend.delete_queue(queue, BOB)
    assert ids(event_backend.get_events(queue, ALICE, -1).events) == [0]


def test_deleted_and_unknown_queues(event_backend):
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    event_backend.delete_queue(queue, ALICE)
    for action in (
        lambda: event_backend.get_events(queue, ALICE, -1),
        lambda: event_backend.delete_queue(queue, ALICE),
        lambda: event_backend.get_events("nonexistent", ALICE, -1),
    ):
        with pytest.raises(BadEventQueueIdError):
            action()
    assert publish(event_backend, "realm_user", [ALICE]) == 0


def test_too_many_events_evicts_the_queue(event_backend, settings):
    settings.EVENT_QUEUE_MAX_EVENTS = 3
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    for _ in range(3):
        publish(event_backend, "realm_user", [ALICE])
    event_backend.get_events(queue, ALICE, -1)
    publish(event_backend, "realm_user", [ALICE])
    with pytest.raises(BadEventQueueIdError):
        event_backend.get_events(queue, ALICE, -1)
    assert event_backend.queue_ids_of_user(ALICE) == []


def test_too_many_queues_evicts_the_oldest(event_backend, settings):
    settings.EVENT_QUEUE_MAX_PER_USER = 2
    first = event_backend.create_queue(ALICE, 1, QueueOptions())
    time.sleep(0.01)
    second = event_backend.create_queue(ALICE, 1, QueueOptions())
    time.sleep(0.01)
    event_backend.get_events(first, ALICE, -1)  # polled: now the more recently used one
    third = event_backend.create_queue(ALICE, 1, QueueOptions())
    assert sorted(event_backend.queue_ids_of_user(ALICE)) == sorted([first, third])
    with pytest.raises(BadEventQueueIdError):
        event_backend.get_events(second, ALICE, -1)
    event_backend.create_queue(BOB, 1, QueueOptions())  # other users have their own cap
    assert len(event_backend.queue_ids_of_user(ALICE)) == 2


def test_too_many_queues_evicts_the_least_recently_used_whatever_the_lifespans(event_backend, settings):
    """A queue with a short lifespan that its client keeps polling is in use: an idle queue with
    a long lifespan goes first, though the short one expires sooner."""
    settings.EVENT_QUEUE_MAX_PER_USER = 2
    idle = event_backend.create_queue(ALICE, 1, QueueOptions(lifespan_secs=600))
    time.sleep(0.01)
    busy = event_backend.create_queue(ALICE, 1, QueueOptions(lifespan_secs=5))
    time.sleep(0.01)
    event_backend.get_events(busy, ALICE, -1)
    event_backend.create_queue(ALICE, 1, QueueOptions())
    assert busy in event_backend.queue_ids_of_user(ALICE)
    assert idle not in event_backend.queue_ids_of_user(ALICE)


def test_sweep_deletes_queues_idle_longer_than_their_lifespan(event_backend):
    short = event_backend.create_queue(ALICE, 1, QueueOptions(lifespan_secs=1))
    long = event_backend.create_queue(ALICE, 1, QueueOptions(lifespan_secs=600))
    assert event_backend.sweep(time.time()) == []
    time.sleep(1.1)
    assert event_backend.expired_queue_ids(time.time()) == [short]
    assert event_backend.sweep(time.time()) == [(short, ALICE)]
    assert event_backend.queue_ids_of_user(ALICE) == [long]
    with pytest.raises(BadEventQueueIdError):
        event_backend.get_events(short, ALICE, -1)


def test_events_already_in_the_initial_state_are_kept_out(event_backend):
    publish(event_backend, "realm_user", [ALICE], n=1)
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions(), awaiting_state=True)
    publish(event_backend, "realm_user", [ALICE], n=2)
    publish(event_backend, "realm_user", [ALICE], n=3)
    # The register snapshot contained the organization's events up to 4 (4 is still on its way).
    event_backend.exclude_events_through(queue, 4)
    publish(event_backend, "realm_user", [ALICE], n=4)
    publish(event_backend, "realm_user", [ALICE], n=5)
    assert [e["n"] for e in event_backend.get_events(queue, ALICE, -1).events] == [5]
    assert ids(event_backend.get_events(queue, ALICE, -1).events) == [2]  # numbering is not disturbed


def test_events_after_the_initial_state_stay(event_backend):
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions(), awaiting_state=True)
    publish(event_backend, "realm_user", [ALICE], n=1)
    publish(event_backend, "realm_user", [ALICE], n=2)
    event_backend.exclude_events_through(queue, 1)
    assert [e["n"] for e in event_backend.get_events(queue, ALICE, -1).events] == [2]


def test_events_are_published_in_order_and_once(event_backend):
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions())
    assert publish(event_backend, "realm_user", [ALICE], seq=1, n=1) == 1
    # Event 3 cannot overtake event 2: refused, nothing delivered.
    with pytest.raises(PredecessorMissing) as refused:
        publish(event_backend, "realm_user", [ALICE], seq=3, n=3)
    assert refused.value.last_seq == 1
    assert publish(event_backend, "realm_user", [ALICE], seq=2, n=2) == 1
    with pytest.raises(AlreadyPublished) as again:  # published already: nothing delivered
        publish(event_backend, "realm_user", [ALICE], seq=2, n=2)
    assert again.value.last_seq == 2
    assert publish(event_backend, "realm_user", [ALICE], seq=3, n=3) == 1
    # Forced past a gap (event 4 is lost for good); event 4 arriving later is then ignored.
    assert publish(event_backend, "realm_user", [ALICE], seq=5, n=5, force=True) == 1
    with pytest.raises(AlreadyPublished) as late:
        publish(event_backend, "realm_user", [ALICE], seq=4, n=4)
    assert late.value.last_seq == 5
    assert event_backend.last_published_seqs([REALM, 99]) == {REALM: 5}
    assert [e["n"] for e in event_backend.get_events(queue, ALICE, -1).events] == [1, 2, 3, 5]


def test_an_organizations_first_event_cannot_be_overtaken(event_backend):
    # Its publish failed (Redis was away) while a queue waited for it; the next event's publish
    # must not go first, or the sweep would later find event 1 "published already" and drop it.
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions())
    with pytest.raises(PredecessorMissing) as refused:
        publish(event_backend, "realm_user", [ALICE], seq=2, n=2)
    assert refused.value.last_seq == 0
    assert publish(event_backend, "realm_user", [ALICE], seq=1, n=1) == 1
    assert publish(event_backend, "realm_user", [ALICE], seq=2, n=2) == 1
    assert [e["n"] for e in event_backend.get_events(queue, ALICE, -1).events] == [1, 2]


def test_organizations_are_numbered_separately(event_backend):
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions())
    elsewhere = event_backend.create_queue(CAROL_ELSEWHERE, 2, QueueOptions())
    publish(event_backend, "realm_user", [ALICE], seq=1)
    assert event_backend.publish(2, 1, json.dumps({"type": "realm_user"}), "realm_user", [CAROL_ELSEWHERE]) == 1
    publish(event_backend, "realm_user", [ALICE], seq=2)
    assert event_backend.last_published_seqs([REALM, 2]) == {REALM: 2, 2: 1}
    assert ids(event_backend.get_events(queue, ALICE, -1).events) == [0, 1]
    assert ids(event_backend.get_events(elsewhere, CAROL_ELSEWHERE, -1).events) == [0]


@pytest.mark.parametrize("queue_id", ["expiry", "notify", "rseq:1", "lock:sweep", "ABC", "0" * 31, "0" * 32 + ":ev"])
def test_what_is_not_a_queue_id_is_an_unknown_queue(event_backend, queue_id):
    event_backend.create_queue(ALICE, REALM, QueueOptions())
    with pytest.raises(BadEventQueueIdError):
        event_backend.get_events(queue_id, ALICE, -1)
    with pytest.raises(BadEventQueueIdError):
        event_backend.delete_queue(queue_id, ALICE)
    with pytest.raises(BadEventQueueIdError):
        run(long_poll(event_backend, queue_id, ALICE, -1, dont_block=True))


def test_options_travel_with_the_queue(event_backend):
    options = QueueOptions(
        event_types=frozenset({"realm_user"}),
        narrow=(("stream", "design", False),),
        client_gravatar=False,
        apply_markdown=True,
        client_capabilities={"notification_settings_null": True},
        lifespan_secs=900,
    )
    queue = event_backend.create_queue(ALICE, 1, options)
    assert event_backend.get_events(queue, ALICE, -1).options == options


def live_options(marker: str) -> int:
    """How many parsed queue options this process holds whose narrow names `marker`.

    `type(obj)`, not `isinstance`: the latter asks a lazy object left by an earlier test (a test
    response's `resolver_match`) for its class, which evaluates it, and that can raise."""
    gc.collect()
    return sum(
        1
        for obj in gc.get_objects()
        if type(obj) is QueueOptions and any(operand.startswith(marker) for _, operand, _ in obj.narrow)
    )


def test_deleting_queues_releases_their_options(event_backend):
    """A queue's options are held while it lives, not after: neither after it is deleted nor after
    it expires (each here has its own narrow, as an attacker's would)."""
    marker = f"released-{time.monotonic_ns()}-"
    queues = [
        # The second half lives no time after its last poll: the sweep deletes them.
        event_backend.create_queue(
            ALICE, REALM, QueueOptions(narrow=(("stream", f"{marker}{i}", False),), lifespan_secs=600 * (i < 10))
        )
        for i in range(20)
    ]
    for queue in queues:
        assert event_backend.get_events(queue, ALICE, -1).options.narrow[0][1].startswith(marker)
    assert live_options(marker) > 0
    for queue in queues[:10]:
        event_backend.delete_queue(queue, ALICE)
    assert sorted(q for q, _ in event_backend.sweep(time.time())) == sorted(queues[10:])
    assert live_options(marker) == 0


def test_options_cache_is_per_queue_shared_and_bounded_by_size():
    from apps.events.backends.options import QueueOptionsCache

    def raw(options: QueueOptions) -> bytes:
        return json.dumps(options.to_json()).encode()

    cache = QueueOptionsCache(max_bytes=20 * QueueOptionsCache.PER_QUEUE_BYTES)
    alike = QueueOptions(event_types=frozenset({"message"}))
    assert cache.get("q1", raw(alike)) is cache.get("q2", raw(alike)) == alike  # queues alike share
    assert cache.size == len(raw(alike)) + 2 * QueueOptionsCache.PER_QUEUE_BYTES
    cache.forget(["q1", "q2"])
    assert (len(cache), cache.size) == (0, 0)
    big = [QueueOptions(narrow=tuple(("stream", f"{i}-{n}" * 40, True) for n in range(5))) for i in range(50)]
    for i, options in enumerate(big):
        assert cache.get(f"big{i}", raw(options)) == options
        assert cache.size <= cache.max_bytes
    assert 0 < len(cache) < 50
    assert cache.get("big49", b"not read again: a queue's options never change") == big[49]  # the newest stay


# --- waiting ------------------------------------------------------------------------------------


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=20))


def test_a_waiting_poll_wakes_when_an_event_arrives(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())

    async def scenario():
        poll = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(0.2)
        assert not poll.done()
        started = time.monotonic()
        publish(event_backend, "realm_user", [ALICE], op="update")
        events, _ = await poll
        return events, time.monotonic() - started

    events, waited = run(scenario())
    assert ids(events) == [0]
    assert waited < 1


def test_a_waiting_poll_ends_with_a_heartbeat(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (0.3, 0.4)
    queue = event_backend.create_queue(ALICE, 1, QueueOptions(event_types=frozenset({"realm_user"})))
    started = time.monotonic()
    events, _ = run(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
    assert 0.3 <= time.monotonic() - started < 2
    assert events == [{"id": 0, "type": "heartbeat"}]
    # A heartbeat takes an id like any event and is acknowledged like one.
    publish(event_backend, "realm_user", [ALICE])
    assert ids(event_backend.get_events(queue, ALICE, 0).events) == [1]


def test_a_new_poll_ends_the_previous_one(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())

    async def scenario():
        first = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(0.2)
        second = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        first_events, _ = await first
        await asyncio.sleep(0.1)
        assert not second.done()
        publish(event_backend, "realm_user", [ALICE])
        second_events, _ = await second
        return first_events, second_events

    first_events, second_events = run(scenario())
    assert first_events == []
    assert ids(second_events) == [0]


def test_stopping_the_process_ends_waiting_polls_and_later_ones(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    other = event_backend.create_queue(BOB, 1, QueueOptions())

    async def scenario():
        waiting = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        event_backend.waiters.close()
        started = time.monotonic()
        # A poll that starts waiting after the stop began does not wait either.
        later = await long_poll(event_backend, other, BOB, -1, dont_block=False)
        return await waiting, later, time.monotonic() - started

    (events, _), (later_events, _), waited = run(scenario())
    assert (events, later_events) == ([], [])
    assert waited < 1
    # Nothing was lost: the queues still hold what arrives, for the next poll (on another process).
    publish(event_backend, "realm_user", [ALICE])
    assert ids(event_backend.get_events(queue, ALICE, -1).events) == [0]


def test_deleting_a_queue_ends_its_poll(event_backend, settings):
    """Deleted by the server (its user deactivated, say), a queue's waiting poll ends with
    BAD_EVENT_QUEUE_ID; deleted by its client (quitting: zulip-terminal's DELETE /events while its
    poll waits), the poll ends with no events, as Zulip's (the zulip-terminal QA pass)."""
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)

    async def scenario(by_client):
        queue = event_backend.create_queue(ALICE, 1, QueueOptions())
        poll = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(0.2)
        event_backend.delete_queue(queue, ALICE, by_client=by_client)
        events, _ = await asyncio.wait_for(poll, 5)
        return events

    with pytest.raises(BadEventQueueIdError):
        run(scenario(by_client=False))
    assert run(scenario(by_client=True)) == []


def test_a_waiting_poll_keeps_its_queue_alive(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (1.5, 1.5)
    queue = event_backend.create_queue(ALICE, 1, QueueOptions(lifespan_secs=1))

    async def scenario():
        poll = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(1.2)  # longer than the lifespan, but a poll is connected
        assert event_backend.sweep(time.time()) == []
        return await poll

    events, _ = run(scenario())
    assert events[0]["type"] == "heartbeat"
    assert event_backend.expired_queue_ids(time.time()) == []  # lifespan counts from the poll's end


def test_dont_block_returns_at_once(event_backend):
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    started = time.monotonic()
    events, _ = run(long_poll(event_backend, queue, ALICE, -1, dont_block=True))
    assert events == []
    assert time.monotonic() - started < 1


def test_a_late_notification_of_an_acknowledged_event_is_not_sent_again(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions())
    publish(event_backend, "realm_user", [ALICE], n=1)

    async def scenario():
        poll = asyncio.create_task(long_poll(event_backend, queue, ALICE, 0, dont_block=False))
        await asyncio.sleep(0.2)
        # The notification of event 0 (acknowledged by this poll) reaches this process only now.
        event_backend.waiters.deliver({"type": "realm_user", "n": 1}, [(queue, 0)])
        await asyncio.sleep(0.2)
        assert not poll.done()
        publish(event_backend, "realm_user", [ALICE], n=2)
        return await poll

    events, _ = run(scenario())
    assert [(e["id"], e["n"]) for e in events] == [(1, 2)]


def test_only_a_later_poll_takes_a_queue_over():
    async def scenario():
        waiters = Waiters()
        newer = waiters.add("q")
        newer.started(5)
        waiters.takeover("q", 4)  # an older poll's takeover, heard late
        waiters.takeover("q", 5)  # its own
        await asyncio.sleep(0)
        assert not newer.future.done()
        waiters.takeover("q", 6)
        await asyncio.sleep(0)
        assert newer.take()[0] == {"takeover"}
        # Heard before the poll learns its own number: applied once it does, if later than it.
        early = waiters.add("r")
        waiters.takeover("r", 3)
        early.started(2)
        assert early.future.done()
        kept = waiters.add("s")
        waiters.takeover("s", 2)
        kept.started(2)
        assert not kept.future.done()

    run(scenario())


def test_an_identity_read_before_a_forget_is_not_cached():
    cache = CredentialCache()
    generation = cache.generation  # a poll starts its database lookup
    cache.forget(user_ids=[ALICE])  # meanwhile, Alice's key is rotated
    cache.put("host", "Basic old", Identity(ALICE, REALM), generation)
    assert cache.get("host", "Basic old") is None
    cache.put("host", "Basic new", Identity(ALICE, REALM), cache.generation)
    assert cache.get("host", "Basic new") == Identity(ALICE, REALM)


def test_an_organization_read_before_a_forget_is_not_cached(realm):
    """The same for the organization cache (the cache-coherence QA pass): a request that read the
    row before a change must not cache it after the change was announced."""
    generation = realm_cache.generation  # a request starts reading the organization
    realm_cache.forget([realm.id])  # meanwhile, the organization changes
    realm_cache.put(realm, generation)
    assert realm_cache.get(realm.string_id) is None
    realm_cache.put(realm, realm_cache.generation)
    assert realm_cache.get(realm.string_id).id == realm.id


def test_clearing_credentials_forgets_cached_organizations_too(realm):
    # After missed notifications (Redis was away) nothing cached may outlive a change it missed,
    # such as an organization deactivated meanwhile.
    realm_cache.put(realm, realm_cache.generation)
    cache = CredentialCache()
    cache.put("host", "Basic key", Identity(ALICE, realm.id), cache.generation)
    cache.clear()
    assert cache.get("host", "Basic key") is None
    assert realm_cache.get(realm.string_id) is None


def test_polls_keep_the_users_queue_index_alive(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    backend = get_backend()
    queue = backend.create_queue(ALICE, REALM, QueueOptions(lifespan_secs=600))
    index = f"{settings.REDIS_KEY_PREFIX}:uq:{ALICE}"
    client = get_redis()
    client.expire(index, 5)  # as it would be, long after registering, without polls refreshing it
    run(long_poll(backend, queue, ALICE, -1, dont_block=True))
    assert client.ttl(index) > 600
    publish(backend, "realm_user", [ALICE])
    assert ids(backend.get_events(queue, ALICE, -1).events) == [0]


def test_every_key_of_a_queue_expires_and_registering_bookkeeping_ends(settings):
    """A crash or a stopped sweeper leaks nothing: each key a queue uses carries a TTL, including
    its events' key when a publish re-creates it after everything was acknowledged. The record of
    which event went where lasts only until the queue's initial state is known."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    backend, client, prefix = get_backend(), get_redis(), settings.REDIS_KEY_PREFIX
    registering = backend.create_queue(ALICE, REALM, QueueOptions(lifespan_secs=600), awaiting_state=True)
    plain = backend.create_queue(BOB, REALM, QueueOptions(lifespan_secs=600))
    publish(backend, "realm_user", [ALICE, BOB])
    assert client.exists(f"{prefix}:eq:{registering}:ob")
    assert not client.exists(f"{prefix}:eq:{plain}:ob")
    backend.exclude_events_through(registering, 0)
    assert not client.exists(f"{prefix}:eq:{registering}:ob")
    publish(backend, "realm_user", [ALICE, BOB])
    assert not client.exists(f"{prefix}:eq:{registering}:ob")
    assert ids(backend.get_events(registering, ALICE, -1).events) == [0, 1]
    backend.get_events(plain, BOB, 1)  # everything acknowledged: the events' key is gone
    assert not client.exists(f"{prefix}:eq:{plain}:ev")
    publish(backend, "realm_user", [ALICE, BOB])
    keys = [key.decode() for key in client.keys(f"{prefix}:*")]
    assert f"{prefix}:eq:{plain}:ev" in keys
    # The expiry index is pruned by the sweep, not by a TTL.
    assert {key: client.ttl(key) for key in keys if client.ttl(key) <= 0} == {f"{prefix}:eq:expiry": -1}


def test_queues_of_the_previous_version_share_redis_during_a_deploy(settings):
    """While old and new server processes serve one Redis, each understands the other's queues.
    The previous version read every state seq as a number (its publish failed, after advancing the
    organization's event number, on anything else: events lost), and kept the record of which
    event went where for a queue's first 30 s, on which its POST /register relied."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    backend, client, prefix = get_backend(), get_redis(), settings.REDIS_KEY_PREFIX
    registering = backend.create_queue(ALICE, REALM, QueueOptions(), awaiting_state=True)
    plain = backend.create_queue(BOB, REALM, QueueOptions())
    for user, queue in ((ALICE, registering), (BOB, plain)):
        float(client.hget(f"{prefix}:uq:{user}", queue).decode().rsplit("|", 1)[1])
    # A queue the previous version created while registering (state seq -1): an event committed
    # before its snapshot is recorded, so that its exclude takes it out again.
    old = backend.create_queue(ALICE, REALM, QueueOptions())
    entry = client.hget(f"{prefix}:uq:{ALICE}", old).decode().rsplit("|", 1)[0]
    client.hset(f"{prefix}:uq:{ALICE}", old, entry + "|-1")
    publish(backend, "realm_user", [ALICE])
    backend.exclude_events_through(old, 1)
    assert backend.get_events(old, ALICE, -1).events == []


def test_a_poll_that_may_have_missed_notifications_ends(settings):
    """When the process's subscription breaks, notifications published meanwhile (an event, a
    newer poll elsewhere, the queue's deletion) are lost to it: once subscribed again, its waiting
    polls end with no events, and the clients' next polls read their queues."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    from apps.events.backends.redis import RedisBackend

    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    # A prefix of this test's own names its listener: no server process another test of this
    # worker started (and may still be stopping) listens under it.
    settings.REDIS_KEY_PREFIX = f"{settings.REDIS_KEY_PREFIX}-missed-{uuid.uuid4().hex[:8]}"
    backend, client = RedisBackend(), get_redis()
    queue = backend.create_queue(ALICE, REALM, QueueOptions())

    def listeners() -> set[str]:
        name = f"{settings.REDIS_KEY_PREFIX}:notifications"
        return {c["id"] for c in client.client_list(_type="pubsub") if c["name"] == name}

    async def scenario():
        await backend.start_notifications()
        try:
            parked = asyncio.create_task(long_poll(backend, queue, ALICE, -1, dont_block=False))
            await asyncio.sleep(0.2)
            (ours,) = listeners()
            client.client_kill_filter(_id=ours)
            publish(backend, "realm_user", [ALICE], n=1)
            assert (await asyncio.wait_for(parked, 5))[0] == []
            events, _ = await long_poll(backend, queue, ALICE, -1, dont_block=True)
            assert [e["n"] for e in events] == [1]
        finally:
            await backend.stop_notifications()

    run(scenario())


def test_a_new_poll_in_another_process_ends_the_waiting_one(settings):
    """Two server processes (two backends, each with its own subscription): a poll that begins in
    one ends the poll of the same queue waiting in the other, as one in the same process does."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    from apps.events.backends.redis import RedisBackend

    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    first, second = RedisBackend(), RedisBackend()
    queue = first.create_queue(ALICE, REALM, QueueOptions())

    async def scenario():
        await first.start_notifications()
        await second.start_notifications()
        try:
            waiting = asyncio.create_task(long_poll(first, queue, ALICE, -1, dont_block=True))
            assert (await waiting)[0] == []  # the queue's first poll: in `first`
            parked = asyncio.create_task(long_poll(first, queue, ALICE, -1, dont_block=False))
            await asyncio.sleep(0.2)
            # The same process polls again: the parked poll ends at once.
            again = asyncio.create_task(long_poll(first, queue, ALICE, -1, dont_block=False))
            assert (await asyncio.wait_for(parked, 2))[0] == []
            # Another process polls: the poll parked in `first` ends too.
            elsewhere = asyncio.create_task(long_poll(second, queue, ALICE, -1, dont_block=False))
            assert (await asyncio.wait_for(again, 2))[0] == []
            publish(second, "realm_user", [ALICE])
            return await asyncio.wait_for(elsewhere, 5)
        finally:
            await first.stop_notifications()
            await second.stop_notifications()

    events, _ = run(scenario())
    assert ids(events) == [0]


CAROL_ELSEWHERE = 103  # of organization 2


def test_everyone_is_every_queue_of_the_organization_but_those_left_out(event_backend):
    alice = event_backend.create_queue(ALICE, REALM, QueueOptions())
    alice_users_only = event_backend.create_queue(ALICE, REALM, QueueOptions(event_types=frozenset({"realm_user"})))
    bob = event_backend.create_queue(BOB, REALM, QueueOptions())
    carol = event_backend.create_queue(CAROL_ELSEWHERE, 2, QueueOptions())
    assert publish(event_backend, "realm", Everyone(), op="update") == 2
    assert publish(event_backend, "realm_user", Everyone((BOB,)), op="update") == 2
    assert [e["type"] for e in event_backend.get_events(alice, ALICE, -1).events] == ["realm", "realm_user"]
    assert [e["type"] for e in event_backend.get_events(alice_users_only, ALICE, -1).events] == ["realm_user"]
    assert [e["type"] for e in event_backend.get_events(bob, BOB, -1).events] == ["realm"]
    assert event_backend.get_events(carol, CAROL_ELSEWHERE, -1).events == []
    # A user whose queues are gone is no longer reached.
    event_backend.delete_queue(bob, BOB)
    assert publish(event_backend, "realm", Everyone()) == 1  # Alice's queue that takes every type


def test_a_list_longer_than_the_users_with_queues_reaches_exactly_its_queues(event_backend):
    """A big channel's message lists thousands of people, a few of whom have queues: the Redis
    backend walks the organization's users with queues instead of the list; either way, exactly
    the listed users' queues get it."""
    alice = event_backend.create_queue(ALICE, REALM, QueueOptions())
    bob = event_backend.create_queue(BOB, REALM, QueueOptions())
    many = [ALICE, *range(10_000, 10_050)]  # Bob not listed
    assert publish(event_backend, "message", many) == 1
    assert publish(event_backend, "message", [BOB]) == 1
    assert publish(event_backend, "message", [*many, BOB]) == 2
    assert ids(event_backend.get_events(alice, ALICE, -1).events) == [0, 1]
    assert ids(event_backend.get_events(bob, BOB, -1).events) == [0, 1]
    event_backend.delete_queue(bob, BOB)
    assert publish(event_backend, "message", [*many, BOB]) == 1


def test_everyone_reaches_queues_the_previous_version_created(settings):
    """Queues registered before this version are in no organization's index: the first
    organization-wide event of a process indexes them all, and each poll indexes its queue."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    backend, client, prefix = get_backend(), get_redis(), settings.REDIS_KEY_PREFIX
    alice = backend.create_queue(ALICE, REALM, QueueOptions())
    bob = backend.create_queue(BOB, REALM, QueueOptions())
    client.delete(f"{prefix}:rq:{REALM}")  # as the previous version left them
    backend._realms_indexed = False  # a process starting after the deploy
    assert publish(backend, "realm", Everyone()) == 2
    client.delete(f"{prefix}:rq:{REALM}")
    run(long_poll(backend, bob, BOB, -1, dont_block=True))  # Alice does not poll
    assert publish(backend, "realm", Everyone()) == 1
    assert ids(backend.get_events(bob, BOB, 0).events) == [1]
    assert ids(backend.get_events(alice, ALICE, -1).events) == [0]
    assert client.ttl(f"{prefix}:rq:{REALM}") > 600
    # The index forgets a user once an organization-wide event finds none of their queues.
    backend.delete_queue(bob, BOB)
    client.sadd(f"{prefix}:rq:{REALM}", ALICE)
    publish(backend, "realm", Everyone())
    assert client.smembers(f"{prefix}:rq:{REALM}") == {str(ALICE).encode()}


def test_everyone_reaches_queues_from_the_outbox(realm, settings):
    """An organization-wide event whose publish did not happen is published by the sweep as such."""
    settings.REDIS_URL = ""
    backend = get_backend()
    OutboxEvent.objects.all().delete()  # those of the organization's creation
    queue = backend.create_queue(ALICE, realm.id, QueueOptions())
    left_out = backend.create_queue(BOB, realm.id, QueueOptions())
    send_event_on_commit(realm, {"type": "realm", "op": "update"}, Everyone((BOB,)))  # never committed
    assert OutboxEvent.objects.get().user_ids == {"everyone_except": [BOB]}
    OutboxEvent.objects.update(seq=backend.last_published_seqs([realm.id]).get(realm.id, 0) + 1)
    assert len(publish_missed_events(backend)) == 1
    assert [e["type"] for e in backend.get_events(queue, ALICE, -1).events] == ["realm"]
    assert backend.get_events(left_out, BOB, -1).events == []
