"""Liveness and readiness probes for load balancers and orchestrators."""

from django.conf import settings
from django.db import connection
from django.http import JsonResponse

from apps.core.errors import ServiceUnavailableError, count_dependency_failure, error_response
from apps.core.hooks import Hooks
from apps.core.redis_client import get_redis

# What the ready probe reports besides its checks: functions returning a dict of figures (apps.events:
# the long-polls waiting in this process).
readiness_details = Hooks("readiness_details")


def live() -> JsonResponse:
    """The process is up; touches no dependency."""
    return JsonResponse({"result": "success", "msg": "", "status": "ok"})


def ready() -> JsonResponse:
    """The database answers and, when configured, Redis too; 503 naming what is down otherwise."""
    checks = {"database": _state(database_unavailable())}
    if settings.REDIS_URL:
        checks["redis"] = _state(redis_unavailable())
    down = [name for name, state in checks.items() if state != "ok"]
    if not down:
        details = readiness_details.call_merged()
        return JsonResponse({"result": "success", "msg": "", "status": "ok", "checks": checks, **details})
    dependency = "database" if "database" in down else "Redis server"
    return error_response(ServiceUnavailableError(dependency, status="unavailable", checks=checks))


def _state(error: Exception | None) -> str:
    return "ok" if error is None else "unavailable"


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
    return None
