"""Liveness and readiness probes for load balancers and orchestrators."""

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from django.db import close_old_connections, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

from apps.core.errors import MigrationsPendingError, ServiceUnavailableError, count_dependency_failure, error_response
from apps.core.hooks import Hooks
from apps.core.redis_client import get_redis, redis_breaker

# What the ready probe reports besides its checks: functions returning a dict of figures (apps.events:
# the long-polls waiting in this process).
readiness_details = Hooks("readiness_details")

logger = logging.getLogger(__name__)


def live() -> JsonResponse:
    """The process is up; touches no dependency."""
    return JsonResponse({"result": "success", "msg": "", "status": "ok"})


def ready() -> JsonResponse:
    """The database answers, with every migration of this version applied, and, when configured,
    Redis too; 503 naming what is wrong otherwise (a load balancer then sends nothing to a server
    started before `migrate` ran, or after it failed: the operator QA pass)."""
    error, pending = _database_answers_in_time()
    checks = {"database": _state(error)}
    if pending:
        checks["migrations"] = f"{pending} not applied"
    if settings.REDIS_URL:
        checks["redis"] = _state(redis_unavailable())
    down = [name for name, state in checks.items() if state != "ok"]
    if not down:
        details = readiness_details.call_merged()
        return JsonResponse({"result": "success", "msg": "", "status": "ok", "checks": checks, **details})
    if down == ["migrations"]:
        return error_response(MigrationsPendingError(pending, status="unavailable", checks=checks))
    dependency = "database" if "database" in down else "Redis server"
    return error_response(ServiceUnavailableError(dependency, status="unavailable", checks=checks))


def _state(error: Exception | None) -> str:
    return "ok" if error is None else "unavailable"


# The database is asked from a thread of its own, waited for this long: a PostgreSQL that stops
# answering while its host still acknowledges (its process stopped) holds a query for as long as
# it is stopped (the fault QA pass: the probe hung 100 s, then said "ok"). A check still waiting
# is not asked again: the probe says "unavailable" at once.
READY_DATABASE_SECONDS = 5
_database_probe = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ready-database")
_database_check: Future | None = None
_database_check_lock = threading.Lock()


def _database_answers_in_time() -> tuple[Exception | None, int]:
    """Why the database cannot be used (None: it answers), and how many migrations it lacks."""
    global _database_check
    with _database_check_lock:
        if _database_check is None or _database_check.done():
            _database_check = _database_probe.submit(_database_unavailable_in_probe)
        check = _database_check
    try:
        return check.result(timeout=READY_DATABASE_SECONDS)
    except TimeoutError as exc:
        return exc, 0


def _database_unavailable_in_probe() -> tuple[Exception | None, int]:
    close_old_connections()  # the probe thread's connection, kept as a request's would be
    error = database_unavailable()
    return error, 0 if error is not None else pending_migrations()


# Every migration was found applied: so the probe takes it to stay, and the migration files are not
# read again; until a request fails on what a migration makes (an older backup restored under the
# running server: the operator QA pass), which looks again (`fresh`).
_migrated = False


def pending_migrations(*, fresh: bool = False) -> int:
    """How many migrations of this version the database lacks."""
    global _migrated
    if _migrated and not fresh:
        return 0
    executor = MigrationExecutor(connection)
    pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    _migrated = pending == 0
    return pending


def warn_of_pending_migrations() -> None:
    """Said as a server process starts (its requests needing them fail: 500s)."""
    try:
        pending = pending_migrations()
    except Exception as exc:
        if count_dependency_failure(exc) is None:
            raise
        return  # the database down: the requests and the probe say so
    if pending:
        logger.error(
            "the database lacks %d migration(s) of this version: run `manage.py migrate` (requests that "
            "need them fail, and /health/ready answers 503, until then)",
            pending,
        )


def warn_of_uncollected_static_files() -> None:
    """Said as a server process starts: without the collected static files' manifest every web page
    fails (503s, apps.core.errors.StaticFilesMissingError) while the API works (the operator QA pass:
    nothing said so). Not a readiness check: the API, which most requests are, is served."""
    manifest = getattr(staticfiles_storage, "manifest_name", None)
    if manifest is not None and not staticfiles_storage.exists(manifest):
        logger.error(
            "the static files are not collected in STATIC_ROOT (%s): run `manage.py collectstatic` "
            "(every web page fails until then; the API works)",
            settings.STATIC_ROOT,
        )


def database_unavailable() -> Exception | None:
    """Why the database cannot be used right now (the connection error), or None when it answers."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        if count_dependency_failure(exc) is None:
            raise
        connection.close_if_unusable_or_obsolete()
        return exc
    return None


def redis_unavailable() -> Exception | None:
    """Why Redis (configured) cannot be used right now, or None when it answers."""
    try:
        get_redis().ping()
    except Exception as exc:
        if count_dependency_failure(exc) is None:
            raise
        return exc
    # Said ready: the requests that left a failed Redis alone use it again now, not at the breaker's
    # next PING (the operator QA pass: ready for seconds while registrations still answered 503).
    redis_breaker.answered()
    return None
