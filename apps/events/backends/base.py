"""What both event queue backends share: the interface, the rules, and the polls parked in a process.

Semantics shared by both (Zulip's, zulip-wire.md §3.1):
- each queue numbers its events 0, 1, 2, ...; the newest pruned id starts at -1;
- a poll with `last_event_id` N acknowledges (deletes) events with id <= N and returns the rest;
  N below the newest pruned id, or not the id of an event in the queue, is refused and changes
  nothing; events are deleted only when acknowledged, never when sent;
- events reach queues in commit order: each carries its organization's commit sequence number
  (`seq`, see OutboxEvent); a publish whose predecessor is not published yet is refused with
  PredecessorMissing (an organization none of whose events is published yet counts as having
  published seq 0), and one already published is ignored, so each event is published once;
- a new poll on a queue ends the poll already waiting on it (with no events);
- a queue expires `lifespan_secs` after its last poll ended: a poll leases it until it must have
  ended (the heartbeat time), so a killed process's poll cannot keep a queue forever;
- caps: a queue holding more than EVENT_QUEUE_MAX_EVENTS events, or the least recently used queue
  of a user registering more than EVENT_QUEUE_MAX_PER_USER, is deleted; its id then answers
  BAD_EVENT_QUEUE_ID and the client registers again.
"""

import asyncio
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from apps.core.errors import ErrorCode, JsonableError, RateLimitedError
from apps.core.metrics import EVENT_QUEUES_REMOVED, EVENTS_PUBLISHED
from apps.core.ratelimit import RateLimitState
from apps.events.registry import QueueOptions


@dataclass(frozen=True)
class Everyone:
    """An event's audience when it is everyone of the organization: every queue of the organization
    (its active users' and bots': a deactivated user's queues are deleted), but the queues of
    `except_ids`. Publishing it costs the organization's queues, not its people: nobody lists ten
    thousand ids for an event everyone gets.
    """

    except_ids: tuple[int, ...] = ()

    def to_json(self) -> dict[str, list[int]]:
        return {"everyone_except": sorted(self.except_ids)}


Audience = list[int] | Everyone


def audience_from_json(value: list[int] | dict[str, list[int]]) -> Audience:
    """An audience as the outbox stores it (see Everyone.to_json)."""
    return Everyone(tuple(value["everyone_except"])) if isinstance(value, dict) else value


class BadEventQueueIdError(JsonableError):
    code = ErrorCode.BAD_EVENT_QUEUE_ID

    def __init__(self, queue_id: str) -> None:
        # Lower-case "id": zulip-terminal recognises only this spelling; the Python client reads `code`.
        super().__init__(f"Bad event queue id: {queue_id}", queue_id=queue_id)


# Queue ids are uuid4 hex; anything else is not a queue (and never reaches a Redis key name).
QUEUE_ID_RE = re.compile(r"[0-9a-f]{32}")


def check_queue_id(queue_id: str) -> None:
    if not QUEUE_ID_RE.fullmatch(queue_id):
        raise BadEventQueueIdError(queue_id)


def deletion_span(event_type: str, payload: str) -> int:
    """How many event ids a delete_message event takes in a queue whose client takes deletions
    one message at a time: one per message.

    Zulip's event queues give a client without the bulk_message_deletion capability one event per
    deleted message, each with its own id (process_deletion_event). Such a queue stores the event
    once, as its last id, with "span": the ids before it are its other pieces; the delete_message
    transform (apps/messages/events.py) numbers them.
    """
    if event_type != "delete_message":
        return 1
    return max(1, len(json.loads(payload).get("message_ids", ())))


def takes_deletions_one_by_one(options: QueueOptions) -> bool:
    return not options.client_capabilities.get("bulk_message_deletion", False)


def count_published(event_type: str) -> None:
    EVENTS_PUBLISHED.labels(event_type).inc()


def count_removed(reason: str, count: int = 1) -> None:
    """Queues the backend deleted: "too_many_queues", "too_many_events", "expired" or "deleted"."""
    if count:
        EVENT_QUEUES_REMOVED.labels(reason).inc(count)


class PredecessorMissing(Exception):
    """An earlier event of the organization is not published yet; `last_seq` is the newest that is."""

    def __init__(self, last_seq: int) -> None:
        super().__init__(last_seq)
        self.last_seq = last_seq


class AlreadyPublished(Exception):
    """The event's number is not past the organization's newest published one (`last_seq`): it was
    published before (a retry, another process's sweep), or the database went back in time."""

    def __init__(self, last_seq: int) -> None:
        super().__init__(last_seq)
        self.last_seq = last_seq


def check_acknowledgement(last_event_id: int, newest_pruned_id: int, newest_acknowledged: int | None) -> None:
    """Zulip's rules for `last_event_id`; `newest_acknowledged` is the newest queued id <= it."""
    if last_event_id < newest_pruned_id:
        raise JsonableError(f"An event newer than {last_event_id} has already been pruned!")
    if last_event_id != (newest_pruned_id if newest_acknowledged is None else newest_acknowledged):
        raise JsonableError(f"Event {last_event_id} was not in this queue")


class Waiter:
    """A poll parked in this process: woken with the reasons that concern it and the events that
    arrived for its queue (so a woken poll need not read its queue again). Kept small: a busy
    server holds one per connected client.

    `poll_number` is the queue's count of polls when this one began (known once its first read of
    the queue returns); a poll is taken over by a poll with a higher number, never a lower one.
    `published` is when the first event handed over since the last `take` was published (Unix
    time; 0 for none): for the wake latency metric.
    """

    __slots__ = (
        "events",
        "future",
        "loop",
        "poll_number",
        "published",
        "queue_id",
        "reasons",
        "superseded_by",
        "timer",
    )

    def __init__(self, queue_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self.queue_id, self.loop = queue_id, loop
        self.future: asyncio.Future = loop.create_future()
        self.reasons: set[str] = set()
        self.events: list[dict[str, Any]] = []
        self.timer: asyncio.TimerHandle | None = None
        self.poll_number: int | None = None
        self.superseded_by = 0  # the highest takeover heard before `poll_number` was known
        self.published = 0.0

    def started(self, poll_number: int) -> None:
        """This poll's number is known: a takeover heard meanwhile by a later poll applies now."""
        self.poll_number = poll_number
        if self.superseded_by > poll_number:
            self.notify("takeover")

    def taken_over(self, poll_number: int) -> None:
        if self.poll_number is None:
            self.superseded_by = max(self.superseded_by, poll_number)
        elif poll_number > self.poll_number:
            self.notify("takeover")

    def notify(self, reason: str, event: dict[str, Any] | None = None) -> None:
        self.reasons.add(reason)
        if event is not None:
            self.events.append(event)
        if not self.future.done():
            self.future.set_result(None)

    async def wait(self, deadline: float) -> None:
        """Until notified, or until `deadline` (loop time), which adds the reason "timeout"."""
        if not self.future.done():
            self.timer = self.loop.call_at(deadline, self.notify, "timeout")
            try:
                await self.future
            finally:
                self.timer.cancel()

    def take(self) -> tuple[set[str], list[dict[str, Any]]]:
        events = self.events if len(self.events) < 2 else sorted(self.events, key=lambda event: event["id"])
        reasons = self.reasons
        self.reasons, self.events = set(), []
        self.future = self.loop.create_future()
        return reasons, events


class Waiters:
    """The polls parked in this process, by queue. Notifications may come from any thread.

    Reasons: "events" (with the event), "deleted", "closed" (deleted by its client: the poll ends
    as Zulip's, with no events), "takeover" by another poll, "resync"
    (notifications may have been missed, or the queue holds an event the notification could not
    carry: the poll ends, and the next one reads the queue), "unavailable" (notifications cannot
    come: Redis is down) and "shutdown" (this process is stopping).
    """

    def __init__(self) -> None:
        self._by_queue: dict[str, set[Waiter]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def add(self, queue_id: str) -> Waiter:
        waiter = Waiter(queue_id, asyncio.get_running_loop())
        with self._lock:
            self._by_queue.setdefault(queue_id, set()).add(waiter)
            closed = self._closed
        if closed:
            waiter.notify("shutdown")
        return waiter

    def close(self) -> None:
        """The process is stopping: wake every waiting poll, and any poll that parks from now on."""
        with self._lock:
            self._closed = True
        self.notify_all("shutdown")

    def remove(self, waiter: Waiter) -> None:
        with self._lock:
            waiters = self._by_queue.get(waiter.queue_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._by_queue[waiter.queue_id]

    def notify(self, queue_ids: list[str], reason: str) -> None:
        """Wake the polls on these queues."""
        with self._lock:
            calls = [(w, reason, None) for qid in queue_ids for w in self._by_queue.get(qid, ())]
        self._run(calls)

    def takeover(self, queue_id: str, poll_number: int) -> None:
        """Poll number `poll_number` began on the queue: earlier polls on it end."""
        with self._lock:
            calls = [(w, "takeover", poll_number) for w in self._by_queue.get(queue_id, ())]
        self._run(calls)

    def deliver(self, event: dict[str, Any], ids_by_queue: list[tuple[str, int]], published: float = 0.0) -> None:
        """Hand `event`, numbered for each queue, to the polls waiting on those queues (`published`:
        when it was, Unix time, if known)."""
        with self._lock:
            calls = [
                (w, "events", {"id": event_id, **event})
                for qid, event_id in ids_by_queue
                for w in self._by_queue.get(qid, ())
            ]
        if published:
            for waiter, _, _ in calls:
                if not waiter.published:
                    waiter.published = published
        self._run(calls)

    def notify_all(self, reason: str) -> None:
        with self._lock:
            queue_ids = list(self._by_queue)
        self.notify(queue_ids, reason)

    def count(self) -> int:
        """Polls waiting right now (registered and past their first read of the queue)."""
        with self._lock:
            return sum(1 for waiters in self._by_queue.values() for waiter in waiters if waiter.timer is not None)

    @staticmethod
    def _run(calls: list[tuple[Waiter, str, dict | None]]) -> None:
        """Notify on each waiter's own loop: directly when that is this thread's loop, else with one
        thread-safe call per loop (one wake-up, however many waiters)."""
        by_loop: dict[asyncio.AbstractEventLoop, list] = {}
        for call in calls:
            by_loop.setdefault(call[0].loop, []).append(call)
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        for loop, loop_calls in by_loop.items():
            if loop is current:
                _notify_each(loop_calls)
            elif not loop.is_closed():
                loop.call_soon_threadsafe(_notify_each, loop_calls)


def _notify_each(calls: list[tuple[Waiter, str, Any]]) -> None:
    for waiter, reason, detail in calls:
        if reason == "takeover":
            waiter.taken_over(detail)
        else:
            waiter.notify(reason, detail)


@dataclass(frozen=True)
class PollStart:
    events: list[dict[str, Any]]
    options: QueueOptions
    poll_number: int


@dataclass
class PollLimit:
    """The rate limit a poll counts against: `key` may poll `limit` (count, window in seconds) times.

    The backend counts the poll with the poll's own work (no round trip of its own) and every
    server process counts in one place; the outcome is left in `state`, for the response headers.
    """

    key: str
    limit: tuple[int, int]
    state: RateLimitState | None = None

    def counted(self, state: RateLimitState) -> None:
        """Raises RateLimitedError when the poll is past the limit (and so was not counted)."""
        self.state = state
        if state.blocked:
            raise RateLimitedError(state.retry_after)


class EventQueueBackend(Protocol):
    waiters: Waiters

    def create_queue(self, user_id: int, realm_id: int, options: QueueOptions, *, awaiting_state: bool = False) -> str:
        """A new queue. With `awaiting_state`, its initial state is being read: until
        exclude_events_through says which events that state holds, the queue notes which
        organization event each of its events is."""
        ...

    def publish(
        self, realm_id: int, seq: int, payload: str, event_type: str, audience: Audience, *, force: bool = False
    ) -> int:
        """Append the event to the matching queues of the audience (user ids, or Everyone); returns
        how many queues got it.

        Refused with PredecessorMissing while the realm's event seq - 1 is unpublished (unless
        `force`: those events are lost), with AlreadyPublished when seq is not past the newest
        published (nothing is delivered).
        """
        ...

    def last_published_seqs(self, realm_ids: list[int]) -> dict[int, int]: ...

    def restart_sequence(self, realm_id: int) -> int:
        """The organization's database went back in time (restored from a backup): every queue of
        the organization is deleted (their clients register again, from the database's state: they
        hold what it no longer knows), and what was published of it is forgotten (its events are
        then published again in order from the outbox, as after an empty Redis). Returns how many
        queues were deleted."""
        ...

    def exclude_events_through(self, queue_id: str, seq: int) -> None:
        """The queue's initial state contains its organization's events up to `seq`: drop those
        (and skip them from now on)."""
        ...

    def delete_queue(self, queue_id: str, user_id: int, *, by_client: bool = False) -> None: ...

    def forget_credentials(self, user_ids: list[int], realm_ids: list[int]) -> None: ...

    def outdate_caches(self, name: str, realm_ids: list[int]) -> None:
        """Tell every other process that its cache `name` is stale for these organizations."""

    def sweep(self, now: float) -> list[tuple[str, int]]: ...

    def expired_queue_ids(self, now: float) -> list[str]: ...

    def try_lock(self, name: str, seconds: int) -> bool: ...

    def queue_ids_of_user(self, user_id: int) -> list[str]: ...

    def queue_lengths(self) -> list[int]:
        """How many events each queue holds (in no order): for the metrics, when scraped."""
        ...

    def get_events(self, queue_id: str, user_id: int, last_event_id: int) -> PollStart: ...

    async def begin_poll(
        self, queue_id: str, user_id: int, last_event_id: int, *, waiting: bool, limit: PollLimit | None = None
    ) -> PollStart:
        """Acknowledge through `last_event_id` and return what is queued after it; first count the
        poll against `limit`, if any (past it, RateLimitedError and nothing done)."""
        ...

    async def count_poll(self, limit: PollLimit) -> None:
        """Count against `limit` a poll that does not reach begin_poll (RateLimitedError past it)."""
        ...

    async def add_heartbeat(self, queue_id: str, user_id: int, last_event_id: int) -> list[dict[str, Any]]: ...

    async def start_notifications(self) -> None: ...

    async def stop_notifications(self) -> None: ...
