"""The queue backends (memory and Redis) behave alike: numbering, acknowledgement, waking, caps, expiry."""

import asyncio
import json
import time

import pytest

from apps.core.errors import JsonableError
from apps.events.backends import BadEventQueueIdError
from apps.events.longpoll import long_poll
from apps.events.registry import QueueOptions

ALICE, BOB = 101, 102


def publish(backend, event_type: str, user_ids: list[int], outbox_id: int = 1, **fields) -> int:
    return backend.publish(json.dumps({"type": event_type, **fields}), event_type, user_ids, outbox_id)


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
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())
    publish(event_backend, "realm_user", [ALICE], outbox_id=10, n=10)
    publish(event_backend, "realm_user", [ALICE], outbox_id=11, n=11)
    # The register snapshot contained outbox events 10 and 12 (12 is still on its way).
    event_backend.exclude_events(queue, [10, 12])
    publish(event_backend, "realm_user", [ALICE], outbox_id=12, n=12)
    publish(event_backend, "realm_user", [ALICE], outbox_id=13, n=13)
    assert [e["n"] for e in event_backend.get_events(queue, ALICE, -1).events] == [11, 13]


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
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    queue = event_backend.create_queue(ALICE, 1, QueueOptions())

    async def scenario():
        poll = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(0.2)
        event_backend.delete_queue(queue, ALICE)
        await poll

    with pytest.raises(BadEventQueueIdError):
        run(scenario())


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
