"""Event queues in Redis: any server process on any machine serves any queue.

Every operation is one Lua script, so it is atomic and costs one round trip. Keys (prefix P):

    P:eq:<queue>        hash: user, realm, types, options, lifespan, created, next (event id),
                        pruned (newest acknowledged id), poll (how many polls the queue has had),
                        process (where the latest poll began)
    P:eq:<queue>:ev     sorted set: the queue's events as JSON, scored by their id
    P:eq:<queue>:ob     hash: organization event seq -> event id, kept until the queue's initial
                        state is known (see exclude)
    P:uq:<user>         hash: queue -> "event types|created|key TTL|state seq", the user's queues
                        (publishing walks it; events up to "state seq" are in the initial state;
                        -2 while that state is being read, 0 for a queue without one)
    P:eq:rseq:<realm>   the organization's newest published event seq (events go out in seq order)
    P:eq:expiry         sorted set: queue -> time it expires unless polled again (the sweep reads it)
    P:eq:notify         channel: "e q1:id1 q2:id2<newline><event>": an event, its id in each queue;
                        "d q1" deleted, "r q1" q1 has an event the notification cannot carry
                        (read the queue), "t q 7" poll number 7 began on q (earlier ones end; sent
                        when the poll before it began in another process),
                        "a u:5 r:2" credentials of user 5 / organization 2 changed
    P:ratelimit:events_by_user:<user>   the user's polls in the rate limit's window, counted by the
                        poll's own script (apps/core/ratelimit.py's sliding window)

Each process holds one subscription to the channel and hands each event to its own parked polls;
a waiting poll needs no Redis connection of its own, and a woken one need not read its queue.
Every key of a queue, and each user's index, carries a TTL beyond the queue's life (refreshed by
each poll), so a crash or a stopped sweeper leaks nothing; the expiry index is pruned by the sweep
that runs in every server process.
"""

import asyncio
import contextlib
import hashlib
import itertools
import json
import logging
import os
import threading
import uuid
from collections import OrderedDict
from typing import Any

import redis
import redis.asyncio
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff

from apps.core.errors import JsonableError
from apps.core.ratelimit import SLIDING_WINDOW_LUA_FUNCTION, state_of
from apps.core.redis_client import get_async_redis, get_redis, redis_key
from apps.events.backends import (
    BadEventQueueIdError,
    PollLimit,
    PollStart,
    PredecessorMissing,
    Waiters,
    check_queue_id,
    deletion_span,
)
from apps.events.credentials import credential_cache
from apps.events.registry import QueueOptions

logger = logging.getLogger(__name__)

# A notification subscription silent this long is checked with a PING (see _receive).
NOTIFICATIONS_PING_SECONDS = 5.0
# Keys outlive the queue by this much, only as a safety net for a stopped sweeper.
BACKSTOP_SECONDS = 3600
# The longest a queue may live (queue_lifespan_secs), and so a user's index of queues.
MAX_QUEUE_SECONDS = 7 * 24 * 3600

_PRELUDE = (
    SLIDING_WINDOW_LUA_FUNCTION
    + """
local p = ARGV[1]
local notify = p .. ':eq:notify'
local expiry = p .. ':eq:expiry'
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local function qkey(qid) return p .. ':eq:' .. qid end
local function drop(qid, uid)
  local k = qkey(qid)
  if not uid then uid = redis.call('HGET', k, 'user') end
  redis.call('DEL', k, k .. ':ev', k .. ':ob')
  if uid then redis.call('HDEL', p .. ':uq:' .. uid, qid) end
  redis.call('ZREM', expiry, qid)
end
local function entry_fields(entry)
  return string.match(entry, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
end
local function keep(qid, seconds)
  local k = qkey(qid)
  for _, key in ipairs({k, k .. ':ev', k .. ':ob'}) do
    redis.call('EXPIRE', key, math.ceil(seconds))
  end
end
"""
)

# ARGV: prefix, queue, user, realm, types, options, lifespan, max_per_user, backstop, longest queue life,
# state seq (-2: an initial state is being read, exclude will say which events it holds; 0: none)
_CREATE = """
local qid, uid, lifespan = ARGV[2], ARGV[3], tonumber(ARGV[7])
local uq = p .. ':uq:' .. uid
local live = {}
for _, q in ipairs(redis.call('HKEYS', uq)) do
  local score = redis.call('ZSCORE', expiry, q)
  local life = redis.call('HGET', qkey(q), 'lifespan')
  if score and life then
    -- When it was last used: its expiry less its lifespan (a waiting poll's lease counts as use).
    table.insert(live, {q, tonumber(score) - tonumber(life)})
  else
    redis.call('HDEL', uq, q)
  end
end
table.sort(live, function(a, b) return a[2] < b[2] end)
local evicted = {}
local i = 1
while #live - #evicted >= tonumber(ARGV[8]) do
  drop(live[i][1], uid)
  table.insert(evicted, live[i][1])
  i = i + 1
end
local t = now()
redis.call('HSET', qkey(qid), 'user', uid, 'realm', ARGV[4], 'types', ARGV[5], 'options', ARGV[6],
  'lifespan', lifespan, 'created', t, 'next', 0, 'pruned', -1)
keep(qid, lifespan + tonumber(ARGV[9]))
redis.call('HSET', uq, qid, ARGV[5] .. '|' .. t .. '|' .. (lifespan + tonumber(ARGV[9]) + 60) .. '|' .. ARGV[11])
redis.call('EXPIRE', uq, tonumber(ARGV[10]) + tonumber(ARGV[9]))
redis.call('ZADD', expiry, t + lifespan, qid)
if #evicted > 0 then redis.call('PUBLISH', notify, 'd ' .. table.concat(evicted, ' ')) end
return evicted
"""

# ARGV: prefix, payload, event type, realm, seq, force (1/0), max events, deletion span, user ids...
_PUBLISH = """
local payload, etype, seq = ARGV[2], ',' .. ARGV[3] .. ',', tonumber(ARGV[5])
local rseq = p .. ':eq:rseq:' .. ARGV[4]
-- None published yet counts as 0: an organization's first event is 1, and a later one cannot
-- overtake it (its publish failed while queues were waiting for it).
local last = tonumber(redis.call('GET', rseq) or '0')
if seq <= last then return {'DUP', last} end
if seq > last + 1 and ARGV[6] ~= '1' then return {'GAP', last} end
redis.call('SET', rseq, seq, 'EX', 7 * 24 * 3600)
local max_events, span = tonumber(ARGV[7]), tonumber(ARGV[8])
local event_tail = string.sub(payload, 2)
local t = now()
local woken, evicted, reread = {}, {}, {}
-- Whether the queue's client takes deletions one message at a time (see deletion_span).
local function one_by_one(k)
  local options = redis.call('HGET', k, 'options')
  if not options then return false end
  local capabilities = cjson.decode(options)['client_capabilities']
  return not (type(capabilities) == 'table' and capabilities['bulk_message_deletion'] == true)
end
for i = 9, #ARGV do
  local uid = ARGV[i]
  local uq = p .. ':uq:' .. uid
  local entries = redis.call('HGETALL', uq)
  for j = 1, #entries, 2 do
    local qid = entries[j]
    local types, created, ttl, since = entry_fields(entries[j + 1])
    local state_seq = tonumber(since)
    if (types == '*' or string.find(types, etype, 1, true)) and seq > state_seq then
      local k = qkey(qid)
      local ids = 1
      if span > 1 and one_by_one(k) then ids = span end
      local eid = redis.call('HINCRBY', k, 'next', ids) - 1
      if eid == ids - 1 and redis.call('HEXISTS', k, 'user') == 0 then
        -- The queue expired (its keys' TTL) while still listed: forget it.
        redis.call('DEL', k)
        redis.call('HDEL', uq, qid)
        eid = nil
      end
      if eid then
        local spanned = ''
        if ids > 1 then spanned = '"span": ' .. ids .. ', ' end
        redis.call('ZADD', k .. ':ev', eid, '{"id": ' .. eid .. ', ' .. spanned .. event_tail)
        local queued = redis.call('ZCARD', k .. ':ev')
        -- A new key (the queue was empty) needs its TTL; polls refresh it later (see keep).
        if queued == 1 then redis.call('EXPIRE', k .. ':ev', ttl) end
        -- Only a queue whose initial state is being read (-2) keeps track of which event went
        -- where. -1 is what the previous version wrote for every new queue, relying on their
        -- first 30 s instead: kept while both versions may serve one Redis (during a deploy).
        if state_seq == -2 or (state_seq == -1 and t - tonumber(created) < 30) then
          redis.call('HSET', k .. ':ob', seq, eid)
          redis.call('EXPIRE', k .. ':ob', redis.call('TTL', k))
        end
        if queued > max_events then
          drop(qid, uid)
          table.insert(evicted, qid)
        elseif ids > 1 then
          table.insert(reread, qid)  -- the notification carries the event without its span
        else
          table.insert(woken, qid .. ':' .. eid)
        end
      end
    end
  end
end
if #woken > 0 then redis.call('PUBLISH', notify, 'e ' .. table.concat(woken, ' ') .. '\\n' .. payload) end
if #reread > 0 then redis.call('PUBLISH', notify, 'r ' .. table.concat(reread, ' ')) end
if #evicted > 0 then redis.call('PUBLISH', notify, 'd ' .. table.concat(evicted, ' ')) end
return {'OK', #woken + #reread}
"""

# ARGV: prefix, queue, user, last event id, lease seconds (the poll's longest wait), backstop, longest queue life,
# the polling process, then the rate limit the poll counts against: its key ('' for none), window (ms), count,
# and a name for this hit. Every answer carries the rate limit's sliding_window() answer ({} for none).
_BEGIN_POLL = """
local qid, last, lease = ARGV[2], tonumber(ARGV[4]), tonumber(ARGV[5])
local t = now()
local counted = {}
if ARGV[9] ~= '' then
  local key = p .. ':ratelimit:' .. ARGV[9]
  counted = sliding_window(key, tonumber(ARGV[10]), tonumber(ARGV[11]), ARGV[12], true, math.floor(t * 1000))
  if counted[1] == 0 then return {'LIMITED', counted} end
end
local k = qkey(qid)
local q = redis.call('HMGET', k, 'user', 'pruned', 'lifespan', 'options', 'process')
if not q[1] or q[1] ~= ARGV[3] then return {'BAD', counted} end
local pruned = tonumber(q[2])
if last < pruned then return {'PRUNED', counted} end
local top = redis.call('ZREVRANGEBYSCORE', k .. ':ev', last, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
local newest = pruned
if #top > 0 then newest = tonumber(top[2]) end
if last ~= newest then return {'NOTIN', counted} end
if #top > 0 then
  redis.call('ZREMRANGEBYSCORE', k .. ':ev', '-inf', last)
  redis.call('HSET', k, 'pruned', last)
end
local lifespan = tonumber(q[3])
redis.call('ZADD', expiry, t + lifespan + lease, qid)
keep(qid, lifespan + lease + tonumber(ARGV[6]))
redis.call('EXPIRE', p .. ':uq:' .. ARGV[3], tonumber(ARGV[7]) + tonumber(ARGV[6]))
local number = redis.call('HINCRBY', k, 'poll', 1)
-- The process of this poll ends its own earlier polls; others hear of it.
if q[5] ~= ARGV[8] then
  redis.call('HSET', k, 'process', ARGV[8])
  redis.call('PUBLISH', notify, 't ' .. qid .. ' ' .. number)
end
return {'OK', counted, q[4], redis.call('ZRANGEBYSCORE', k .. ':ev', '(' .. last, '+inf'), number}
"""

# ARGV: prefix, then the rate limit's key, window (ms), count and a name for this hit
_COUNT_POLL = """
return sliding_window(p .. ':ratelimit:' .. ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], true)
"""

# ARGV: prefix, queue, user, last event id
_HEARTBEAT = """
local k = qkey(ARGV[2])
if redis.call('HGET', k, 'user') ~= ARGV[3] then return {'BAD'} end
local eid = redis.call('HINCRBY', k, 'next', 1) - 1
redis.call('ZADD', k .. ':ev', eid, '{"id": ' .. eid .. ', "type": "heartbeat"}')
redis.call('EXPIRE', k .. ':ev', redis.call('TTL', k))
return {'OK', redis.call('ZRANGEBYSCORE', k .. ':ev', '(' .. ARGV[4], '+inf')}
"""

# ARGV: prefix, queue, user
_DELETE = """
if redis.call('HGET', qkey(ARGV[2]), 'user') ~= ARGV[3] then return 0 end
drop(ARGV[2], ARGV[3])
redis.call('PUBLISH', notify, 'd ' .. ARGV[2])
return 1
"""

# ARGV: prefix, queue, seq (the initial state contains the organization's events up to it)
_EXCLUDE = """
local qid, seq = ARGV[2], tonumber(ARGV[3])
local k = qkey(qid)
local uid = redis.call('HGET', k, 'user')
if not uid then return 0 end
local published = redis.call('HGETALL', k .. ':ob')
for j = 1, #published, 2 do
  if tonumber(published[j]) <= seq then
    redis.call('ZREMRANGEBYSCORE', k .. ':ev', published[j + 1], published[j + 1])
  end
end
redis.call('DEL', k .. ':ob')
local uq = p .. ':uq:' .. uid
local entry = redis.call('HGET', uq, qid)
if entry then
  local types, created, ttl = entry_fields(entry)
  redis.call('HSET', uq, qid, types .. '|' .. created .. '|' .. ttl .. '|' .. seq)
end
return 1
"""

# ARGV: prefix, batch size
_SWEEP = """
local expired = redis.call('ZRANGEBYSCORE', expiry, '-inf', now(), 'LIMIT', 0, tonumber(ARGV[2]))
local removed = {}
for _, qid in ipairs(expired) do
  local uid = redis.call('HGET', qkey(qid), 'user')
  drop(qid, uid)
  table.insert(removed, qid)
  table.insert(removed, uid or '')
end
if #expired > 0 then redis.call('PUBLISH', notify, 'd ' .. table.concat(expired, ' ')) end
return removed
"""

_SCRIPTS = {
    "create": _CREATE,
    "publish": _PUBLISH,
    "begin_poll": _BEGIN_POLL,
    "count_poll": _COUNT_POLL,
    "heartbeat": _HEARTBEAT,
    "delete": _DELETE,
    "exclude": _EXCLUDE,
    "sweep": _SWEEP,
}


def _types_field(options: QueueOptions) -> str:
    return "*" if options.event_types is None else "," + ",".join(sorted(options.event_types)) + ","


def _poll_error(status: str, last_event_id: int) -> JsonableError:
    if status == "PRUNED":
        return JsonableError(f"An event newer than {last_event_id} has already been pruned!")
    return JsonableError(f"Event {last_event_id} was not in this queue")


class _SharedOptions:
    __slots__ = ("options", "queues", "raw")

    def __init__(self, raw: bytes, options: QueueOptions) -> None:
        self.raw, self.options, self.queues = raw, options, 0


class QueueOptionsCache:
    """The parsed options of the queues this process polls, so that a poll need not parse them.

    Kept per queue (a queue's options never change) and dropped when the queue is deleted; queues
    registered alike share one parsed copy. Bounded by size: the JSON of each distinct options is
    counted once, each queue's entry PER_QUEUE_BYTES; past `max_bytes` the queues polled least
    recently leave first (their next poll parses their options again).
    """

    MAX_BYTES = 16 * 2**20
    PER_QUEUE_BYTES = 200

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._by_queue: OrderedDict[str, _SharedOptions] = OrderedDict()
        self._by_raw: dict[bytes, _SharedOptions] = {}
        self._lock = threading.Lock()

    def get(self, queue_id: str, raw: bytes) -> QueueOptions:
        """The options of `queue_id`, whose stored form is `raw`."""
        with self._lock:
            shared = self._by_queue.get(queue_id)
            if shared is not None:
                self._by_queue.move_to_end(queue_id)
                return shared.options
            shared = self._by_raw.get(raw)
            if shared is None:
                shared = self._by_raw[raw] = _SharedOptions(raw, QueueOptions.from_json(json.loads(raw)))
                self.size += len(raw)
            shared.queues += 1
            self._by_queue[queue_id] = shared
            self.size += self.PER_QUEUE_BYTES
            while self.size > self.max_bytes and self._by_queue:
                self._release(self._by_queue.popitem(last=False)[1])
            return shared.options

    def forget(self, queue_ids: list[str]) -> None:
        """These queues are deleted."""
        with self._lock:
            for queue_id in queue_ids:
                shared = self._by_queue.pop(queue_id, None)
                if shared is not None:
                    self._release(shared)

    def clear(self) -> None:
        with self._lock:
            self._by_queue.clear()
            self._by_raw.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self._by_queue)

    def _release(self, shared: _SharedOptions) -> None:
        self.size -= self.PER_QUEUE_BYTES
        shared.queues -= 1
        if not shared.queues:
            del self._by_raw[shared.raw]
            self.size -= len(shared.raw)


def _decode_events(raw: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(body) for body in raw]


_SHAS = {name: hashlib.sha1((_PRELUDE + body).encode()).hexdigest() for name, body in _SCRIPTS.items()}  # noqa: S324


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
                for body in _SCRIPTS.values():
                    await self.client.script_load(_PRELUDE + body)
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
            pipe.evalsha(_SHAS[name], 0, *args)
        return await pipe.execute(raise_on_error=False)


class RedisBackend:
    def __init__(self) -> None:
        self.waiters = Waiters()
        # Names this process in the queues it polls (see _BEGIN_POLL); a forked child is another.
        self._process = uuid.uuid4().hex
        self._hits = itertools.count()  # names this process's hits of rate limits (with _process)
        os.register_at_fork(after_in_child=self._new_process_name)
        self._sync_scripts: dict[str, Any] = {}
        self.options = QueueOptionsCache()
        self._batchers: dict[asyncio.AbstractEventLoop, _ScriptBatcher] = {}
        self._listener: asyncio.Task | None = None
        self._subscribed: asyncio.Future | None = None

    def _new_process_name(self) -> None:
        self._process = uuid.uuid4().hex

    # --- script plumbing --------------------------------------------------------------------------

    def _run(self, name: str, *args: Any) -> Any:
        if name not in self._sync_scripts:
            self._sync_scripts[name] = get_redis().register_script(_PRELUDE + _SCRIPTS[name])
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
        return queue_id

    def publish(
        self, realm_id: int, seq: int, payload: str, event_type: str, user_ids: list[int], *, force: bool = False
    ) -> int:
        status, value = self._run(
            "publish",
            payload,
            event_type,
            realm_id,
            seq,
            int(force),
            settings.EVENT_QUEUE_MAX_EVENTS,
            deletion_span(event_type, payload),
            *user_ids,
        )
        if status == b"GAP":
            raise PredecessorMissing(value)
        return value if status == b"OK" else 0

    def last_published_seqs(self, realm_ids: list[int]) -> dict[int, int]:
        if not realm_ids:
            return {}
        values = get_redis().mget([redis_key("eq", "rseq", rid) for rid in realm_ids])
        return {rid: int(value) for rid, value in zip(realm_ids, values, strict=True) if value is not None}

    def exclude_events_through(self, queue_id: str, seq: int) -> None:
        check_queue_id(queue_id)
        self._run("exclude", queue_id, seq)

    def delete_queue(self, queue_id: str, user_id: int) -> None:
        check_queue_id(queue_id)
        if not self._run("delete", queue_id, user_id):
            raise BadEventQueueIdError(queue_id)
        self.options.forget([queue_id])

    def forget_credentials(self, user_ids: list[int], realm_ids: list[int]) -> None:
        """Drop cached credentials in every process (this one too, even if it does not listen)."""
        credential_cache.forget(user_ids, realm_ids)
        targets = [f"u:{uid}" for uid in user_ids] + [f"r:{rid}" for rid in realm_ids]
        if targets:
            get_redis().publish(redis_key("eq", "notify"), "a " + " ".join(targets))

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
        return (limit.key, window * 1000, count, f"{self._process}:{next(self._hits)}")

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
                else:
                    logger.warning("event notifications subscribed again; waiting polls re-read their queues")
                    credential_cache.clear()
                    self.options.clear()
                    self.waiters.notify_all("resync")
                failures = 0
                await self._receive(pubsub)
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
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
            ids_by_queue = [(qid, int(event_id)) for qid, _, event_id in (t.partition(":") for t in targets.split())]
            self.waiters.deliver(json.loads(payload), ids_by_queue)
        elif kind == "d":
            queue_ids = rest.split()
            self.options.forget(queue_ids)
            self.waiters.notify(queue_ids, "deleted")
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

    async def stop_notifications(self) -> None:
        task, self._listener = self._listener, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
