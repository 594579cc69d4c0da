"""GET /events is served by the thin route (apps/events/asgi.py) in production and by Django's view
everywhere else (tests, WSGI, the pooled-django mode): the same request answers the same way.

Each case sends one request through both, on the ASGI applications config/asgi.py serves: the same
status, the same body and the same header names (values that are fresh on every answer, such as the
request id, may differ; their presence may not). Content-Length is the server's business: the thin
route always sends it, Django's handler leaves it to the ASGI server when no middleware set it.
"""

import base64
import logging

import pytest
from prometheus_client import REGISTRY

from apps.core.asgi import ExecutorPool, PooledASGIHandler
from apps.events.asgi import EventsPollApp
from tests.api import ApiClient, assert_success
from tests.asgi import request, run

EVENTS = "/api/v1/events"


def basic(user) -> tuple[tuple[bytes, bytes], ...]:
    credentials = base64.b64encode(f"{user.delivery_email}:{user.api_key}".encode())
    return ((b"authorization", b"Basic " + credentials),)


def both(**kwargs) -> tuple[tuple, tuple]:
    """The (status, header names, headers, body) of the request through each route, thin first.
    (Django's stack is built here: its middleware reads the settings the test has changed.)"""
    answers = []
    for app in (EventsPollApp(), PooledASGIHandler(ExecutorPool(2))):
        status, headers, body = run(request(app, EVENTS, **kwargs))
        answers.append((status, set(headers) - {"content-length"}, headers, body))
    return answers[0], answers[1]


def assert_same(thin: tuple, django: tuple, *, fresh: tuple[str, ...] = ()) -> None:
    """Same status and header names; same body, but for the keys in `fresh` (present in both)."""
    assert thin[0] == django[0]
    assert thin[1] == django[1]
    thin_body, django_body = thin[3], django[3]
    if isinstance(thin_body, dict):
        for key in fresh:
            assert key in thin_body
            assert key in django_body
            thin_body, django_body = dict(thin_body), dict(django_body)
            del thin_body[key], django_body[key]
    assert thin_body == django_body


@pytest.mark.django_db(transaction=True)
def test_success_with_an_unused_parameter(member):
    queue_id = assert_success(ApiClient(member).post("/register", {"event_types": '["message"]'}))["queue_id"]
    query = f"queue_id={queue_id}&last_event_id=-1&dont_block=true&colour=red".encode()
    thin, django = both(query=query, headers=basic(member))
    assert_same(thin, django)
    assert thin[0] == 200
    assert thin[3] == {
        "result": "success",
        "msg": "",
        "events": [],
        "queue_id": queue_id,
        "ignored_parameters_unsupported": ["colour"],
    }
    # What every API answer carries, on both routes.
    assert {"x-request-id", "x-frame-options", "x-content-type-options", "referrer-policy"} <= thin[1]
    assert thin[2]["x-frame-options"] == django[2]["x-frame-options"] == "DENY"


@pytest.mark.django_db(transaction=True)
def test_unauthorized(member):
    thin, django = both(query=b"dont_block=true")
    assert_same(thin, django)
    assert (thin[0], thin[3]["code"]) == (401, "UNAUTHORIZED")
    assert "www-authenticate" in thin[1]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("wrong_first", [True, False])
def test_credentials_sent_twice(member, wrong_first):
    """Two Authorization headers are one value joined by a comma on both routes, which no Basic
    credentials read as (the fuzz QA pass: the thin route took the last one, a poll served)."""
    wrong = (b"authorization", b"Basic " + base64.b64encode(b"x:y"))
    headers = (wrong, *basic(member)) if wrong_first else (*basic(member), wrong)
    thin, django = both(query=b"dont_block=true", headers=headers)
    assert_same(thin, django)
    assert thin[0] == 401


@pytest.mark.django_db(transaction=True)
def test_rate_limited(member, settings):
    settings.RATE_LIMIT_EVENTS_BY_USER = (1, 60)
    query = b"dont_block=true"
    assert run(request(EventsPollApp(), EVENTS, query=query, headers=basic(member)))[0] == 200
    # Both routes count in one place: past the limit on either.
    thin, django = both(query=query, headers=basic(member))
    assert_same(thin, django, fresh=("retry-after",))
    assert (thin[0], thin[3]["code"]) == (429, "RATE_LIMIT_HIT")
    assert {"retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= thin[1]


@pytest.mark.django_db(transaction=True)
def test_bad_event_queue_id(member):
    query = b"queue_id=" + b"0" * 32 + b"&last_event_id=-1&dont_block=true"
    thin, django = both(query=query, headers=basic(member))
    assert_same(thin, django)
    assert (thin[0], thin[3]["code"], thin[3]["queue_id"]) == (400, "BAD_EVENT_QUEUE_ID", "0" * 32)


@pytest.mark.django_db(transaction=True)
def test_unknown_host(member):
    thin, django = both(host=b"evil.example", query=b"dont_block=true", headers=basic(member))
    assert_same(thin, django)
    assert (thin[0], thin[3]["result"]) == (400, "error")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("host", [b"testserver", b"evil.example"])
def test_plain_http_where_https_is_required(member, settings, host):
    settings.SECURE_SSL_REDIRECT = True
    thin, django = both(host=host, query=b"dont_block=true", headers=basic(member))
    assert_same(thin, django)
    if host == b"testserver":
        assert thin[0] == 301
        assert thin[2]["location"] == django[2]["location"] == "https://testserver/api/v1/events?dont_block=true"
    else:  # never a redirect to a host that is not ours
        assert (thin[0], "location" in thin[1]) == (400, False)


@pytest.mark.django_db(transaction=True)
def test_https_behind_a_proxy(member, settings):
    """Over HTTPS (here, as the proxy's header says) both add HSTS, and neither redirects."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    headers = (*basic(member), (b"x-forwarded-proto", b"https"))
    thin, django = both(query=b"dont_block=true", headers=headers)
    assert_same(thin, django, fresh=("queue_id",))
    assert thin[0] == 200
    assert thin[2]["strict-transport-security"] == django[2]["strict-transport-security"] == "max-age=3600"


def polls_counted() -> float:
    labels = {"route": EVENTS, "method": "GET", "status": "200"}
    return REGISTRY.get_sample_value("parley_http_requests_total", labels) or 0.0


@pytest.mark.django_db(transaction=True)
def test_both_routes_log_and_count_a_poll_alike(member, caplog):
    """The access log line (its JSON fields) and the request metrics' route label are the same."""
    caplog.set_level(logging.INFO, logger="parley.access")
    queue_id = assert_success(ApiClient(member).post("/register", {"event_types": '["message"]'}))["queue_id"]
    before = polls_counted()
    thin, django = both(query=f"queue_id={queue_id}&last_event_id=-1&dont_block=true".encode(), headers=basic(member))
    assert thin[0] == django[0] == 200
    lines = [dict(r.access) for r in caplog.records if r.name == "parley.access" and r.access["path"] == EVENTS]
    assert len(lines) == 2
    for line in lines:
        assert line.pop("duration_ms") >= 0
    expected = {"method": "GET", "path": EVENTS, "route": EVENTS, "status": 200}
    assert (
        lines[0] == lines[1] == {**expected, "realm_id": member.realm_id, "user_id": member.id, "client": "127.0.0.1"}
    )
    assert polls_counted() - before == 2
