"""Redis connections: the process's synchronous one (shared with Django's cache, via django-redis)
and, for code running on an event loop, one asynchronous client per loop. None without Redis."""

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis
import redis.asyncio
from django.conf import settings

from apps.core.errors import REDIS_UNAVAILABLE

logger = logging.getLogger(__name__)

_async_clients: dict[asyncio.AbstractEventLoop, redis.asyncio.Redis] = {}
# (REDIS_URL, its client): django-redis builds a new client (on the same pool) each time it is
# asked from a new context, and every request is one; this one is the process's (thread-safe; its
# pool starts afresh in a forked child).
_sync_client: tuple[str, redis.Redis] | None = None


def get_redis() -> redis.Redis | None:
    global _sync_client
    url = settings.REDIS_URL
    if not url:
        return None
    if _sync_client is None or _sync_client[0] != url:
        from django_redis import get_redis_connection

        _sync_client = (url, get_redis_connection("default"))
    return _sync_client[1]


def get_async_redis() -> redis.asyncio.Redis:
    """The running loop's client. Its pool is bounded: however many coroutines wait on Redis, this
    process opens at most EVENTS_REDIS_MAX_CONNECTIONS connections."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        for old in [lp for lp in _async_clients if lp.is_closed()]:
            del _async_clients[old]
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            settings.REDIS_URL,
            max_connections=settings.EVENTS_REDIS_MAX_CONNECTIONS,
            timeout=settings.EVENTS_REDIS_QUEUE_SECONDS,
            **settings.REDIS_ASYNC_CONNECTION_KWARGS,
        )
        client = _async_clients[loop] = redis.asyncio.Redis(connection_pool=pool)
    return client


def redis_key(*parts: object) -> str:
    """A key in Parley's namespace (REDIS_KEY_PREFIX), e.g. `parley:ratelimit:user:5`."""
    return ":".join([settings.REDIS_KEY_PREFIX, *map(str, parts)])


class RedisBreaker:
    """Doing without a Redis that fails. Once Redis has failed (refused, or not answered within
    REDIS_SOCKET_TIMEOUT), the work that can do without it leaves it alone for RETRY_SECONDS
    rather than waiting for its timeout at each use: Django's cache (the database answers instead),
    the rate limits (the general one lets requests through, the strict ones refuse at once), the
    publishing of events after a commit and the drops of cached credentials (the organization's
    next event, or the sweep, publishes them; the drops are told again). Then one caller tries it
    again while the others still do without, until it answers. The fault QA pass: with Redis hung,
    each message sent waited for the cache's timeout and the publish's, 4 s, for the whole outage,
    and four threads served a handful of requests a second.

    One per process; its state is one number, read without a lock while Redis answers."""

    RETRY_SECONDS = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._retry_at = 0.0  # 0: taken to answer

    def usable(self) -> bool:
        """Whether to use Redis now: it answers, or it failed long enough ago that this caller is the
        one to try it again (the others are told no until that try ends: answered() or failed())."""
        if not self._retry_at:
            return True
        with self._lock:
            now = time.monotonic()
            if not self._retry_at or now >= self._retry_at:
                if self._retry_at:
                    self._retry_at = now + self.RETRY_SECONDS
                return True
            return False

    def answered(self) -> None:
        if self._retry_at:
            self._retry_at = 0.0
            logger.info("Redis answers again")

    def failed(self) -> None:
        """Redis failed (its callers say how, and what that did to their work)."""
        self._retry_at = time.monotonic() + self.RETRY_SECONDS

    def reset(self) -> None:
        self._retry_at = 0.0


redis_breaker = RedisBreaker()


class RedisLeftAlone(redis.exceptions.ConnectionError):
    """Redis was not asked: it failed lately (RedisBreaker). Handled as Redis unreachable."""


@contextmanager
def redis_guarded() -> Iterator[None]:
    """Around work that needs Redis and can be refused without it (a registration, a presence
    ping, a rate limit): raises RedisLeftAlone at once while Redis is left alone (RedisBreaker),
    and tells the breaker how Redis did. The fault QA pass: with Redis hung, each registration and
    presence ping waited for the timeout before its 503, for the whole outage.

    Not to be nested, nor put around work that asks the breaker itself (the cache): the retry a
    caller is let through for would be refused inside."""
    if not redis_breaker.usable():
        raise RedisLeftAlone("Redis failed lately: not asked again yet")
    try:
        yield
    except REDIS_UNAVAILABLE:
        redis_breaker.failed()
        raise
    redis_breaker.answered()
