"""Liveness and readiness probes."""

import pytest
from django.test import Client

from tests.api import assert_error


def test_live_needs_nothing_not_even_a_valid_host():
    response = Client().get("/health/live", HTTP_HOST="10.1.2.3:9999")
    assert response.status_code == 200
    assert response.json() == {"result": "success", "msg": "", "status": "ok"}


def test_ready_checks_the_database(db):
    response = Client().get("/health/ready", HTTP_HOST="load-balancer.internal")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"


def test_ready_is_503_when_redis_is_unreachable(db, redis_down):
    response = Client().get("/health/ready")
    body = assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert body["checks"] == {"database": "ok", "redis": "unavailable"}
    assert int(response["Retry-After"]) > 0


@pytest.mark.parametrize("path", ["/health/live", "/health/ready"])
def test_probes_answer_get_only(db, path):
    response = Client().post(path)
    assert response.status_code == 404
