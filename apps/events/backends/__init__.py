"""Event queue storage behind one interface (base.EventQueueBackend): Redis (any number of
processes and machines) or this process's memory (the embedded default, one server process).
"""

from functools import cache

from django.conf import settings

from apps.events.backends.base import (
    AlreadyPublished,
    Audience,
    BadEventQueueIdError,
    EventQueueBackend,
    Everyone,
    PollLimit,
    PollStart,
    PredecessorMissing,
    Waiters,
    audience_from_json,
    check_queue_id,
    takes_deletions_one_by_one,
)
from apps.events.backends.memory import MemoryBackend
from apps.events.backends.redis import RedisBackend

__all__ = [
    "AlreadyPublished",
    "Audience",
    "BadEventQueueIdError",
    "EventQueueBackend",
    "Everyone",
    "PollLimit",
    "PollStart",
    "PredecessorMissing",
    "Waiters",
    "audience_from_json",
    "check_queue_id",
    "get_backend",
    "takes_deletions_one_by_one",
]


@cache
def _backend_for(redis_url: str) -> EventQueueBackend:
    return RedisBackend() if redis_url else MemoryBackend()


def get_backend() -> EventQueueBackend:
    """Redis when REDIS_URL is set, else this process's memory."""
    return _backend_for(settings.REDIS_URL)
