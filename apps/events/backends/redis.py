"""Event queues in Redis: any server process on any machine serves any queue.

Every operation is one Lua script (redis_scripts.py, which describes the keys), so it is atomic
and costs one round trip.

Each process holds one subscription to the channel and hands each event to its own parked polls;
a waiting poll needs no Redis connection of its own, and a woken one need not read its queue.
Every key of a queue, and each user's index, carries a TTL beyond the queue's life (refreshed by
each poll), so a crash or a stopped sweeper leaks nothing; the expiry index is pruned by the sweep
that runs in every server process.
"""

import asyncio
import contextlib
import json
import logging
import os
import uuid
from typing import Any

import redis
import redis.asyncio
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from apps.core.errors import JsonableError
from apps.core.metrics import count_dependency_error
from apps.core.ratelimit import hit_name, state_of
from apps.core.redis_client import get_async_redis, get_redis, redis_key
from apps.events.backends.base import (
    AlreadyPublished,
    Audience,
    BadEventQueueIdError,
    Everyone,
    PollLimit,
    PollStart,
    PredecessorMissing,
    Waiters,
    check_queue_id,
    count_published,
    count_removed,
    deletion_span,
)
from apps.events.backends.options import QueueOptionsCache
from apps.events.backends.redis_scripts import PRELUDE, SCRIPTS, SHAS
from apps.events.credentials import caches_outdated, credential_cache
from apps.events.registry import QueueOptions

logger = logging.getLogger(__name__)

# A notification subscription silent this long is checked with a PING (see _receive).
NOTIFICATIONS_PING_SECONDS = 5.0
# Keys outlive the queue by this much, only as a safety net for a stopped sweeper.
BACKSTOP_SECONDS = 3600
# The longest a queue may live (queue_lifespan_secs), and so a user's index of queues.
MAX_QUEUE_SECONDS = 7 * 24 * 3600


def _types_field(options: QueueOptions) -> str:
    return "*" if options.event_types is None else "," + ",".join(sorted(options.event_types)) + ","


def _poll_error(status: str, last_event_id: int) -> JsonableError:
    if status == "PRUNED":
        return JsonableError(f"An event newer than {last_event_id} has already been pruned!")
    return JsonableError(f"Event {last_event_id} was not in this queue")


def _decode_events(raw: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(body) for body in raw]


class _ScriptBatcher:
    """Runs the scripts called during one turn of the event loop as one pipeline.

    When a fan-out wakes thousands of polls, their clients all poll again at once; each poll is a
    script call, and sending them together costs one round trip (and one connection) per turn
    instead of one per poll.
    """

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.client = client
        self.pending: list[tuple[str, list, asyncio.Future]] = []

    async def run(self, name: str, args: list) -> Any:
        future = asyncio.get_running_loop().create_future()
        self.pending.append((name, args, future))
        if len(self.pending) == 1:
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._flush()))
        return await future

    async def _flush(self) -> None:
        batch, self.pending = self.pending, []
        try:
            results = await self._execute(batch)
            missing = [i for i, r in enumerate(results) if isinstance(r, redis.exceptions.NoScriptError)]
            if missing:
                # A restarted Redis has forgotten the scripts: load them and run again the calls
                # that did not run (the others did, and must not run twice).
                for body in SCRIPTS.values():
                    await self.client.script_load(PRELUDE + body)
                retried = await self._execute([batch[i] for i in missing])
                for i, result in zip(missing, retried, strict=True):
                    results[i] = result
        except Exception as exc:
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, _, future), result in zip(batch, results, strict=True):
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _execute(self, batch: list[tuple[str, list, asyncio.Future]]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for name, args, _ in batch:
            pipe.evalsha(SHAS[name], 0, *args)
        return await pipe.execute(raise_on_error=False)


class RedisBackend:
    def __init__(self) -> None:
        self.waiters = Waiters()
        # Names this process in the queues it polls (see _BEGIN_POLL); a forked child is another.
        self._process = uuid.uuid4().hex
        os.register_at_fork(after_in_child=self._new_process_name)
        self._sync_scripts: dict[str, Any] = {}
        self._realms_indexed = False
        self.options = QueueOptionsCache()
        self._batchers: dict[asyncio.AbstractEventLoop, _ScriptBatcher] = {}
        self._listener: asyncio.Task | None = None
        self._subscribed: asyncio.Future | None = None

    def _new_process_name(self) -> None:
        self._process = uuid.uuid4().hex

    # --- script plumbing --------------------------------------------------------------------------

    def _run(self, name: str, *args: Any) -> Any:
        if name not in self._sync_scripts:
            self._sync_scripts[name] = get_redis().register_script(PRELUDE + SCRIPTS[name])
        return self._sync_scripts[name](keys=[], args=[settings.REDIS_KEY_PREFIX, *args])

    async def _arun(self, name: str, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None:
            for old in [lp for lp in self._batchers if lp.is_closed()]:
                del self._batchers[old]
            batcher = self._batchers[loop] = _ScriptBatcher(get_async_redis())
        return await batcher.run(name, [settings.REDIS_KEY_PREFIX, *args])

    # --- registration and publishing --------------------------------------------------------------

    def create_queue(self, user_id: int, realm_id: int, options: QueueOptions, *, awaiting_state: bool = False) -> str:
        queue_id = uuid.uuid4().hex
        evicted = self._run(
            "create",
            queue_id,
            user_id,
            realm_id,
            _types_field(options),
            json.dumps(options.to_json()),
            options.lifespan_secs,
            settings.EVENT_QUEUE_MAX_PER_USER,
            BACKSTOP_SECONDS,
            MAX_QUEUE_SECONDS,
            -2 if awaiting_state else 0,
        )
        self.options.forget([q.decode() for q in evicted])
        count_removed("too_many_queues", len(evicted))
        return queue_id

    def publish(
        self, realm_id: int, seq: int, payload: str, event_type: str, audience: Audience, *, force: bool = False
    ) -> int:
        # The script's audience: the user ids, or "*" and the ids left out (see _PUBLISH).
        targets = ("*", *audience.except_ids) if isinstance(audience, Everyone) else audience
        if not self._realms_indexed:
            # Once: the previous version's queues (every audience may be looked up in the index).
            self._run("index_realms", MAX_QUEUE_SECONDS + BACKSTOP_SECONDS)
            self._realms_indexed = True
        status, value, *evicted = self._run(
            "publish",
            payload,
            event_type,
            realm_id,
            seq,
            int(force),
            settings.EVENT_QUEUE_MAX_EVENTS,
            deletion_span(event_type, payload),
            *targets,
        )
        if status == b"GAP":
            raise PredecessorMissing(value)
        if status == b"DUP":
            raise AlreadyPublished(value)
        if status != b"OK":
            return 0
        count_published(event_type)
        count_removed("too_many_events", evicted[0] if evicted else 0)
        return value

    def last_published_seqs(self, realm_ids: list[int]) -> dict[int, int]:
        if not realm_ids:
            return {}
        values = get_redis().mget([redis_key("eq", "rseq", rid) for rid in realm_ids])
        return {rid: int(value) for rid, value in zip(realm_ids, values, strict=True) if value is not None}

    def restart_sequence(self, realm_id: int) -> int:
        client = get_redis()
        deleted = 0
        # Everyone with a queue in the organization is in its index (registering adds them).
        for user_id in sorted(int(uid) for uid in client.smembers(redis_key("rq", realm_id))):
            for queue_id in self.queue_ids_of_user(user_id):
                with contextlib.suppress(BadEventQueueIdError):  # expired meanwhile
                    self.delete_queue(queue_id, user_id)
                    deleted += 1
        client.delete(redis_key("eq", "rseq", realm_id))
        return deleted

    def exclude_events_through(self, queue_id: str, seq: int) -> None:
        check_queue_id(queue_id)
        self._run("exclude", queue_id, seq)

    def delete_queue(self, queue_id: str, user_id: int, *, by_client: bool = False) -> None:
        check_queue_id(queue_id)
        if not self._run("delete", queue_id, user_id, "c" if by_client else "d"):
            raise BadEventQueueIdError(queue_id)
        count_removed("deleted")
        self.options.forget([queue_id])

    def forget_credentials(self, user_ids: list[int], realm_ids: list[int]) -> None:
        """Drop cached credentials in every process (this one too, even if it does not listen)."""
        credential_cache.forget(user_ids, realm_ids)
        targets = [f"u:{uid}" for uid in user_ids] + [f"r:{rid}" for rid in realm_ids]
        if targets:
            get_redis().publish(redis_key("eq", "notify"), "a " + " ".join(targets))

    def outdate_caches(self, name: str, realm_ids: list[int]) -> None:
        get_redis().publish(redis_key("eq", "notify"), f"o {name} " + " ".join(map(str, realm_ids)))

    def sweep(self, now: float) -> list[tuple[str, int]]:
        """Delete the queues whose time is up (Redis's clock decides; `now` is unused here)."""
        removed: list[tuple[str, int]] = []
        while True:
            flat = self._run("sweep", 1000)
            pairs = [(flat[i].decode(), int(flat[i + 1] or 0)) for i in range(0, len(flat), 2)]
            removed.extend(pairs)
            self.options.forget([queue_id for queue_id, _ in pairs])
            if len(pairs) < 1000:
                return removed

    def expired_queue_ids(self, now: float) -> list[str]:
        seconds, micros = get_redis().time()
        expired = get_redis().zrangebyscore(redis_key("eq", "expiry"), "-inf", seconds + micros / 1e6)
        return sorted(q.decode() for q in expired)

    def try_lock(self, name: str, seconds: int) -> bool:
        """True for the one process that takes `name` for the next `seconds`."""
        return bool(get_redis().set(redis_key("eq", "lock", name), "1", nx=True, ex=max(seconds - 1, 1)))

    def queue_ids_of_user(self, user_id: int) -> list[str]:
        return sorted(q.decode() for q in get_redis().hkeys(redis_key("uq", user_id)))

    def queue_lengths(self) -> list[int]:
        """One ZCARD per queue listed in the expiry index, pipelined in batches."""
        client = get_redis()
        queue_ids = client.zrange(redis_key("eq", "expiry"), 0, -1)
        lengths: list[int] = []
        for start in range(0, len(queue_ids), 1000):
            pipe = client.pipeline(transaction=False)
            for queue_id in queue_ids[start : start + 1000]:
                pipe.zcard(redis_key("eq", queue_id.decode(), "ev"))
            lengths.extend(pipe.execute())
        return lengths

    def get_events(self, queue_id: str, user_id: int, last_event_id: int) -> PollStart:
        check_queue_id(queue_id)
        result = self._run("begin_poll", *self._begin_poll_args(queue_id, user_id, last_event_id, 0, None))
        return self._takeover(self._poll_start(result, queue_id, last_event_id, None), queue_id)

    # --- polling ------------------------------------------------------------------------------------

    async def begin_poll(
        self, queue_id: str, user_id: int, last_event_id: int, *, waiting: bool, limit: PollLimit | None = None
    ) -> PollStart:
        check_queue_id(queue_id)
        lease = settings.EVENTS_HEARTBEAT_SECONDS[1] + 5 if waiting else 0
        result = await self._arun("begin_poll", *self._begin_poll_args(queue_id, user_id, last_event_id, lease, limit))
        return self._takeover(self._poll_start(result, queue_id, last_event_id, limit), queue_id)

    async def count_poll(self, limit: PollLimit) -> None:
        limit.counted(state_of(limit.limit, await self._arun("count_poll", *self._limit_args(limit))))

    def _begin_poll_args(
        self, queue_id: str, user_id: int, last_event_id: int, lease: float, limit: PollLimit | None
    ) -> tuple:
        common = (queue_id, user_id, last_event_id, lease, BACKSTOP_SECONDS, MAX_QUEUE_SECONDS, self._process)
        return (*common, *self._limit_args(limit))

    def _limit_args(self, limit: PollLimit | None) -> tuple:
        """The rate limit's arguments of the scripts: in Redis, every process counts in one place."""
        if limit is None:
            return ("", 0, 0, "")
        count, window = limit.limit
        return (limit.key, window * 1000, count, hit_name())

    def _takeover(self, start: PollStart, queue_id: str) -> PollStart:
        """End this process's earlier polls of the queue (other processes hear of it from Redis)."""
        self.waiters.takeover(queue_id, start.poll_number)
        return start

    async def add_heartbeat(self, queue_id: str, user_id: int, last_event_id: int) -> list[dict[str, Any]]:
        check_queue_id(queue_id)
        return self._events(await self._arun("heartbeat", queue_id, user_id, last_event_id), queue_id)

    def _poll_start(self, result: list, queue_id: str, last_event_id: int, limit: PollLimit | None) -> PollStart:
        if limit is not None:
            limit.counted(state_of(limit.limit, result[1]))
        status = result[0].decode()
        if status == "BAD":
            raise BadEventQueueIdError(queue_id)
        if status != "OK":
            raise _poll_error(status, last_event_id)
        return PollStart(_decode_events(result[3]), self.options.get(queue_id, result[2]), int(result[4]))

    @staticmethod
    def _events(result: list, queue_id: str) -> list[dict[str, Any]]:
        if result[0].decode() == "BAD":
            raise BadEventQueueIdError(queue_id)
        return _decode_events(result[1])

    # --- waking parked polls --------------------------------------------------------------------------

    async def start_notifications(self) -> None:
        """Make sure this process listens to the notification channel (returns once subscribed)."""
        loop = asyncio.get_running_loop()
        task = self._listener
        if task is not None and not task.done() and task.get_loop() is loop:
            await asyncio.shield(self._subscribed)
            return
        self._subscribed = loop.create_future()
        self._listener = loop.create_task(self._listen(self._subscribed), name="parley-event-notifications")
        await asyncio.shield(self._subscribed)

    async def _listen(self, subscribed: asyncio.Future) -> None:
        """Hold the process's subscription, and take it again whenever it breaks.

        A broken subscription is taken again at once (a connection Redis closed, or a Redis already
        back). If that fails, Redis is down: the polls waiting here are answered (503) rather than
        left waiting for notifications that cannot come, and so is any that parks until the
        subscription is back, which is tried every second at most. Once subscribed again, every
        waiting poll ends ("resync": notifications published meanwhile were missed) and nothing
        cached that a missed notification may have made stale is kept.
        """
        channel = redis_key("eq", "notify")
        failures = 0  # attempts to subscribe that failed since the subscription last worked
        while True:
            # Named, so that CLIENT LIST tells a server's notification listeners apart. redis-py
            # must not reconnect by itself: it would subscribe again without telling, and the
            # notifications missed meanwhile would go unnoticed.
            options = {
                **settings.REDIS_ASYNC_CONNECTION_KWARGS,
                "retry": AsyncRetry(NoBackoff(), 0),
                "health_check_interval": 0,
                "client_name": f"{settings.REDIS_KEY_PREFIX}:notifications",
            }
            client = redis.asyncio.Redis.from_url(settings.REDIS_URL, **options)
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(channel)
                if not subscribed.done():
                    subscribed.set_result(None)
                    credential_cache.clear()  # trusted again, if a first attempt failed
                else:
                    logger.warning("event notifications subscribed again; waiting polls re-read their queues")
                    credential_cache.clear()
                    self.options.clear()
                    self.waiters.notify_all("resync")
                failures = 0
                await self._receive(pubsub)
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                count_dependency_error("redis")
                # Deaf to the changes that make cached credentials wrong (a key rotated, someone
                # deactivated): requests read the database until subscribed again.
                credential_cache.clear(trusted=False)
                if not subscribed.done():
                    subscribed.set_exception(exc)
                    return
                if failures == 0:
                    logger.warning("event notifications interrupted, subscribing again: %s", exc)
                else:
                    if failures == 1:
                        logger.warning("event notifications unavailable, waiting polls answered 503: %s", exc)
                    self.waiters.notify_all("unavailable")
                failures += 1
            finally:
                await pubsub.aclose()
                await client.aclose()
            if failures > 1:
                await asyncio.sleep(min(0.1 * 2 ** (failures - 2), 1.0))

    async def _receive(self, pubsub: redis.asyncio.client.PubSub) -> None:
        """Dispatch notifications until the subscription breaks.

        A subscription silent for NOTIFICATIONS_PING_SECONDS is pinged: no answer within
        REDIS_SOCKET_TIMEOUT means a Redis that is gone without closing the connection (paused,
        or cut off by the network), which reading alone would wait on forever.
        """
        loop = asyncio.get_running_loop()
        answer_by = None  # when the PING sent must have been answered
        while True:
            wait = NOTIFICATIONS_PING_SECONDS if answer_by is None else max(answer_by - loop.time(), 0.0)
            message = await pubsub.get_message(timeout=wait)
            if message is not None:
                answer_by = None
                if message["type"] == "message":
                    self._dispatch(message["data"].decode())
            elif answer_by is None:
                await pubsub.ping()
                answer_by = loop.time() + settings.REDIS_SOCKET_TIMEOUT
            elif loop.time() >= answer_by:
                raise redis.TimeoutError(f"no answer from Redis in {settings.REDIS_SOCKET_TIMEOUT}s")

    def _dispatch(self, data: str) -> None:
        kind, _, rest = data.partition(" ")
        if kind == "e":
            targets, _, payload = rest.partition("\n")
            ids_by_queue, published = [], 0.0
            for qid, _, value in (t.partition(":") for t in targets.split()):
                if qid == "published":  # when (Redis's clock, ms): see _PUBLISH
                    published = int(value) / 1000
                else:
                    ids_by_queue.append((qid, int(value)))
            self.waiters.deliver(json.loads(payload), ids_by_queue, published)
        elif kind in ("d", "c"):  # deleted; closed by its client
            queue_ids = rest.split()
            self.options.forget(queue_ids)
            self.waiters.notify(queue_ids, "deleted" if kind == "d" else "closed")
        elif kind == "r":
            self.waiters.notify(rest.split(), "resync")
        elif kind == "a":
            targets = [t.partition(":") for t in rest.split()]
            credential_cache.forget(
                [int(i) for k, _, i in targets if k == "u"], [int(i) for k, _, i in targets if k == "r"]
            )
        elif kind == "t":
            queue_id, _, number = rest.partition(" ")
            self.waiters.takeover(queue_id, int(number))
        elif kind == "o":
            name, *realm_ids = rest.split()
            caches_outdated.call(name, [int(i) for i in realm_ids])

    async def stop_notifications(self) -> None:
        task, self._listener = self._listener, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
