"""Event queue storage behind one interface: Redis (any number of processes and machines) or this
process's memory (the embedded default, one server process).

Semantics shared by both (Zulip's, zulip-wire.md §3.1):
- each queue numbers its events 0, 1, 2, ...; the newest pruned id starts at -1;
- a poll with `last_event_id` N acknowledges (deletes) events with id <= N and returns the rest;
  N below the newest pruned id, or not the id of an event in the queue, is refused and changes
  nothing; events are deleted only when acknowledged, never when sent;
- a new poll on a queue ends the poll already waiting on it (with no events);
- a queue expires `lifespan_secs` after its last poll ended; a poll in progress keeps it alive;
- caps: a queue holding more than EVENT_QUEUE_MAX_EVENTS events, or the oldest queue of a user
  registering more than EVENT_QUEUE_MAX_PER_USER, is deleted; its id then answers
  BAD_EVENT_QUEUE_ID and the client registers again.
"""

import asyncio
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from django.conf import settings

from apps.core.errors import ErrorCode, JsonableError
from apps.events.registry import QueueOptions


class BadEventQueueIdError(JsonableError):
    code = ErrorCode.BAD_EVENT_QUEUE_ID

    def __init__(self, queue_id: str) -> None:
        # Lower-case "id": zulip-terminal recognises only this spelling; the Python client reads `code`.
        super().__init__(f"Bad event queue id: {queue_id}", queue_id=queue_id)


def check_acknowledgement(last_event_id: int, newest_pruned_id: int, newest_acknowledged: int | None) -> None:
    """Zulip's rules for `last_event_id`; `newest_acknowledged` is the newest queued id <= it."""
    if last_event_id < newest_pruned_id:
        raise JsonableError(f"An event newer than {last_event_id} has already been pruned!")
    if last_event_id != (newest_pruned_id if newest_acknowledged is None else newest_acknowledged):
        raise JsonableError(f"Event {last_event_id} was not in this queue")


@dataclass(eq=False)
class Waiter:
    """A poll parked in this process, woken with the reasons that concern it."""

    queue_id: str
    token: str
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    reasons: set[str] = field(default_factory=set)

    def notify(self, reason: str) -> None:
        self.reasons.add(reason)
        self.wake.set()


class Waiters:
    """The polls parked in this process, by queue. Notifications may come from any thread."""

    def __init__(self) -> None:
        self._by_queue: dict[str, set[Waiter]] = {}
        self._lock = threading.Lock()

    def add(self, queue_id: str, token: str) -> Waiter:
        waiter = Waiter(queue_id, token, asyncio.get_running_loop())
        with self._lock:
            self._by_queue.setdefault(queue_id, set()).add(waiter)
        return waiter

    def remove(self, waiter: Waiter) -> None:
        with self._lock:
            waiters = self._by_queue.get(waiter.queue_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._by_queue[waiter.queue_id]

    def notify(self, queue_ids: list[str], reason: str, token: str | None = None) -> None:
        """Wake the polls on these queues: "events", "deleted", or "takeover" by poll `token`."""
        with self._lock:
            targets = [w for qid in queue_ids for w in self._by_queue.get(qid, ()) if w.token != token]
        for waiter in targets:
            if waiter.loop.is_closed():
                continue
            waiter.loop.call_soon_threadsafe(waiter.notify, reason)

    def notify_all(self, reason: str) -> None:
        with self._lock:
            queue_ids = list(self._by_queue)
        self.notify(queue_ids, reason)

    def count(self) -> int:
        with self._lock:
            return sum(len(waiters) for waiters in self._by_queue.values())


@dataclass(frozen=True)
class PollStart:
    events: list[dict[str, Any]]
    options: QueueOptions


class EventQueueBackend(Protocol):
    waiters: Waiters

    def create_queue(self, user_id: int, realm_id: int, options: QueueOptions) -> str: ...

    def publish(self, payload: str, event_type: str, user_ids: list[int], outbox_id: int) -> int: ...

    def exclude_events(self, queue_id: str, outbox_ids: list[int]) -> None: ...

    def delete_queue(self, queue_id: str, user_id: int) -> None: ...

    def sweep(self, now: float) -> list[tuple[str, int]]: ...

    def expired_queue_ids(self, now: float) -> list[str]: ...

    def try_lock(self, name: str, seconds: int) -> bool: ...

    def queue_ids_of_user(self, user_id: int) -> list[str]: ...

    def get_events(self, queue_id: str, user_id: int, last_event_id: int) -> PollStart: ...

    async def begin_poll(
        self, queue_id: str, user_id: int, last_event_id: int, token: str, *, waiting: bool
    ) -> PollStart: ...

    async def read_events(self, queue_id: str, user_id: int, last_event_id: int) -> list[dict[str, Any]]: ...

    async def add_heartbeat(self, queue_id: str, user_id: int, last_event_id: int) -> list[dict[str, Any]]: ...

    async def end_poll(self, queue_id: str, token: str) -> None: ...

    async def start_notifications(self) -> None: ...


@cache
def _backend_for(redis_url: str) -> EventQueueBackend:
    if redis_url:
        from apps.events.backends.redis import RedisBackend

        return RedisBackend()
    from apps.events.backends.memory import MemoryBackend

    return MemoryBackend()


def get_backend() -> EventQueueBackend:
    """Redis when REDIS_URL is set, else this process's memory."""
    return _backend_for(settings.REDIS_URL)
