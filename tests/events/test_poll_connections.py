"""The long-poll's database work runs on the server's pool threads outside any Django request. A
thread keeps its connection between uses (CONN_MAX_AGE), so a database restart leaves it a dead
one: the first query after the database is back must find that out (the health check Django runs
at a request's start) and connect again, not answer 503 (tests/reliability/test_faults.py sees the
same from outside, by chance; this is the deterministic case)."""

import base64
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from apps.events.actions import queue_options
from apps.events.longpoll import PollRequest, _authenticate_from_database, _register_queue
from apps.events.serializers import RegisterParams

pytestmark = pytest.mark.django_db(transaction=True)  # the pool thread must see the users


@pytest.fixture
def pool_thread():
    """One thread, as one of the server's pool threads: its connection outlives each use."""
    thread = ThreadPoolExecutor(max_workers=1)
    yield thread
    thread.submit(lambda: connection.close()).result()
    thread.shutdown()


def kill_connection_of(thread: ThreadPoolExecutor) -> None:
    """What a PostgreSQL restart does to the thread's idle connection: its server process ends
    (waited for, as a restart's clients wait for the database to be back)."""
    backend_pid = thread.submit(lambda: connection.connection.info.backend_pid).result()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s, 10000)", [backend_pid])


def poll_of(user) -> PollRequest:
    token = base64.b64encode(f"{user.delivery_email}:{user.api_key}".encode()).decode()
    return PollRequest(host="testserver", authorization=f"Basic {token}", remote_addr="", query=b"", secure=False)


@pytest.fixture(autouse=True)
def postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("a server-side connection to kill: PostgreSQL")


def test_queue_registration_after_its_connection_died_connects_again(pool_thread, event_backend, member):
    options = queue_options(RegisterParams(), lifespan_secs=0)
    pool_thread.submit(_register_queue, member.id, options).result()
    kill_connection_of(pool_thread)
    queue_id = pool_thread.submit(_register_queue, member.id, options).result()
    assert queue_id in event_backend.queue_ids_of_user(member.id)


def test_authentication_after_its_connection_died_connects_again(pool_thread, member, owner):
    # Another use of the thread first (the queue's registration), then authentication.
    pool_thread.submit(_register_queue, owner.id, queue_options(RegisterParams(), lifespan_secs=0)).result()
    kill_connection_of(pool_thread)
    identity = pool_thread.submit(_authenticate_from_database, poll_of(member)).result()
    assert (identity.user_id, identity.realm_id) == (member.id, member.realm_id)


def test_a_live_connection_is_checked_without_a_query_and_a_dead_one_with_one(pool_thread, member, monkeypatch):
    """apps.core.postgresql: a kept connection with nothing to read is healthy (no `SELECT 1` per
    request); one the server closed has its goodbye to read, so Django's own check replaces it."""
    wrapper = type(connections["default"])
    checks = []
    real_check = wrapper.is_usable
    monkeypatch.setattr(wrapper, "is_usable", lambda self: checks.append(1) or real_check(self))
    options = queue_options(RegisterParams(), lifespan_secs=0)
    pool_thread.submit(_register_queue, member.id, options).result()
    pool_thread.submit(_register_queue, member.id, options).result()
    assert checks == []
    kill_connection_of(pool_thread)
    pool_thread.submit(_register_queue, member.id, options).result()
    assert checks == [1]
