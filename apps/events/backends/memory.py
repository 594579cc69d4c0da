"""Event queues in this process's memory: the embedded default, for a single server process."""

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from apps.core import ratelimit
from apps.events.backends.base import (
    AlreadyPublished,
    Audience,
    BadEventQueueIdError,
    Everyone,
    PollLimit,
    PollStart,
    PredecessorMissing,
    Waiters,
    check_acknowledgement,
    count_published,
    count_removed,
    deletion_span,
    takes_deletions_one_by_one,
)
from apps.events.credentials import credential_cache
from apps.events.registry import QueueOptions


@dataclass
class _Queue:
    queue_id: str
    user_id: int
    realm_id: int
    options: QueueOptions
    created: float
    expires_at: float
    next_id: int = 0
    newest_pruned_id: int = -1
    events: list[tuple[int, str]] = field(default_factory=list)  # (id, JSON), in id order
    # While the initial state is being read: organization event seq -> event id (see exclude).
    by_seq: dict[int, int] | None = None
    state_seq: int = -1  # the initial state contains the organization's events up to this seq
    polls: int = 0

    def append(self, payload: str, span: int = 1) -> int:
        """Store the event as the last of `span` new ids (see deletion_span)."""
        self.next_id += span
        event_id = self.next_id - 1
        spanned = f'"span": {span}, ' if span > 1 else ""
        self.events.append((event_id, f'{{"id": {event_id}, {spanned}{payload[1:]}'))
        return event_id

    def after(self, last_event_id: int) -> list[dict[str, Any]]:
        return [json.loads(body) for event_id, body in self.events if event_id > last_event_id]


class MemoryBackend:
    def __init__(self) -> None:
        self.waiters = Waiters()
        self._queues: dict[str, _Queue] = {}
        self._by_user: dict[int, set[str]] = {}
        self._published_seq: dict[int, int] = {}  # organization -> newest published event seq
        self._lock = threading.RLock()

    # --- registration and publishing (sync: called from actions and views) -------------------

    def create_queue(self, user_id: int, realm_id: int, options: QueueOptions, *, awaiting_state: bool = False) -> str:
        now = time.time()
        evicted = []
        with self._lock:
            mine = [self._queues[qid] for qid in self._by_user.get(user_id, ())]
            while len(mine) >= settings.EVENT_QUEUE_MAX_PER_USER:
                # The least recently used (a waiting poll's lease counts as use).
                oldest = min(mine, key=lambda q: (q.expires_at - q.options.lifespan_secs, q.created))
                mine.remove(oldest)
                self._drop(oldest)
                evicted.append(oldest.queue_id)
            queue = _Queue(uuid.uuid4().hex, user_id, realm_id, options, now, now + options.lifespan_secs)
            if awaiting_state:
                queue.by_seq = {}
            self._queues[queue.queue_id] = queue
            self._by_user.setdefault(user_id, set()).add(queue.queue_id)
        count_removed("too_many_queues", len(evicted))
        self.waiters.notify(evicted, "deleted")
        return queue.queue_id

    def publish(
        self, realm_id: int, seq: int, payload: str, event_type: str, audience: Audience, *, force: bool = False
    ) -> int:
        woken: list[tuple[str, int]] = []
        evicted, reread = [], []
        span = deletion_span(event_type, payload)
        published = time.time()
        with self._lock:
            last = self._published_seq.get(realm_id, 0)  # none yet: as the Redis backend
            if seq <= last:
                raise AlreadyPublished(last)
            if seq > last + 1 and not force:
                raise PredecessorMissing(last)
            self._published_seq[realm_id] = seq
            for queue in self._audience_queues(realm_id, audience):
                queue_id = queue.queue_id
                if not queue.options.wants(event_type) or seq <= queue.state_seq:
                    continue
                spanned = span > 1 and takes_deletions_one_by_one(queue.options)
                event_id = queue.append(payload, span if spanned else 1)
                if queue.by_seq is not None:
                    queue.by_seq[seq] = event_id
                if len(queue.events) > settings.EVENT_QUEUE_MAX_EVENTS:
                    self._drop(queue)
                    evicted.append(queue_id)
                elif spanned:
                    reread.append(queue_id)
                else:
                    woken.append((queue_id, event_id))
        count_published(event_type)
        count_removed("too_many_events", len(evicted))
        if woken:
            self.waiters.deliver(json.loads(payload), woken, published)
        self.waiters.notify(reread, "resync")
        self.waiters.notify(evicted, "deleted")
        return len(woken) + len(reread)

    def _audience_queues(self, realm_id: int, audience: Audience) -> list[_Queue]:
        if isinstance(audience, Everyone):
            excluded = set(audience.except_ids)
            return [q for q in self._queues.values() if q.realm_id == realm_id and q.user_id not in excluded]
        return [self._queues[qid] for user_id in audience for qid in self._by_user.get(user_id, ())]

    def last_published_seqs(self, realm_ids: list[int]) -> dict[int, int]:
        with self._lock:
            return {rid: self._published_seq[rid] for rid in realm_ids if rid in self._published_seq}

    def exclude_events_through(self, queue_id: str, seq: int) -> None:
        with self._lock:
            queue = self._queues.get(queue_id)
            if queue is None:
                return
            dropped = {event_id for event_seq, event_id in (queue.by_seq or {}).items() if event_seq <= seq}
            queue.events = [(eid, body) for eid, body in queue.events if eid not in dropped]
            queue.state_seq, queue.by_seq = seq, None

    def delete_queue(self, queue_id: str, user_id: int, *, by_client: bool = False) -> None:
        with self._lock:
            self._drop(self._owned(queue_id, user_id))
        count_removed("deleted")
        self.waiters.notify([queue_id], "closed" if by_client else "deleted")

    def restart_sequence(self, realm_id: int) -> int:
        with self._lock:
            dropped = [queue for queue in self._queues.values() if queue.realm_id == realm_id]
            for queue in dropped:
                self._drop(queue)
            self._published_seq.pop(realm_id, None)
        count_removed("deleted", len(dropped))
        self.waiters.notify([queue.queue_id for queue in dropped], "deleted")
        return len(dropped)

    def forget_credentials(self, user_ids: list[int], realm_ids: list[int]) -> None:
        credential_cache.forget(user_ids, realm_ids)

    def outdate_caches(self, name: str, realm_ids: list[int]) -> None:
        """One process: nobody else to tell."""

    def sweep(self, now: float) -> list[tuple[str, int]]:
        with self._lock:
            expired = [q for q in self._queues.values() if q.expires_at <= now]
            for queue in expired:
                self._drop(queue)
        self.waiters.notify([q.queue_id for q in expired], "deleted")
        return [(q.queue_id, q.user_id) for q in expired]

    def expired_queue_ids(self, now: float) -> list[str]:
        with self._lock:
            return sorted(q.queue_id for q in self._queues.values() if q.expires_at <= now)

    def try_lock(self, name: str, seconds: int) -> bool:
        return True  # one process: nobody to share the work with

    def queue_ids_of_user(self, user_id: int) -> list[str]:
        with self._lock:
            return sorted(self._by_user.get(user_id, ()))

    def queue_lengths(self) -> list[int]:
        with self._lock:
            return [len(queue.events) for queue in self._queues.values()]

    def get_events(self, queue_id: str, user_id: int, last_event_id: int) -> PollStart:
        return self._begin(queue_id, user_id, last_event_id, waiting=False)

    # --- polling (async interface; the work is quick and in memory) -----------------------------

    async def begin_poll(
        self, queue_id: str, user_id: int, last_event_id: int, *, waiting: bool, limit: PollLimit | None = None
    ) -> PollStart:
        if limit is not None:
            await self.count_poll(limit)
        return self._begin(queue_id, user_id, last_event_id, waiting=waiting)

    async def count_poll(self, limit: PollLimit) -> None:
        """Counted in this process: the only one serving these queues."""
        limit.counted(ratelimit.check_in_process(limit.key, limit.limit))

    async def add_heartbeat(self, queue_id: str, user_id: int, last_event_id: int) -> list[dict[str, Any]]:
        with self._lock:
            queue = self._owned(queue_id, user_id)
            queue.append('{"type": "heartbeat"}')
            return queue.after(last_event_id)

    async def start_notifications(self) -> None:
        """Nothing to listen to: every publisher is in this process."""

    async def stop_notifications(self) -> None:
        """Nothing to stop."""

    # --- internals -------------------------------------------------------------------------------

    def _begin(self, queue_id: str, user_id: int, last_event_id: int, *, waiting: bool) -> PollStart:
        now = time.time()
        with self._lock:
            queue = self._owned(queue_id, user_id)
            acknowledged = [eid for eid, _ in queue.events if eid <= last_event_id]
            check_acknowledgement(last_event_id, queue.newest_pruned_id, max(acknowledged, default=None))
            if acknowledged:
                queue.events = queue.events[len(acknowledged) :]
                queue.newest_pruned_id = last_event_id
            lease = settings.EVENTS_HEARTBEAT_SECONDS[1] + 5 if waiting else 0
            queue.expires_at = now + queue.options.lifespan_secs + lease
            queue.polls += 1
            result = PollStart(queue.after(last_event_id), queue.options, queue.polls)
        self.waiters.takeover(queue_id, result.poll_number)
        return result

    def _owned(self, queue_id: str, user_id: int) -> _Queue:
        """The queue, if it exists and belongs to the user; another user's answers like none."""
        queue = self._queues.get(queue_id)
        if queue is None or queue.user_id != user_id:
            raise BadEventQueueIdError(queue_id)
        return queue

    def _drop(self, queue: _Queue) -> None:
        self._queues.pop(queue.queue_id, None)
        mine = self._by_user.get(queue.user_id)
        if mine is not None:
            mine.discard(queue.queue_id)
            if not mine:
                del self._by_user[queue.user_id]
