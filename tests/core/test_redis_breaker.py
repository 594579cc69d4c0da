"""Doing without a Redis that fails (apps/core/redis_client.py: RedisBreaker): left alone a while
after a failure, then tried again by one caller while the others still do without."""

import logging
import time

from apps.core.redis_client import RedisBreaker


def time_is_up(breaker: RedisBreaker) -> None:
    breaker._retry_at = time.monotonic() - 1


def test_after_a_failure_one_caller_tries_again_while_the_others_do_without(caplog):
    caplog.set_level(logging.INFO, logger="apps.core.redis_client")
    breaker = RedisBreaker()
    assert breaker.usable()
    breaker.failed()
    assert not breaker.usable()
    time_is_up(breaker)
    assert breaker.usable()  # this caller tries it
    assert not breaker.usable()  # the others wait for that try
    breaker.failed()
    assert not breaker.usable()
    time_is_up(breaker)
    assert breaker.usable()
    breaker.answered()
    assert all(breaker.usable() for _ in range(3))
    # Its end is said once (each caller says what a failure did to its work).
    assert [record.getMessage() for record in caplog.records] == ["Redis answers again"]
