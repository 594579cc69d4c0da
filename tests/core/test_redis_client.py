"""The process's Redis clients."""

import contextvars

import pytest

from apps.core.redis_client import get_redis


def test_one_client_for_every_request(settings):
    """Each request runs in a context of its own; building a client per context cost more CPU
    than the rate limit's round trip."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    client = get_redis()
    assert contextvars.Context().run(get_redis) is client
    assert client.ping()


def test_a_changed_address_gets_its_own_client(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    client = get_redis()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": settings.REDIS_URL}}
    other = get_redis()
    assert other is not client
    assert other.connection_pool.connection_kwargs["port"] == 1


def test_no_client_without_redis(settings):
    settings.REDIS_URL = ""
    assert get_redis() is None
