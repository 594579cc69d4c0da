"""Reading through Django's cache (Redis when configured) without depending on it: a cache that
fails is a log line, and the value is computed from the database instead; an entry that cannot be
dropped expires by itself."""

import logging
from collections.abc import Callable
from typing import Any

from django.core.cache import cache

logger = logging.getLogger("apps.core.cache")


def cached(key: str, compute: Callable[[], Any], seconds: int) -> Any:
    """The cached value of `key`, else compute() (cached for `seconds`); compute() alone when the
    cache fails. None is never cached (it means "not there")."""
    try:
        value = cache.get(key)
    except Exception as exc:
        logger.warning("%s read from the database: the cache failed: %s", key, exc)
        return compute()
    if value is not None:
        return value
    value = compute()
    try:
        cache.set(key, value, seconds)
    except Exception as exc:
        logger.warning("%s not cached: %s", key, exc)
    return value


def forget(key: str) -> None:
    try:
        cache.delete(key)
    except Exception as exc:  # the entry expires by itself
        logger.warning("cached %s not dropped: %s", key, exc)
