"""Sliding-window rate limits, in Redis when configured (shared by every process) or in-process.

A limit is `(count, window_seconds)`: at most `count` recorded hits in any `window_seconds`.
"""

import logging
import math
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass

import redis.exceptions
from django.conf import settings

from apps.core.redis_client import get_redis, redis_key

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
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }


# Removes expired hits, then records this one if there is room; returns [recorded?, count, oldest].
# KEYS[1]: sorted set of hit times (ms). ARGV: now_ms, window_ms, limit, member, record (1/0).
_SLIDING_WINDOW_LUA = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local recorded = 0
if ARGV[5] == '1' and count < limit then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, window)
  count = count + 1
  recorded = 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {recorded, count, oldest[2] or tostring(now)}
"""


class InProcessBackend:
    """For the embedded default (one server process). Thread-safe."""

    def __init__(self) -> None:
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, limit: int, window: int, *, record: bool) -> tuple[bool, int, float]:
        now = time.time()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - window:
                hits.popleft()
            recorded = record and len(hits) < limit
            if recorded:
                hits.append(now)
            count = len(hits)
            oldest = hits[0] if hits else now
            if not hits:
                del self._hits[key]
        return recorded, count, oldest

    def clear(self, key: str) -> None:
        with self._lock:
            self._hits.pop(key, None)

    def reset_all(self) -> None:
        with self._lock:
            self._hits.clear()


class RedisBackend:
    def __init__(self) -> None:
        self._script = None

    def hit(self, key: str, limit: int, window: int, *, record: bool) -> tuple[bool, int, float]:
        client = get_redis()
        if self._script is None:
            self._script = client.register_script(_SLIDING_WINDOW_LUA)
        now_ms = time.time() * 1000
        recorded, count, oldest_ms = self._script(
            keys=[redis_key("ratelimit", key)],
            args=[now_ms, window * 1000, limit, uuid.uuid4().hex, "1" if record else "0"],
            client=client,
        )
        return bool(recorded), int(count), float(oldest_ms) / 1000

    def clear(self, key: str) -> None:
        get_redis().delete(redis_key("ratelimit", key))


_in_process = InProcessBackend()
_redis = RedisBackend()


def backend() -> InProcessBackend | RedisBackend:
    return _redis if settings.REDIS_URL else _in_process


def check(key: str, limit: tuple[int, int], *, record: bool = True) -> RateLimitState:
    """Count a hit against `key` (unless `record` is False) and say whether it is within `limit`.

    Raises redis errors when Redis is configured but unreachable; callers choose to fail open or
    closed.
    """
    count_limit, window = limit
    recorded, count, oldest = backend().hit(key, count_limit, window, record=record)
    blocked = (record and not recorded) or (not record and count >= count_limit)
    now = time.time()
    reset_at = oldest + window if count else now
    return RateLimitState(
        limit=count_limit,
        remaining=max(count_limit - count, 0),
        reset=math.ceil(reset_at),
        retry_after=round(max(reset_at - now, 0.001), 3) if blocked else None,
    )


def clear(key: str) -> None:
    backend().clear(key)


# After Redis fails, the general limit is skipped for this long rather than waiting for a connect
# timeout on every request.
REDIS_RETRY_INTERVAL = 5.0
_redis_down_until = 0.0


def check_api_request(key: str, limit: tuple[int, int]) -> RateLimitState | None:
    """The general API limit. Fails open: with Redis down it logs and lets the request through."""
    global _redis_down_until
    if not settings.RATE_LIMITING_ENABLED or time.monotonic() < _redis_down_until:
        return None
    try:
        return check(key, limit)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        _redis_down_until = time.monotonic() + REDIS_RETRY_INTERVAL
        logger.warning("rate limiting skipped for %ss, Redis unreachable: %s", REDIS_RETRY_INTERVAL, exc)
        return None
