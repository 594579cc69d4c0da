"""Doing without a Redis that fails (apps/core/redis_client.py: RedisBreaker): left alone after a
failure, no caller waiting for it, until a PING of the breaker's own is answered."""

import logging
import threading
import time

from apps.core.redis_client import RedisBreaker


class Redis:
    """A Redis that answers PING once `up` is set."""

    def __init__(self) -> None:
        self.up = threading.Event()
        self.pings = 0

    def ping(self) -> bool:
        self.pings += 1
        if not self.up.is_set():
            raise ConnectionError("refused")
        return True


def wait_until(condition, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_after_a_failure_nobody_uses_redis_until_a_ping_is_answered(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="apps.core.redis_client")
    monkeypatch.setattr(RedisBreaker, "RETRY_SECONDS", 0.05)
    redis = Redis()
    breaker = RedisBreaker(ping=redis.ping)
    assert breaker.usable()
    breaker.failed()
    breaker.failed()  # (another caller: still one PING at a time)
    assert [thread.name for thread in threading.enumerate()].count("redis-probe") >= 1
    wait_until(lambda: redis.pings >= 3)
    assert not any(breaker.usable() for _ in range(3))  # every caller does without meanwhile
    redis.up.set()
    wait_until(breaker.usable)
    pings = redis.pings
    time.sleep(0.2)
    assert redis.pings == pings  # answered: no more PINGs
    # Its end is said once (each caller says what a failure did to its work).
    assert [record.getMessage() for record in caplog.records] == ["Redis answers again"]


def test_a_request_that_finds_redis_back_ends_the_outage_too():
    redis = Redis()
    breaker = RedisBreaker(ping=redis.ping)
    breaker.failed()
    breaker.answered()  # (the drops of cached credentials, told again by a thread of their own)
    assert breaker.usable()
