"""Middleware that every request passes: request ids with an access log line and the request
metrics, health probes and /metrics, static files, the pages' default Content-Security-Policy.

All work in sync and async mode: one synchronous-only middleware would make Django run every async
view (the event long-poll) inside a thread for as long as it waits.
"""

import logging
import time
import uuid
from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import sync_and_async_middleware
from whitenoise.middleware import WhiteNoiseMiddleware

from apps.core import health
from apps.core.logging import current_request_id
from apps.core.metrics import METRICS_PATH, may_read_metrics, metrics_response, record_request, route_label
from apps.core.notes import RequestNotes, request_notes

access_logger = logging.getLogger("parley.access")

REQUEST_ID_HEADER = "X-Request-Id"
HEALTH_PATHS = {"/health/live": health.live, "/health/ready": health.ready}


def new_request_id() -> str:
    """A fresh request id (a UUID v4 string, as Dropshot's), set for every log line written from here
    on in this context."""
    request_id = str(uuid.uuid4())
    # Not reset when the response leaves: Django logs errors after the middleware has returned.
    # Every request runs in its own context (ASGI) or sets a new id first (WSGI threads).
    current_request_id.set(request_id)
    return request_id


# Answered before host validation, HTTPS redirects or sessions (health_check_middleware).
EARLY_PATHS = frozenset({*HEALTH_PATHS, METRICS_PATH})


def log_access(method: str, path: str, route: str, status: int, seconds: float, notes: RequestNotes) -> None:
    """Count the request in the metrics and write its access log line, whose JSON form carries the
    request's fields (apps.core.logging.JsonFormatter). Probes are counted, not logged."""
    record_request(route, method, status, seconds)
    if path in HEALTH_PATHS or (path == METRICS_PATH and status == 200) or not access_logger.isEnabledFor(logging.INFO):
        return
    realm = notes.realm
    fields = {
        "method": method,
        "path": path,
        "route": route,
        "status": status,
        "duration_ms": round(seconds * 1000, 1),
        "realm_id": notes.realm_id if notes.realm_id is not None else getattr(realm, "id", None),
        "user_id": notes.user_id,
        "client": notes.client,
    }
    access_logger.info(
        "%s %s %s %.1fms user=%s client=%s",
        method,
        path,
        status,
        seconds * 1000,
        notes.user_id or "-",
        notes.client or "-",
        extra={"access": fields},
    )


def start_request_id(request: HttpRequest) -> float:
    """Give the request its id (in its notes and every log line); returns the start time."""
    notes = request_notes(request)
    notes.request_id = new_request_id()
    notes.client = request.META.get("REMOTE_ADDR")
    return time.monotonic()


def session_user_id(request: HttpRequest) -> int | None:
    """The person a page's session authenticated (the web app's pages, the admin), once the page has
    read `request.user` (Django's AuthenticationMiddleware keeps it in `_cached_user`); never
    looked up here only to be logged."""
    user = getattr(request, "_cached_user", None)
    return user.id if user is not None and user.is_authenticated else None


def finish_request_id(request: HttpRequest, response: HttpResponse, started: float) -> HttpResponse:
    """Put the id in the response and write the access log line."""
    notes = request_notes(request)
    if notes.user_id is None:
        # An API request's authentication notes its user; a page's session is read here (the
        # newcomer QA pass: the admin's and the web app's pages logged user=-).
        notes.user_id = session_user_id(request)
    response[REQUEST_ID_HEADER] = notes.request_id
    seconds = time.monotonic() - started
    log_access(request.method, request.path, route_label(request, EARLY_PATHS), response.status_code, seconds, notes)
    return response


@sync_and_async_middleware
def request_id_middleware(get_response: Callable) -> Callable:
    """Give each request an id: in its notes, in every log line, and in the response."""
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            started = start_request_id(request)
            return finish_request_id(request, await get_response(request), started)

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        started = start_request_id(request)
        return finish_request_id(request, get_response(request), started)

    return middleware


@sync_and_async_middleware
def health_check_middleware(get_response: Callable) -> Callable:
    """Answer /health/live, /health/ready and /metrics before host validation, HTTPS redirects or
    sessions.

    Load balancers probe, and Prometheus scrapes, with their own Host header (or none) and over
    plain HTTP. /metrics is answered only to whom may read it (apps.core.metrics.may_read_metrics);
    anyone else goes on like any request for a path that does not exist (404).
    """

    def probe_for(request: HttpRequest) -> Callable[[], HttpResponse] | None:
        if request.method not in ("GET", "HEAD"):
            return None
        if request.path == METRICS_PATH:
            return metrics_response if may_read_metrics(request) else None
        return HEALTH_PATHS.get(request.path)

    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> Awaitable[HttpResponse]:
            probe = probe_for(request)
            if probe is None:
                return await get_response(request)
            return await sync_to_async(probe)()

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        probe = probe_for(request)
        return get_response(request) if probe is None else probe()

    return middleware


# Pages of the server's own (login, sign-up, the account, password resets, the Django admin, error
# pages): scripts from this server only, none inline, so that anything a page shows of people's
# input could not run as one (the hostile QA pass: /login/ had no policy). Pages with a policy of
# their own (the web app, the API documentation, uploads) keep it. No form-action: a form may lead
# to another organization's address (a new organization's sign-up goes to its own).
PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def with_page_csp(response: HttpResponse) -> HttpResponse:
    """Not on redirects: nothing of theirs is shown (and the long-poll route's, which SecurityMiddleware
    answers alone, are the same: tests/events/test_route_parity.py)."""
    page = response.get("Content-Type", "").startswith("text/html") and not 300 <= response.status_code < 400
    if page and "Content-Security-Policy" not in response:
        response["Content-Security-Policy"] = PAGE_CSP
    return response


@sync_and_async_middleware
def page_csp_middleware(get_response: Callable) -> Callable:
    """PAGE_CSP on every HTML answer without a policy of its own."""
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponse:
            return with_page_csp(await get_response(request))

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        return with_page_csp(get_response(request))

    return middleware


@sync_and_async_middleware
def static_files_middleware(get_response: Callable) -> Callable:
    """WhiteNoise's static files (the admin's CSS and scripts).

    WhiteNoise is synchronous only; in async mode only requests under STATIC_URL are handed to it.
    """
    if not iscoroutinefunction(get_response):
        return WhiteNoiseMiddleware(get_response)
    static_files = WhiteNoiseMiddleware(lambda request: None)  # a response for static files, else None

    async def async_middleware(request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(static_files.static_prefix):
            response = await sync_to_async(static_files)(request)
            if response is not None:
                return response
        return await get_response(request)

    return async_middleware
