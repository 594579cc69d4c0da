"""Liveness and readiness probes."""

import time

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from apps.core import health
from apps.core.redis_client import redis_breaker
from apps.users.models import Role
from tests.api import api_for, assert_error
from tests.factories import UserFactory

REDIS_OK = {"redis": "ok"} if settings.REDIS_URL else {}


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


@pytest.mark.skipif(not settings.REDIS_URL, reason="needs Redis")
def test_redis_said_ready_is_used_again_at_once(db, monkeypatch):
    """The operator QA pass: after Redis came back, ready said so while registrations answered 503
    for seconds more (requests left it alone until the breaker's next PING)."""
    monkeypatch.setattr(redis_breaker, "_ping", lambda: time.sleep(60))  # the breaker's own PING: not yet
    redis_breaker.failed()
    try:
        assert not redis_breaker.usable()
        assert Client().get("/health/ready").status_code == 200
        assert redis_breaker.usable()
    finally:
        redis_breaker.reset()


@pytest.mark.parametrize("path", ["/health/live", "/health/ready"])
def test_probes_answer_get_only(db, path):
    response = Client().post(path)
    assert response.status_code == 404


@pytest.mark.django_db(transaction=True)
def test_ready_is_503_while_the_database_lacks_migrations(monkeypatch, caplog):
    """A server started before `migrate` ran, or after it failed, is not sent requests that would
    fail (the operator QA pass: ready said ok, /register answered 500), and says so as it starts."""
    monkeypatch.setattr(health, "_migrated", False)
    last = ("invites", "0005_email_invitation_last_sent")
    try:
        MigrationExecutor(connection).migrate([("invites", "0004_email_invitations")])
        response = Client().get("/health/ready")
        body = assert_error(response, 503, "SERVICE_UNAVAILABLE")
        assert body["checks"] == {"database": "ok", "migrations": "1 not applied", **REDIS_OK}
        assert body["msg"].endswith("lacks 1 migration(s) of this version (run manage.py migrate)")
        assert int(response["Retry-After"]) > 0
        health.warn_of_pending_migrations()
        assert "the database lacks 1 migration(s) of this version: run `manage.py migrate`" in caplog.text
        # A request needing what is missing is told so too, as a 503 (it was a 500), reading it or
        # writing it (SQLite words the two differently: the verify QA pass).
        admin = api_for(UserFactory(role=Role.ADMINISTRATOR))
        invited = admin.post("/invites", {"invitee_emails": "x@example.com", "stream_ids": "[]"})
        for answer in (admin.get("/invites"), invited):
            body = assert_error(answer, 503, "SERVICE_UNAVAILABLE")
            assert body["msg"].endswith("lacks 1 migration(s) of this version (run manage.py migrate)")
    finally:
        MigrationExecutor(connection).migrate([last])
    body = Client().get("/health/ready").json()
    assert (body["status"], "migrations" in body["checks"]) == ("ok", False)


@pytest.mark.django_db(transaction=True)
def test_migrations_undone_under_a_running_server_are_noticed(monkeypatch):
    """An older backup restored under a running server that had found every migration applied (the
    operator QA pass: requests answered 500 and ready said ok until a restart)."""
    monkeypatch.setattr(health, "_migrated", True)
    assert Client().get("/health/ready").status_code == 200
    try:
        MigrationExecutor(connection).migrate([("invites", "0004_email_invitations")])
        admin = api_for(UserFactory(role=Role.ADMINISTRATOR))
        body = assert_error(admin.get("/invites"), 503, "SERVICE_UNAVAILABLE")
        assert body["msg"].endswith("lacks 1 migration(s) of this version (run manage.py migrate)")
        assert assert_error(Client().get("/health/ready"), 503, "SERVICE_UNAVAILABLE")["checks"]["migrations"] == (
            "1 not applied"
        )
    finally:
        MigrationExecutor(connection).migrate([("invites", "0005_email_invitation_last_sent")])
    assert Client().get("/health/ready").status_code == 200


def test_a_server_without_its_static_files_says_so_as_it_starts(settings, tmp_path, caplog):
    """The operator QA pass: started without `collectstatic`, every page failed and nothing said why."""
    manifest = {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}  # the product's
    settings.STORAGES = {**settings.STORAGES, "staticfiles": manifest}
    settings.STATIC_ROOT = tmp_path
    health.warn_of_uncollected_static_files()
    said = f"the static files are not collected in STATIC_ROOT ({tmp_path}): run `manage.py collectstatic`"
    assert said in caplog.text
    caplog.clear()
    (tmp_path / "staticfiles.json").write_text('{"paths": {}, "version": "1.1"}')
    health.warn_of_uncollected_static_files()
    assert caplog.text == ""
