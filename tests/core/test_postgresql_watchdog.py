"""The watch over calls waiting on PostgreSQL (apps/core/postgresql/watchdog.py) leaves a slow call
alone while the server accepts connections. (A frozen server: tests/reliability/test_faults.py.)"""

import time

import pytest
from django.db import OperationalError, connection

from apps.core.errors import dependency_error
from apps.core.postgresql import watchdog

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's own watch")


def test_a_slow_query_on_a_server_that_answers_is_left_alone(db, monkeypatch, caplog):
    monkeypatch.setattr(watchdog, "FROZEN_AFTER_SECONDS", 0.5)
    monkeypatch.setattr(watchdog, "CHECK_EVERY_SECONDS", 0.2)
    began = time.monotonic()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(2)")
        assert cursor.fetchone() == ("",)
        assert time.monotonic() - began >= 2
        cursor.execute("SELECT 1")  # the connection still works
        assert cursor.fetchone() == (1,)
    assert "accepts no connection" not in caplog.text


def test_a_slow_query_on_a_server_that_refuses_new_connections_is_left_alone(db, monkeypatch, caplog):
    """A server that answers a new connection with a refusal of its own (too many clients, its
    database closed to connections) is alive, not frozen (the verify QA pass: the slow call was cut)."""
    monkeypatch.setattr(watchdog, "FROZEN_AFTER_SECONDS", 0.5)
    monkeypatch.setattr(watchdog, "CHECK_EVERY_SECONDS", 0.2)
    with connection.cursor() as cursor:
        # The watch's new connections are refused at once: "database ... does not exist".
        monkeypatch.setitem(connection._conn_params, "dbname", "parley_no_such_database")
        cursor.execute("SELECT pg_sleep(2)")
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
    assert "accepts no connection" not in caplog.text


def test_a_call_on_a_server_that_accepts_no_connection_fails_at_once(db, monkeypatch):
    """What the watch does once a new connection cannot be made: the waiting call's socket is shut
    down, and the call fails as a database that cannot be reached."""
    monkeypatch.setattr(watchdog, "FROZEN_AFTER_SECONDS", 0.5)
    monkeypatch.setattr(watchdog, "CHECK_EVERY_SECONDS", 0.2)
    monkeypatch.setattr(connection, "_server_answers", lambda: False)  # as while the server is frozen
    began = time.monotonic()
    with pytest.raises(OperationalError) as ended, connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(30)")
    assert time.monotonic() - began < 5
    assert dependency_error(ended.value).http_status_code == 503
