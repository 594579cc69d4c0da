"""The event queues' metrics (apps/core/metrics.py, counted by the backends and the long-poll), on
both backends: waiting polls and wake latency, events published, queues removed and why."""

import asyncio
import json

import pytest
from prometheus_client import REGISTRY

from apps.events.actions import do_sweep_event_queues
from apps.events.backends import AlreadyPublished
from apps.events.longpoll import long_poll
from apps.events.registry import QueueOptions

ALICE, BOB = 201, 202
REALM = 1


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def publish(backend, event_type: str, user_ids: list[int], seq: int | None = None) -> int:
    if seq is None:
        seq = backend.last_published_seqs([REALM]).get(REALM, 0) + 1
    return backend.publish(REALM, seq, json.dumps({"type": event_type}), event_type, user_ids)


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=20))


def test_a_woken_poll_is_counted_waiting_then_timed(event_backend, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions())
    waiting_before = sample("parley_event_polls_waiting")
    woken_before = sample("parley_event_wake_latency_seconds_count")

    async def scenario() -> float:
        poll = asyncio.create_task(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
        await asyncio.sleep(0.2)
        waiting = sample("parley_event_polls_waiting")
        publish(event_backend, "realm_user", [ALICE])
        events, _ = await poll
        assert [event["id"] for event in events] == [0]
        return waiting

    assert run(scenario()) == waiting_before + 1
    assert sample("parley_event_polls_waiting") == waiting_before
    assert sample("parley_event_wake_latency_seconds_count") == woken_before + 1
    # Published and answered within this test's second; not a negative or absurd time.
    assert sample("parley_event_wake_latency_seconds_bucket", le="1.0") == woken_before + 1


def test_a_poll_answered_at_once_never_counts_as_waiting_or_woken(event_backend):
    queue = event_backend.create_queue(ALICE, REALM, QueueOptions())
    publish(event_backend, "realm_user", [ALICE])
    waiting_before = sample("parley_event_polls_waiting")
    woken_before = sample("parley_event_wake_latency_seconds_count")
    events, _ = run(long_poll(event_backend, queue, ALICE, -1, dont_block=False))
    assert len(events) == 1
    assert sample("parley_event_polls_waiting") == waiting_before
    assert sample("parley_event_wake_latency_seconds_count") == woken_before


def test_events_published_are_counted_once_by_type(event_backend):
    event_backend.create_queue(BOB, REALM, QueueOptions())
    before = sample("parley_events_published_total", type="custom_profile_fields")
    seq = event_backend.last_published_seqs([REALM]).get(REALM, 0) + 1
    publish(event_backend, "custom_profile_fields", [BOB], seq)
    with pytest.raises(AlreadyPublished):  # already published: not again
        publish(event_backend, "custom_profile_fields", [BOB], seq)
    publish(event_backend, "custom_profile_fields", [])  # to nobody: published all the same
    assert sample("parley_events_published_total", type="custom_profile_fields") == before + 2


def removed(reason: str) -> float:
    return sample("parley_event_queues_removed_total", reason=reason)


def test_queues_removed_are_counted_by_reason(event_backend, settings, db):
    settings.EVENT_QUEUE_MAX_PER_USER = 2
    settings.EVENT_QUEUE_MAX_EVENTS = 2
    before = {reason: removed(reason) for reason in ("too_many_queues", "too_many_events", "deleted", "expired")}
    user = 203
    for _ in range(3):
        event_backend.create_queue(user, REALM, QueueOptions())
    assert removed("too_many_queues") == before["too_many_queues"] + 1
    for _ in range(3):
        publish(event_backend, "realm_user", [user])
    assert removed("too_many_events") == before["too_many_events"] + 2  # both of the user's queues
    short = event_backend.create_queue(user, REALM, QueueOptions(lifespan_secs=1))
    event_backend.delete_queue(short, user)
    assert removed("deleted") == before["deleted"] + 1
    event_backend.create_queue(user, REALM, QueueOptions(lifespan_secs=1))
    run(asyncio.sleep(1.2))
    swept = do_sweep_event_queues(exclusive=False)
    assert removed("expired") == before["expired"] + len(swept)
    assert len(swept) >= 1
