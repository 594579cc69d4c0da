"""Reading through Django's cache (Redis when configured) without depending on it: a cache that
fails is a log line, and the value is computed from the database instead; an entry that cannot be
dropped expires by itself."""

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import cache
from django.db.models import Model
from django.db.models.base import ModelState

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
