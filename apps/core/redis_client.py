"""The process's Redis connection, shared with Django's cache (django-redis), or None without Redis."""

import redis
from django.conf import settings


def get_redis() -> redis.Redis | None:
    if not settings.REDIS_URL:
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default")


def redis_key(*parts: object) -> str:
    """A key in Parley's namespace (REDIS_KEY_PREFIX), e.g. `parley:ratelimit:user:5`."""
    return ":".join([settings.REDIS_KEY_PREFIX, *map(str, parts)])
