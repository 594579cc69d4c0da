"""Reading through Django's cache without depending on it (apps/core/cache.py)."""

import logging

import pytest
from django.core.cache import cache

from apps.core import cache as read_through
from apps.core.redis_client import redis_breaker
from tests.server import free_port


@pytest.fixture
def unreachable_cache(settings):
    """Django's cache in Redis, on a port where nothing listens."""
    settings.CACHES = {
        "default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}
    }
    redis_breaker.reset()
    yield
    redis_breaker.reset()


def test_a_value_is_computed_once_then_read_from_the_cache():
    computed = []
    for _ in range(3):
        assert read_through.cached("test-cache-once", lambda: computed.append(1) or "value", 60) == "value"
    assert computed == [1]
    read_through.forget("test-cache-once")
    assert cache.get("test-cache-once") is None


def test_a_cache_that_failed_is_left_alone_for_a_while(unreachable_cache, caplog, monkeypatch):
    """The fault QA pass: with Redis hung, each use waited for its timeout (each message sent waited
    for two caches' timeouts)."""
    caplog.set_level(logging.WARNING, logger="apps.core.cache")

    def unanswered() -> None:
        raise ConnectionError("nobody listens")

    monkeypatch.setattr(redis_breaker, "_ping", unanswered)

    def said() -> list[str]:
        return [record.getMessage() for record in caplog.records if record.name == "apps.core.cache"]

    assert read_through.cached("test-cache-down", lambda: "computed", 60) == "computed"
    assert len(said()) == 1  # the cache was asked, and failed
    for _ in range(3):
        assert read_through.cached("test-cache-down", lambda: "computed", 60) == "computed"
    assert len(said()) == 1  # not asked again
    read_through.forget("test-cache-down")
    assert "failed lately" in said()[-1]
    # Once Redis answers the breaker's PING, it is asked again.
    redis_breaker.answered()
    assert read_through.cached("test-cache-down", lambda: "computed", 60) == "computed"
    assert "the cache failed" in said()[-1]
