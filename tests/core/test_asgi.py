"""Django on the ASGI executor pool (apps/core/asgi.py): synchronous work stays on the pool's few
threads, and a waiting async view holds none of them."""

import asyncio
import base64
import json
import threading
import time

import pytest

from apps.core.asgi import ExecutorPool, PooledASGIHandler
from apps.events.asgi import EventsPollApp, encode_json
from tests.asgi import request, run
from tests.core.urls import Gate

pytestmark = pytest.mark.urls("tests.core.urls")


def test_synchronous_views_run_on_the_pool_threads_only():
    app = PooledASGIHandler(ExecutorPool(2))

    async def many():
        return await asyncio.gather(*(request(app, "/test/thread") for _ in range(20)))

    threads_before = threading.active_count()
    responses = run(many())
    assert {status for status, _, _ in responses} == {200}
    assert all(headers["x-request-id"] for _, headers, _ in responses)
    names = {body["thread"] for _, _, body in responses}
    assert names <= {"parley-sync-0_0", "parley-sync-1_0"}
    # Twenty concurrent requests started no thread beyond the pool's two.
    assert threading.active_count() <= threads_before + 2


def test_a_waiting_async_view_holds_no_thread():
    """With one pool thread, several async views wait at once: none of them keeps the thread (a
    synchronous-only middleware anywhere in the chain would make the second one wait forever)."""
    app = PooledASGIHandler(ExecutorPool(1))

    async def scenario():
        Gate.entered, Gate.opened = 0, asyncio.Event()
        waiting = [asyncio.create_task(request(app, "/test/gate")) for _ in range(3)]
        while Gate.entered < 3:
            await asyncio.sleep(0.01)
        # Meanwhile a synchronous view still gets the only thread.
        status, _, body = await request(app, "/test/thread")
        assert (status, body["thread"]) == (200, "parley-sync-0_0")
        Gate.opened.set()
        return await asyncio.gather(*waiting)

    responses = run(scenario())
    assert [status for status, _, _ in responses] == [200, 200, 200]
    assert {body["thread"] for _, _, body in responses} == {threading.main_thread().name}


@pytest.fixture
def static_root(tmp_path, settings):
    (tmp_path / "parley").mkdir()
    (tmp_path / "parley" / "hello.txt").write_text("hello, static")
    settings.STATIC_ROOT = tmp_path
    settings.STATIC_URL = "/static/"
    return tmp_path


@pytest.mark.filterwarnings("error")
def test_static_files_are_served(static_root, client, async_client):
    response = client.get("/static/parley/hello.txt")
    assert (response.status_code, b"".join(response.streaming_content)) == (200, b"hello, static")
    # Django's async middleware chain (what an async view goes through) serves them too.
    response = run(async_client.get("/static/parley/hello.txt"))
    assert (response.status_code, b"".join(response.streaming_content)) == (200, b"hello, static")

    app = PooledASGIHandler(ExecutorPool(1))
    status, _, body = run(request(app, "/static/parley/hello.txt"))
    assert (status, body) == (200, b"hello, static")
    status, _, body = run(request(app, "/static/parley/missing.txt"))
    assert (status, body["result"]) == (404, "error")


def test_the_events_route_redirects_to_https_only_for_our_own_hosts(settings):
    settings.SECURE_SSL_REDIRECT = True
    status, headers, _ = run(request(EventsPollApp(), "/api/v1/events", host=b"testserver"))
    assert (status, headers["location"]) == (301, "https://testserver/api/v1/events")
    # Never a redirect to a host that is not ours.
    status, headers, body = run(request(EventsPollApp(), "/api/v1/events", host=b"evil.example"))
    assert status == 400
    assert "location" not in headers
    assert body["result"] == "error"


@pytest.mark.django_db(transaction=True)
def test_the_events_route_answers_too_many_parameters_in_the_envelope(settings, member):
    """More parameters than Django accepts (DATA_UPLOAD_MAX_NUMBER_FIELDS) escaped the route as an
    exception, which the server answered with a bare 500."""
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    query = "&".join(f"p{i}=1" for i in range(11)).encode()
    credentials = base64.b64encode(f"{member.delivery_email}:{member.api_key}".encode())
    authorization = ((b"authorization", b"Basic " + credentials),)
    status, _, body = run(request(EventsPollApp(), "/api/v1/events", query=query, headers=authorization))
    assert (status, body["result"], body["msg"]) == (400, "error", "Too many parameters (the limit is 10)")
    # Authentication comes first, as for every request.
    status, _, body = run(request(EventsPollApp(), "/api/v1/events", query=query))
    assert (status, body["code"]) == (401, "UNAUTHORIZED")
    # At the limit, the parameters are read: this poll lacks a queue id.
    status, _, body = run(
        request(EventsPollApp(), "/api/v1/events", query=query.rpartition(b"&")[0], headers=authorization)
    )
    assert (status, body["msg"]) == (400, "Missing 'queue_id' argument")


@pytest.mark.django_db(transaction=True)
def test_the_events_route_sends_the_rate_limit_headers(settings, member):
    settings.RATE_LIMIT_EVENTS_BY_USER = (2, 60)
    credentials = base64.b64encode(f"{member.delivery_email}:{member.api_key}".encode())
    authorization = ((b"authorization", b"Basic " + credentials),)
    query = b"dont_block=true"
    status, headers, body = run(request(EventsPollApp(), "/api/v1/events", query=query, headers=authorization))
    assert (status, body["queue_id"] is not None) == (200, True)
    assert (headers["x-ratelimit-limit"], headers["x-ratelimit-remaining"]) == ("2", "1")
    assert int(headers["x-ratelimit-reset"]) > time.time()
    run(request(EventsPollApp(), "/api/v1/events", query=query, headers=authorization))
    status, headers, body = run(request(EventsPollApp(), "/api/v1/events", query=query, headers=authorization))
    assert (status, body["code"], headers["x-ratelimit-remaining"]) == (429, "RATE_LIMIT_HIT", "0")
    assert int(headers["retry-after"]) > 0


def test_poll_answers_are_compact_utf8_json_even_with_a_lone_surrogate():
    assert encode_json({"events": [{"id": 1, "text": "ça ✓"}]}) == '{"events":[{"id":1,"text":"ça ✓"}]}'.encode()
    # UTF-8 cannot carry a lone surrogate: escaped, as json.dumps does, rather than a failed answer.
    assert json.loads(encode_json({"text": "\ud800"})) == {"text": "\ud800"}
