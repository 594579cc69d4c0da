"""Redis connections: the process's synchronous one (shared with Django's cache, via django-redis)
and, for code running on an event loop, one asynchronous client per loop. None without Redis."""

import asyncio

import redis
import redis.asyncio
from django.conf import settings

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
