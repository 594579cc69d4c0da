"""A publish that fails after its commit is logged for what it is: an unreachable dependency is a
warning on one line (an outage would otherwise log an error an event; the sweep publishes them
once it is back), anything else an error with its traceback."""

import logging

import redis.exceptions

from apps.events.publish import _log_failure


def test_an_unreachable_redis_is_a_one_line_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="apps.events.publish"):
        _log_failure(
            redis.exceptions.ConnectionError("Connection refused"), "could not publish %s event %s", "typing", 7
        )
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "could not publish typing event 7: ConnectionError: Connection refused"
    assert record.exc_info is None


def test_a_bug_is_an_error_with_its_traceback(caplog):
    with caplog.at_level(logging.WARNING, logger="apps.events.publish"):
        try:
            raise KeyError("seq")
        except KeyError as exc:
            _log_failure(exc, "could not publish %s event %s", "typing", 7)
    [record] = caplog.records
    assert (record.levelno, record.getMessage()) == (logging.ERROR, "could not publish typing event 7")
    assert record.exc_info is not None
