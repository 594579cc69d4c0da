"""Redis connections: the process's synchronous one (shared with Django's cache, via django-redis)
and, for code running on an event loop, one asynchronous client per loop. None without Redis."""

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
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
    REDIS_SOCKET_TIMEOUT), the work that can do without it leaves it alone until it answers again,
    rather than waiting for its timeout at each use: Django's cache (the database answers instead),
    the rate limits (the general one lets requests through, the strict ones refuse at once), the
    publishing of events after a commit and the drops of cached credentials (the organization's
    next event, or the sweep, publishes them; the drops are told again), and what cannot do without
    it answers 503 at once (redis_guarded: registrations, presence). A thread of the process PINGs
    it every RETRY_SECONDS meanwhile: no request waits for a timeout but the first one (the fault
    QA pass: with Redis hung, each message sent waited 4 s for the whole outage; the verify QA pass:
    then each request that was let through to try it again every second waited 2 s).

    One per process (a forked child starts afresh); its state is one flag, read without a lock."""

    RETRY_SECONDS = 1.0

    def __init__(self, ping: Callable[[], object] | None = None) -> None:
        self._ping = ping or (lambda: get_redis().ping())
        self._lock = threading.Lock()
        self._failed = False
        self._prober: threading.Thread | None = None
        os.register_at_fork(after_in_child=self.reset)

    def usable(self) -> bool:
        """Whether to use Redis now: it has not failed since it last answered."""
        return not self._failed

    def answered(self) -> None:
        if self._failed:
            self._failed = False
            logger.info("Redis answers again")

    def failed(self) -> None:
        """Redis failed (its callers say how, and what that did to their work)."""
        self._failed = True
        with self._lock:
            if self._prober is None or not self._prober.is_alive():
                self._prober = threading.Thread(target=self._probe, name="redis-probe", daemon=True)
                self._prober.start()

    def _probe(self) -> None:
        while self._failed:
            time.sleep(self.RETRY_SECONDS)
            try:
                self._ping()
            except Exception:  # noqa: S112 (still failing: tried again in a while)
                continue
            self.answered()

    def reset(self) -> None:
        self._failed = False
        self._prober = None


redis_breaker = RedisBreaker()


class RedisLeftAlone(redis.exceptions.ConnectionError):
    """Redis was not asked: it failed lately (RedisBreaker). Handled as Redis unreachable."""


@contextmanager
def redis_guarded() -> Iterator[None]:
    """Around work that needs Redis and can be refused without it (a registration, a presence
    ping, a rate limit): raises RedisLeftAlone at once while Redis is left alone (RedisBreaker),
    and tells the breaker how Redis did. The fault QA pass: with Redis hung, each registration and
    presence ping waited for the timeout before its 503, for the whole outage."""
    if not redis_breaker.usable():
        raise RedisLeftAlone("Redis failed and has not answered since")
    try:
        yield
    except REDIS_UNAVAILABLE:
        redis_breaker.failed()
        raise
    redis_breaker.answered()
