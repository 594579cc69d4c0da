"""GET /metrics (apps/core/metrics.py): who may read it, what the request series are labelled with,
the access log line's fields, and the counts of dependency errors and background tasks. The
multiprocess exposition across two real workers is tested in tests/e2e/test_metrics_e2e.py."""

import json
import logging

import pytest
from django.test import Client
from django.urls import get_resolver
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from apps.core.logging import JsonFormatter
from apps.core.metrics import route_template
from apps.core.tasks import retried_task
from tests.tasks import run_ready_tasks

TOKEN = "a-scrape-token-of-some-length"


def requests_counted(route: str, method: str = "GET", status: int = 200) -> float:
    labels = {"route": route, "method": method, "status": str(status)}
    return REGISTRY.get_sample_value("parley_http_requests_total", labels) or 0.0


def scrape(client: Client, **extra) -> dict[str, list]:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    families = text_string_to_metric_families(response.content.decode())
    return {family.name: family.samples for family in families}


@pytest.mark.parametrize("address", ["127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"])
def test_loopback_addresses_may_read_metrics(db, address):
    samples = scrape(Client(), REMOTE_ADDR=address, HTTP_HOST="10.0.0.5:8000")  # any Host: probes have none of ours
    assert "parley_http_requests" in samples
    assert "parley_event_polls_waiting" in samples


def refused_like_a_missing_path(response, client: Client) -> None:
    """Refused exactly as a path that does not exist: nothing says /metrics is there."""
    missing = client.get("/no-such-path")
    assert response.status_code == missing.status_code == 404
    assert response.json() == missing.json()
    assert b"parley_" not in response.content


def test_other_addresses_are_refused_like_a_missing_path(db):
    client = Client(REMOTE_ADDR="10.1.2.3")
    refused_like_a_missing_path(client.get("/metrics"), client)


def test_a_request_through_a_proxy_is_refused_even_from_loopback(db):
    """A proxy on this machine connects from loopback: the client behind it is anyone."""
    client = Client(REMOTE_ADDR="127.0.0.1")
    for header in ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP"):
        refused_like_a_missing_path(client.get("/metrics", **{header: "127.0.0.1"}), client)


def test_allowed_networks_may_read_metrics(db, settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.1.0.0/16", "fd00::/8"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="fd00::5").get("/metrics").status_code == 200
    client = Client(REMOTE_ADDR="10.2.0.1")
    refused_like_a_missing_path(client.get("/metrics"), client)


def test_the_bearer_token_is_accepted_from_anywhere_and_nothing_else_is(db, settings):
    settings.METRICS_BEARER_TOKEN = TOKEN
    client = Client(REMOTE_ADDR="203.0.113.9")
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    proxied = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", HTTP_X_FORWARDED_FOR="1.2.3.4")
    assert proxied.status_code == 200
    for wrong in (f"Bearer {TOKEN}x", f"Basic {TOKEN}", "Bearer ", TOKEN):
        refused_like_a_missing_path(client.get("/metrics", HTTP_AUTHORIZATION=wrong), client)
    # Loopback still reads without the token.
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200


def test_metrics_turned_off_are_refused_to_everyone(db, settings):
    settings.METRICS_ENABLED = False
    settings.METRICS_BEARER_TOKEN = TOKEN
    client = Client(REMOTE_ADDR="127.0.0.1")
    refused_like_a_missing_path(client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}"), client)


def test_only_get_and_head_read_metrics(db):
    assert Client().post("/metrics").status_code == 404


def test_requests_are_counted_by_route_template_not_path(member, client_for):
    member_client = client_for(member)
    route = "/api/v1/users/<id:user_id>"
    before = requests_counted(route), requests_counted(route, status=404)
    for user_id in (member.id, member.id):
        assert member_client.get(f"/api/v1/users/{user_id}").status_code == 200
    for missing_id in (999_991, 999_992, 999_993):
        assert member_client.get(f"/api/v1/users/{missing_id}").status_code == 400
    assert requests_counted(route) - before[0] == 2
    assert requests_counted(route, status=400) >= 3
    samples = scrape(Client())["parley_http_requests"]
    labels = {sample.labels["route"] for sample in samples}
    assert not any(f"/{member.id}" in label or "99999" in label for label in labels), labels


def test_unknown_paths_and_methods_share_one_label_each(db):
    client = Client()
    before = requests_counted("<unmatched>", status=404)
    for path in ("/nothing/1", "/nothing/2", "/api/v1/nothing/3"):
        assert client.get(path).status_code == 404
    assert requests_counted("<unmatched>", status=404) - before == 3
    before = requests_counted("/health/live", method="other", status=404)
    client.generic("BREW", "/health/live")
    assert requests_counted("/health/live", method="other", status=404) - before == 1


def url_routes(patterns, prefix: str = ""):
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):
            yield from url_routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def test_every_route_template_is_a_readable_path_template():
    """A label per route (no regular-expression syntax), distinct routes distinct labels."""
    routes = set(url_routes(get_resolver().url_patterns))
    templates = {route_template(route) for route in routes}
    assert len(templates) == len(routes)
    for template in templates:
        assert template.startswith("/")
        assert not template.startswith("//")
        assert not set(template) & set("^$?()[]\\+*"), template
    assert route_template("api/v1/^user_groups/(?P<pk>[^/.]+)$") == "/api/v1/user_groups/<pk>"
    assert "/api/v1/messages/<id:message_id>" in templates
    assert "/openapi.json" in templates


def test_the_json_access_line_carries_the_request_fields(member, client_for, realm, caplog):
    member_client = client_for(member)
    caplog.set_level(logging.INFO, logger="parley.access")
    response = member_client.get("/api/v1/users/me")
    [record] = [r for r in caplog.records if r.name == "parley.access"]
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == response["X-Request-Id"]
    assert line["method"] == "GET"
    assert line["path"] == "/api/v1/users/me"
    assert line["route"] == "/api/v1/users/me"
    assert line["status"] == 200
    assert line["user_id"] == member.id
    assert line["realm_id"] == realm.id
    assert line["client"] == "127.0.0.1"  # the production QA pass: access lines named no client
    assert isinstance(line["duration_ms"], float)
    assert line["duration_ms"] >= 0


def test_scrapes_are_not_in_the_access_log_but_refusals_are(db, caplog):
    caplog.set_level(logging.INFO, logger="parley.access")
    Client().get("/metrics")
    Client(REMOTE_ADDR="10.9.9.9").get("/metrics")
    assert [(r.access["path"], r.access["status"]) for r in caplog.records if r.name == "parley.access"] == [
        ("/metrics", 404)
    ]


def test_the_event_queues_are_counted_when_scraped(member, client_for):
    member_client = client_for(member)
    for _ in range(2):
        assert member_client.post("/api/v1/register", {"event_types": '["message"]'}).status_code == 200
    samples = scrape(Client())
    assert samples["parley_event_queues"][0].value >= 2
    quantiles = {s.labels["quantile"]: s.value for s in samples["parley_event_queue_length"]}
    assert set(quantiles) == {"0.5", "0.9", "0.99"}
    assert samples["parley_event_queue_length_max"][0].value >= quantiles["0.99"]


def dependency_errors(dependency: str) -> float:
    return REGISTRY.get_sample_value("parley_dependency_errors_total", {"dependency": dependency}) or 0.0


def test_an_unreachable_redis_is_counted(db, redis_down):
    before = dependency_errors("redis")
    assert Client().get("/health/ready").status_code == 503
    assert dependency_errors("redis") - before >= 1


@retried_task(max_attempts=2)
def counted_task(outcome: str) -> str:
    if outcome == "fail":
        raise ValueError("a bug")
    return outcome


def tasks_counted(outcome: str) -> float:
    name = counted_task.module_path
    return REGISTRY.get_sample_value("parley_tasks_total", {"task": name, "outcome": outcome}) or 0.0


def test_background_tasks_are_counted_queued_once_committed_then_by_outcome(db, django_capture_on_commit_callbacks):
    before = {outcome: tasks_counted(outcome) for outcome in ("queued", "succeeded", "failed")}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        counted_task.enqueue("ok")
        counted_task.enqueue("fail")
    assert tasks_counted("queued") == before["queued"]  # not committed yet
    for callback in callbacks:
        callback()
    assert tasks_counted("queued") - before["queued"] == 2
    run_ready_tasks()
    assert tasks_counted("succeeded") - before["succeeded"] == 1
    assert tasks_counted("failed") - before["failed"] == 1
