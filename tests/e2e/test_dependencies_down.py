"""A dependency that is down gives a quick JSON 503 with Retry-After: never a hang, never a trace."""

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from apps.users.models import Role
from tests.factories import RealmFactory, UserFactory
from tests.server import free_port

pytestmark = pytest.mark.e2e


@pytest.fixture
def blackhole_port():
    """A TCP port that accepts connections and then never says a word (a hung peer)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def not_redis_port():
    """A TCP port where something else answers (an HTTP server: REDIS_URL mistyped)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.2)
    serving = threading.Event()
    serving.set()

    def answer() -> None:
        while serving.is_set():
            try:
                peer, _ = sock.accept()
            except OSError:
                continue
            with peer:
                peer.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    serving.clear()
    thread.join()
    sock.close()


def get(server, path: str, **kwargs):
    started = time.monotonic()
    response = requests.get(f"{server.url}{path}", timeout=30, **kwargs)
    return response, time.monotonic() - started


def assert_503(response, dependency: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert body["result"] == "error"
    assert body["code"] == "SERVICE_UNAVAILABLE"
    assert dependency in body["msg"]
    assert "Traceback" not in response.text
    assert int(response.headers["Retry-After"]) > 0


@pytest.mark.parametrize("kind", ["refused", "blackhole"])
def test_database_down(live_server_factory, blackhole_port, kind):
    port = free_port() if kind == "refused" else blackhole_port
    server = live_server_factory(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{port}/parley", DEPENDENCY_CONNECT_TIMEOUT="2"
    )
    response, _ = get(server, "/health/live")
    assert response.status_code == 200
    for path in ("/api/v1/users/me", "/api/v1/server_settings", "/health/ready"):
        response, elapsed = get(server, path, auth=("someone@example.com", "A" * 32))
        assert_503(response, "database")
        assert elapsed < 10, f"{path} took {elapsed:.1f}s"
    # A browser opening a page gets a page (the production QA pass: raw JSON), still a 503.
    for path in ("/login/", "/"):
        response, elapsed = get(server, path, headers={"Accept": "text/html,application/xhtml+xml"})
        assert (response.status_code, response.headers["Content-Type"]) == (503, "text/html; charset=utf-8")
        assert "<h1>Temporarily unavailable</h1>" in response.text
        assert int(response.headers["Retry-After"]) > 0
        assert elapsed < 10, f"{path} took {elapsed:.1f}s"
    # Each refusal is one WARNING line (the production QA pass: a page's was also an ERROR with its
    # traceback, an API answer's an ERROR more).
    assert "Traceback" not in server.log()
    assert "Service Unavailable:" not in server.log()


def test_liveness_holds_while_every_request_thread_waits(live_server_factory, blackhole_port):
    """/health/live is answered on the event loop (config/asgi.py): with every request thread
    waiting on a database that does not answer, "the process is up" still answers at once (the
    reliability QA pass: it queued behind them, so an orchestrator would have restarted the process)."""
    server = live_server_factory(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{blackhole_port}/parley", DEPENDENCY_CONNECT_TIMEOUT="5"
    )
    auth = ("someone@example.com", "A" * 32)
    with ThreadPoolExecutor(max_workers=8) as pool:
        waiting = [pool.submit(get, server, "/api/v1/users/me", auth=auth) for _ in range(8)]
        time.sleep(1)  # every request thread now waits for the database
        assert not any(future.done() for future in waiting)
        response, elapsed = get(server, "/health/live")
        assert (response.status_code, response.json()["status"]) == (200, "ok")
        assert elapsed < 2, f"/health/live took {elapsed:.1f}s"
        assert response.headers["X-Request-Id"]
        for future in waiting:
            assert_503(future.result()[0], "database")


@pytest.fixture
def member(transactional_db):
    realm = RealmFactory(string_id="")
    return UserFactory(realm=realm, role=Role.MEMBER)


@pytest.mark.parametrize("kind", ["refused", "blackhole", "not_redis"])
def test_redis_down(live_server_factory, member, blackhole_port, not_redis_port, kind):
    """Down, hung, or something else at its address (the production QA pass: an HTTP server's
    answer was a 500 "Internal server error", the readiness probe's too)."""
    port = {"refused": free_port(), "blackhole": blackhole_port, "not_redis": not_redis_port}[kind]
    server = live_server_factory(REDIS_URL=f"redis://127.0.0.1:{port}/0", DEPENDENCY_CONNECT_TIMEOUT="1")
    response, elapsed = get(server, "/health/ready")
    assert_503(response, "Redis")
    assert response.json()["checks"] == {"database": "ok", "redis": "unavailable"}
    assert elapsed < 10
    # The general rate limit fails open: reading still works without Redis.
    response, elapsed = get(server, "/api/v1/users/me", auth=(member.delivery_email, member.api_key))
    assert response.status_code == 200
    assert elapsed < 10
    # Event queues live in Redis: none can be registered.
    response = requests.post(f"{server.url}/api/v1/register", auth=(member.delivery_email, member.api_key), timeout=30)
    assert_503(response, "Redis")
    # The password-login limit fails closed.
    started = time.monotonic()
    response = requests.post(
        f"{server.url}/api/v1/fetch_api_key", data={"username": member.delivery_email, "password": "x"}, timeout=30
    )
    assert_503(response, "Redis")
    assert time.monotonic() - started < 10
