"""Sliding-window rate limits, in Redis when configured (shared by every process) or in-process.

A limit is `(count, window_seconds)`: at most `count` recorded hits in any `window_seconds`. A hit
may weigh more than one (`cost`: e.g. the channels one request creates); it is recorded whole or
not at all.
"""

import hashlib
import itertools
import logging
import math
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import redis
import redis.exceptions
from django.conf import settings

from apps.core.errors import RateLimitedError
from apps.core.metrics import count_dependency_error
from apps.core.redis_client import RedisLeftAlone, get_redis, redis_guarded, redis_key

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RateLimitState:
    limit: int
    remaining: int
    reset: int  # UNIX time at which a slot frees up (X-RateLimit-Reset)
    retry_after: float | None  # seconds until the next hit is allowed, when blocked

    @property
    def blocked(self) -> bool:
        return self.retry_after is not None

    def headers(self) -> dict[str, str]:
        return dict(zip(HEADER_NAMES, map(str, (self.limit, self.remaining, self.reset)), strict=True))

    def asgi_headers(self) -> list[tuple[bytes, bytes]]:
        """The same headers as ASGI sends them (for the long-poll route, which answers without Django)."""
        values = (self.limit, self.remaining, self.reset)
        return [(name, b"%d" % value) for name, value in zip(_ASGI_HEADER_NAMES, values, strict=True)]


HEADER_NAMES = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
_ASGI_HEADER_NAMES = tuple(name.lower().encode() for name in HEADER_NAMES)


# sliding_window(key, window_ms, limit, member, record[, now_ms[, cost]]): removes expired hits
# from the sorted set `key` (hit times in ms), then records this one (`cost` entries named after
# `member`, unique; 1 unless given) if `record` and there is room for all of them. Uses Redis's clock
# (read here unless the caller has read it), so servers whose clocks disagree still share one
# window. Returns {recorded?, count, frees_ms, now_ms}: frees_ms is the time of the hit whose expiry
# makes room (the oldest, unless refused); see state_of(). A Lua function, for scripts that count a
# request along with their own work (the long-poll's, apps/events/backends/redis.py).
SLIDING_WINDOW_LUA_FUNCTION = """
local function sliding_window(key, window, limit, member, record, now, cost)
  if not now then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  cost = cost or 1
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  local recorded = 0
  if record and count + cost <= limit then
    if cost == 1 then
      redis.call('ZADD', key, now, member)
    else
      for i = 1, cost do
        redis.call('ZADD', key, now, member .. ':' .. i)
      end
    end
    redis.call('PEXPIRE', key, window)
    count = count + cost
    recorded = 1
  end
  local frees = 0
  if recorded == 0 then
    frees = math.max(count + cost - limit - 1, 0)
  end
  local hit = redis.call('ZRANGE', key, frees, frees, 'WITHSCORES')
  return {recorded, count, hit[2] or tostring(now), tostring(now)}
end
"""

# KEYS[1]: the sorted set. ARGV: window_ms, limit, member, record (1/0), cost.
_SLIDING_WINDOW_LUA = (
    SLIDING_WINDOW_LUA_FUNCTION
    + "return sliding_window(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4] == '1', nil,"
    + " tonumber(ARGV[5]))"
)


# Redis names a script by its SHA-1 (not a security use).
_SLIDING_WINDOW_SHA = hashlib.sha1(_SLIDING_WINDOW_LUA.encode(), usedforsecurity=False).hexdigest()

# KEYS[1]: the sorted set. ARGV: window_ms, limit, member, want, then the names of hits to give
# back (a lease's unused rest, see Leases). Records as many of `want` hits as there is room for
# (named `member` when one, else `member:1`...), or refuses one when there is none. Returns
# {granted, sliding_window's answer}.
_LEASE_LUA = (
    SLIDING_WINDOW_LUA_FUNCTION
    + """
local key, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 5, #ARGV do
  redis.call('ZREM', key, ARGV[i])
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local granted = math.max(math.min(tonumber(ARGV[4]), limit - redis.call('ZCARD', key)), 1)
local answer = sliding_window(key, window, limit, ARGV[3], true, now, granted)
return {granted, answer[1], answer[2], answer[3], answer[4]}
"""
)
_LEASE_SHA = hashlib.sha1(_LEASE_LUA.encode(), usedforsecurity=False).hexdigest()

# Recorded hits are named after the process (renamed in a forked child) and a counter: unique
# across the servers that share a Redis, and cheaper than a UUID each.
_process_name = uuid.uuid4().hex
_hit_numbers = itertools.count()


def _rename_process() -> None:
    global _process_name
    _process_name = uuid.uuid4().hex


os.register_at_fork(after_in_child=_rename_process)


def hit_name() -> str:
    """A name for one recorded hit, unique among all the hits of all processes."""
    return f"{_process_name}:{next(_hit_numbers)}"


class InProcessBackend:
    """For the embedded default (one server process). Thread-safe; expired keys are swept."""

    SWEEP_INTERVAL = 60.0

    def __init__(self) -> None:
        self._hits: dict[str, tuple[int, deque[float]]] = {}
        self._lock = threading.Lock()
        self._next_sweep = 0.0

    def hit(
        self, key: str, limit: int, window: int, *, record: bool, cost: int = 1, name: str | None = None
    ) -> tuple[bool, int, float, float]:
        now = time.time()
        with self._lock:
            if now >= self._next_sweep:
                self._sweep(now)
            hits = self._hits.setdefault(key, (window, deque()))[1]
            while hits and hits[0] <= now - window:
                hits.popleft()
            recorded = record and len(hits) + cost <= limit
            if recorded:
                hits.extend([now] * cost)
            count = len(hits)
            frees = 0 if recorded else max(count + cost - limit - 1, 0)
            frees_at = hits[frees] if hits else now
            if not hits:
                del self._hits[key]
        return recorded, count, frees_at, now

    def _sweep(self, now: float) -> None:
        """Forget keys whose newest hit is out of their window (clients that went away)."""
        expired = [key for key, (window, hits) in self._hits.items() if not hits or hits[-1] <= now - window]
        for key in expired:
            del self._hits[key]
        self._next_sweep = now + self.SWEEP_INTERVAL

    def clear(self, key: str) -> None:
        with self._lock:
            self._hits.pop(key, None)

    def take_back(self, key: str, name: str) -> None:
        """Hits are not named here: the newest one goes (a server of one process: it is most
        likely this one)."""
        with self._lock:
            if hits := self._hits.get(key, (0, None))[1]:
                hits.pop()

    def reset_all(self) -> None:
        with self._lock:
            self._hits.clear()


def _hit_of(answer: list) -> tuple[bool, int, float, float]:
    """sliding_window()'s answer as InProcessBackend.hit() gives it (times in seconds)."""
    recorded, count, frees_ms, now_ms = answer
    return bool(recorded), int(count), float(frees_ms) / 1000, float(now_ms) / 1000


class RedisBackend:
    """The limits in Redis, left alone for a while when it fails (RedisBreaker: the general limit
    then lets requests through, the strict ones refuse them, at once rather than after a timeout)."""

    def hit(
        self, key: str, limit: int, window: int, *, record: bool, cost: int = 1, name: str | None = None
    ) -> tuple[bool, int, float, float]:
        args = (redis_key("ratelimit", key), window * 1000, limit, name or hit_name(), "1" if record else "0", cost)
        return _hit_of(self._ask(lambda client: self._evalsha(client, _SLIDING_WINDOW_SHA, _SLIDING_WINDOW_LUA, args)))

    def lease(
        self, key: str, limit: int, window: int, name: str, want: int, give_back: Sequence[str]
    ) -> tuple[int, tuple[bool, int, float, float]]:
        """Up to `want` hits recorded at once (see _LEASE_LUA): how many, and the hit's outcome."""
        args = (redis_key("ratelimit", key), window * 1000, limit, name, want, *give_back)
        granted, *answer = self._ask(lambda client: self._evalsha(client, _LEASE_SHA, _LEASE_LUA, args))
        return int(granted), _hit_of(answer)

    @staticmethod
    def _evalsha(client: redis.Redis, sha: str, script: str, args: tuple) -> list:
        # EVALSHA itself: redis-py's Script wrapper costs more CPU than the round trip on every request.
        try:
            return client.execute_command("EVALSHA", sha, 1, *args)
        except redis.exceptions.NoScriptError:  # a new or restarted Redis
            client.script_load(script)
            return client.execute_command("EVALSHA", sha, 1, *args)

    def clear(self, key: str) -> None:
        self._ask(lambda client: client.delete(redis_key("ratelimit", key)))

    def take_back(self, key: str, name: str) -> None:
        self._ask(lambda client: client.zrem(redis_key("ratelimit", key), name))

    @staticmethod
    def _ask(command: Callable[[redis.Redis], Any]) -> Any:
        with redis_guarded():
            return command(get_redis())


@dataclass
class _Lease:
    unused: list[str]  # hits recorded in Redis, not yet handed out
    size: int  # hits asked for when it was taken
    expires: float  # time.monotonic() after which the unused ones are given back
    state: RateLimitState  # as Redis answered, every hit of the lease counted


class Leases:
    """The general API limit with Redis, in one round trip per few requests rather than per request.

    A process records a few hits at once (a lease) and hands them out to the user's next requests
    without asking Redis. A lease doubles, up to LEASE_MAX and a twentieth of the limit, while
    each is used up within LEASE_SECONDS; what a lease leaves unused is given back with the next one
    (and the next is half as big). Hits are recorded before they are handed out, so the processes
    together never let more requests through than the limit; one may refuse a request while another
    holds hits it has not used (a twentieth of the limit at most, until it gives them back or they
    leave the window). In one process X-RateLimit-Remaining is exact. A limit of fewer than 40 hits
    is counted hit by hit.
    """

    LEASE_SECONDS = 1.0
    LEASE_MAX = 32
    MAX_KEYS = 10_000  # beyond, leases run out are dropped (each address of anonymous requests has one)

    def __init__(self) -> None:
        self._leases: dict[str, _Lease] = {}
        self._lock = threading.Lock()

    def check(self, key: str, limit: tuple[int, int]) -> RateLimitState:
        count_limit, window = limit
        now = time.monotonic()
        with self._lock:
            lease = self._leases.get(key)
            if lease is not None and lease.unused and now < lease.expires and lease.state.limit == count_limit:
                lease.unused.pop()
                return self._state(lease)
            give_back, size = [], 1
            if lease is not None and not lease.state.blocked:
                give_back, lease.unused = lease.unused, []  # this request gives them back
                size = lease.size // 2 if give_back else lease.size * 2 if now < lease.expires else lease.size
        size = max(1, min(size, self.LEASE_MAX, count_limit // 20))
        name = hit_name()
        granted, hit = _redis.lease(key, count_limit, window, name, size, give_back)
        state = _state(count_limit, window, *hit, record=True)
        names = [name] if granted == 1 else [f"{name}:{i}" for i in range(1, granted + 1)]
        now = time.monotonic()
        with self._lock:
            current = self._leases.get(key)
            if current is not lease and current is not None and now < current.expires and not current.state.blocked:
                # Another thread took a lease meanwhile (the leaseqa QA pass: replacing it lost its
                # unused hits): both are one. Redis's later answer counts both.
                if state.blocked:
                    if not current.unused:
                        return state
                    current.unused.pop()
                else:
                    current.unused.extend(names[1:])
                    if state.remaining < current.state.remaining:
                        current.state = state
                return self._state(current)
            if len(self._leases) >= self.MAX_KEYS:
                self._leases = {k: held for k, held in self._leases.items() if held.expires > now}
            unused = names[1:] if not state.blocked else []
            lease = self._leases[key] = _Lease(unused, size, now + self.LEASE_SECONDS, state)
        return self._state(lease) if not state.blocked else state

    @staticmethod
    def _state(lease: _Lease) -> RateLimitState:
        state = lease.state
        return replace(state, remaining=min(state.remaining + len(lease.unused), state.limit))

    def forget(self, key: str | None = None) -> None:
        """Drop this process's lease of `key` (all of them with None); its hits stay counted."""
        with self._lock:
            if key is None:
                self._leases.clear()
            else:
                self._leases.pop(key, None)


_in_process = InProcessBackend()
_redis = RedisBackend()
_leases = Leases()


def backend() -> InProcessBackend | RedisBackend:
    return _redis if settings.REDIS_URL else _in_process


def check(
    key: str, limit: tuple[int, int], *, record: bool = True, cost: int = 1, name: str | None = None
) -> RateLimitState:
    """Count a hit weighing `cost` against `key` (unless `record` is False) and say whether it is
    within `limit`. A cost above the limit's count can never be recorded: callers refuse it first.
    A hit `name`d (hit_name()) of cost 1 can be taken back (take_back).

    Raises redis errors when Redis is configured but unreachable; callers choose to fail open or
    closed.
    """
    count_limit, window = limit
    if not 0 < cost <= count_limit:
        raise ValueError(f"cost {cost} is outside 1..{count_limit}")
    hit = backend().hit(key, count_limit, window, record=record, cost=cost, name=name)
    return _state(count_limit, window, *hit, record=record)


def take_back(key: str, name: str) -> None:
    """Forget the hit `name` counted against `key`: what it counted turned out not to happen (a
    login the database could not answer is no failed login)."""
    backend().take_back(key, name)


def check_all(limits: Sequence[tuple[str, tuple[int, int]]]) -> None:
    """Count one hit against each (key, limit) when every one of them has room; else raise
    RateLimitedError (the longest wait) and count none, so a refused request takes no slot."""
    waits = [state.retry_after for key, limit in limits if (state := check(key, limit, record=False)).blocked]
    if waits:
        raise RateLimitedError(max(waits))
    for key, limit in limits:
        check(key, limit)


def check_in_process(key: str, limit: tuple[int, int]) -> RateLimitState:
    """check() counted in this process only (exact for a server of one process, never blocking)."""
    count_limit, window = limit
    return _state(count_limit, window, *_in_process.hit(key, count_limit, window, record=True), record=True)


def state_of(limit: tuple[int, int], answer: list) -> RateLimitState:
    """The outcome of a hit recorded by SLIDING_WINDOW_LUA_FUNCTION inside another script."""
    count_limit, window = limit
    return _state(count_limit, window, *_hit_of(answer), record=True)


def _state(
    count_limit: int, window: int, recorded: bool, count: int, frees_at: float, now: float, *, record: bool
) -> RateLimitState:
    blocked = (record and not recorded) or (not record and count >= count_limit)
    # Seconds until the hit at `frees_at` leaves the window, measured on the backend's clock.
    frees_in = frees_at + window - now if count else 0.0
    return RateLimitState(
        limit=count_limit,
        remaining=max(count_limit - count, 0),
        reset=math.ceil(time.time() + frees_in),
        retry_after=round(max(frees_in, 0.001), 3) if blocked else None,
    )


def clear(key: str) -> None:
    _leases.forget(key)
    backend().clear(key)


def check_api_request(key: str, limit: tuple[int, int]) -> RateLimitState | None:
    """The general API limit (with Redis, counted in leases: see Leases). Fails open: with Redis
    unreachable (or left alone, RedisBreaker) it lets the request through."""
    if not settings.RATE_LIMITING_ENABLED:
        return None
    try:
        return _leases.check(key, limit) if settings.REDIS_URL else check(key, limit)
    except RedisLeftAlone:
        return None
    except redis.exceptions.RedisError as exc:
        count_dependency_error("redis")
        logger.warning("rate limiting skipped while Redis cannot be reached: %s", exc)
        return None
