"""Random sequences of register (with or without an initial state) / publish / get (acknowledge) /
delete, checked against a plain model, on both queue backends."""

import json
import uuid
from dataclasses import dataclass, field

import pytest
from django.conf import settings
from django.test import override_settings
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule

from apps.core.errors import JsonableError
from apps.core.redis_client import get_redis
from apps.events.backends import BadEventQueueIdError
from apps.events.backends.memory import MemoryBackend
from apps.events.registry import QueueOptions

USERS = [1, 2, 3]
TYPES = ["alpha", "beta"]


@dataclass
class ModelQueue:
    user: int
    types: frozenset[str] | None
    next_id: int = 0
    pruned: int = -1
    events: list[tuple[int, int]] = field(default_factory=list)  # (id, serial)
    deleted: bool = False
    # Registered with an initial state still being read (POST /register): the newest event
    # committed when the queue was created; None once the state is known, or for a queue without.
    awaiting_since: int | None = None


class QueueModelMachine(RuleBasedStateMachine):
    """Subclasses say which backend runs against the model."""

    queues = Bundle("queues")

    def make_backend(self):
        raise NotImplementedError

    def __init__(self) -> None:
        super().__init__()
        # High caps: eviction has tests of its own; here the model has no caps.
        self._caps = override_settings(EVENT_QUEUE_MAX_EVENTS=10_000, EVENT_QUEUE_MAX_PER_USER=1_000)
        self._caps.enable()
        self.backend = self.make_backend()
        self.model: dict[str, ModelQueue] = {}
        self.serial = 0

    @initialize(target=queues, user=st.sampled_from(USERS), types=st.none() | st.frozensets(st.sampled_from(TYPES)))
    def first_queue(self, user, types):
        return self.register(user, types)

    @rule(
        target=queues,
        user=st.sampled_from(USERS),
        types=st.none() | st.frozensets(st.sampled_from(TYPES)),
        with_state=st.booleans(),
    )
    def register(self, user, types, with_state=False):
        queue_id = self.backend.create_queue(user, 1, QueueOptions(event_types=types), awaiting_state=with_state)
        self.model[queue_id] = ModelQueue(user, types, awaiting_since=self.serial if with_state else None)
        return queue_id

    @rule(queue_id=queues, data=st.data())
    def state_read(self, queue_id, data):
        """The queue's initial state is read: it holds every event up to some seq between the
        queue's creation and now, which the queue must then not hold too."""
        queue = self.model[queue_id]
        if queue.awaiting_since is None or queue.deleted:
            return
        state_seq = data.draw(st.integers(min_value=queue.awaiting_since, max_value=self.serial))
        self.backend.exclude_events_through(queue_id, state_seq)
        queue.events = [(eid, serial) for eid, serial in queue.events if serial > state_seq]
        queue.awaiting_since = None
        # Read without acknowledging anything more: exactly the events after the state.
        result = self.backend.get_events(queue_id, queue.user, queue.pruned)
        assert [(e["id"], e["serial"]) for e in result.events] == queue.events

    @rule(event_type=st.sampled_from(TYPES), users=st.sets(st.sampled_from(USERS), min_size=1))
    def publish(self, event_type, users):
        self.serial += 1
        payload = json.dumps({"type": event_type, "serial": self.serial})
        self.backend.publish(1, self.serial, payload, event_type, sorted(users))
        for queue in self.model.values():
            if not queue.deleted and queue.user in users and (queue.types is None or event_type in queue.types):
                queue.events.append((queue.next_id, self.serial))
                queue.next_id += 1

    @rule(queue_id=queues, data=st.data())
    def get(self, queue_id, data):
        """The owner polls, acknowledging an id that is in the queue, or was, or never was."""
        queue = self.model[queue_id]
        seen = [eid for eid, _ in queue.events] + [queue.pruned, queue.pruned - 1, queue.next_id + 1]
        ack = data.draw(st.sampled_from(seen) | st.integers(min_value=-2, max_value=queue.next_id + 2))
        newest_acked = max((eid for eid, _ in queue.events if eid <= ack), default=queue.pruned)
        valid_ack = ack >= queue.pruned and newest_acked == ack
        try:
            result = self.backend.get_events(queue_id, queue.user, ack)
        except BadEventQueueIdError:
            assert queue.deleted
            return
        except JsonableError as error:
            refusal = error.msg
        else:
            refusal = None
        assert not queue.deleted
        if not valid_ack:
            expected = (
                f"An event newer than {ack} has already been pruned!"
                if ack < queue.pruned
                else f"Event {ack} was not in this queue"
            )
            assert refusal == expected
            return
        assert refusal is None
        queue.events = [(eid, serial) for eid, serial in queue.events if eid > ack]
        queue.pruned = max(queue.pruned, ack)
        assert [(e["id"], e["serial"]) for e in result.events] == queue.events

    @rule(queue_id=queues)
    def get_as_another_user(self, queue_id):
        queue = self.model[queue_id]
        with pytest.raises(BadEventQueueIdError):
            self.backend.get_events(queue_id, queue.user % len(USERS) + 1, queue.pruned)

    @rule(queue_id=queues, as_owner=st.booleans())
    def delete(self, queue_id, as_owner):
        queue = self.model[queue_id]
        user = queue.user if as_owner else queue.user % len(USERS) + 1
        try:
            self.backend.delete_queue(queue_id, user)
        except BadEventQueueIdError:
            assert queue.deleted or not as_owner
            return
        assert not queue.deleted
        assert as_owner
        queue.deleted = True

    def teardown(self):
        self._caps.disable()

    @precondition(lambda self: self.model)
    @invariant()
    def each_user_lists_exactly_their_live_queues(self):
        for user in USERS:
            live = sorted(qid for qid, q in self.model.items() if q.user == user and not q.deleted)
            assert sorted(self.backend.queue_ids_of_user(user)) == live


MACHINE_SETTINGS = hypothesis_settings(
    max_examples=100, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@MACHINE_SETTINGS
class MemoryMachine(QueueModelMachine):
    def make_backend(self):
        return MemoryBackend()


TestMemoryBackendAgainstModel = MemoryMachine.TestCase


@MACHINE_SETTINGS
class RedisMachine(QueueModelMachine):
    def make_backend(self):
        from apps.events.backends.redis import RedisBackend

        # Each run gets a namespace of its own, removed afterwards.
        self.prefix = f"{settings.REDIS_KEY_PREFIX}-sm-{uuid.uuid4().hex[:8]}"
        self._prefix = override_settings(REDIS_KEY_PREFIX=self.prefix)
        self._prefix.enable()
        return RedisBackend()

    def teardown(self):
        client = get_redis()
        keys = list(client.scan_iter(f"{self.prefix}:*"))
        if keys:
            client.delete(*keys)
        self._prefix.disable()
        super().teardown()


TestRedisBackendAgainstModel = pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (a real Redis)")(
    RedisMachine.TestCase
)
