"""Reading through Django's cache (Redis when configured) without depending on it: a cache that
fails is a log line, and the value is computed from the database instead; an entry that cannot be
dropped expires by itself."""

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import cache
from django.db.models import Model
from django.db.models.base import ModelState

from apps.core.errors import REDIS_UNAVAILABLE
from apps.core.redis_client import redis_breaker

logger = logging.getLogger("apps.core.cache")


def cached(key: str, compute: Callable[[], Any], seconds: int) -> Any:
    """The cached value of `key`, else compute() (cached for `seconds`); compute() alone when the
    cache fails, or failed lately (Redis's RedisBreaker: a hung Redis is not waited for at each
    use). None is never cached (it means "not there")."""
    if not redis_breaker.usable():
        return compute()
    try:
        value = cache.get(key)
    except Exception as exc:
        _failed(exc, "%s read from the database: the cache failed: %s", key)
        return compute()
    redis_breaker.answered()
    if value is not None:
        return value
    value = compute()
    try:
        cache.set(key, value, seconds)
    except Exception as exc:
        _failed(exc, "%s not cached: %s", key)
    return value


def forget(key: str) -> None:
    """Drop `key`; a cache that fails (or failed lately) is left alone: the entry expires by itself."""
    if not redis_breaker.usable():
        logger.warning("cached %s not dropped: the cache failed lately", key)
        return
    try:
        cache.delete(key)
    except Exception as exc:
        _failed(exc, "cached %s not dropped: %s", key)
        return
    redis_breaker.answered()


def _failed(exc: Exception, message: str, key: str) -> None:
    """A cache that cannot be reached (django-redis wraps Redis's errors) is left alone a while."""
    if isinstance(exc, REDIS_UNAVAILABLE) or isinstance(exc.__cause__, REDIS_UNAVAILABLE):
        redis_breaker.failed()
    logger.warning(message, key, exc)


M = TypeVar("M", bound=Model)


def instance_copy(instance: M) -> M:
    """What copy.copy makes of a model instance (the same field values, its own state and its own
    dict of cached relations), for a cache that hands each request its own copy, without the
    pickling protocol copy.copy goes through (a tenth of its time)."""
    clone = instance.__class__.__new__(instance.__class__)
    clone.__dict__.update(instance.__dict__)
    state = clone._state = ModelState()
    state.db, state.adding = instance._state.db, instance._state.adding
    state.fields_cache = dict(instance._state.fields_cache)
    return clone
