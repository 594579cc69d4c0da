"""The base classes of every /api/v1 view (ApiView, and ApiViewSet on an ApiRouter), and Django's
error handlers in our envelope."""

import sys
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView
from rest_framework.viewsets import ViewSet

from apps.core.api import add_rate_limit_headers
from apps.core.auth import realm_for_request
from apps.core.errors import (
    AccessDeniedError,
    CsrfFailedError,
    ErrorCode,
    InternalServerError,
    JsonableError,
    RateLimitedError,
    ResourceNotFoundError,
    as_jsonable_error,
    error_response,
)
from apps.core.notes import request_notes
from apps.core.params import request_params
from apps.core.sessions import API_URL_SPACE, url_space


class ApiViewMixin:
    """What every /api/v1 view does around its handler; ApiView and ApiViewSet are made of it.

    Before a handler runs, in Zulip's order: the organization is resolved from the host, REST
    framework's authentication classes say who asks (settings: HTTP Basic with an API key), the
    throttles count the request (by user, or by address when nobody authenticated, failed
    attempts included), then the permission classes check the role (`permission_classes`; an
    endpoint without authentication sets both to `[]`). Every error raised on the way is rendered
    by apps.core.errors.drf_exception_handler; every answer carries the rate-limit headers.
    """

    # OPTIONS would answer with REST framework's metadata, which no Zulip client expects.
    http_method_names = ["get", "post", "put", "patch", "delete", "head"]
    # Role gates of single methods, after `permission_classes`: {"post": [IsOrganizationAdministrator]}.
    method_permission_classes: dict[str, list] = {}
    # The methods an incoming webhook bot's key may call ({"post"} on POST /messages); none elsewhere.
    incoming_webhook_bot_methods: frozenset[str] = frozenset()

    def get_authenticators(self) -> list:
        """The authentication classes of the request's URL space: API keys on /api/v1, the session
        on /json/ (apps.core.sessions). REST framework asks before wrapping the request, while
        `self.request` is still Django's (set by View.setup)."""
        # drf-spectacular inspects views without a request: its document describes /api/v1.
        space = API_URL_SPACE if self.request is None else url_space(self.request)
        return [auth for auth in super().get_authenticators() if getattr(auth, "url_space", space) == space]

    def get_permissions(self) -> list:
        method = self.request.method.lower()
        extra = self.method_permission_classes.get("get" if method == "head" else method, ())
        return [permission() for permission in (*self.permission_classes, *extra)]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method.lower() not in self.http_method_names or not hasattr(self, request.method.lower()):
            # Before authentication: an unsupported method is a 405 whoever asks.
            raise exceptions.MethodNotAllowed(request.method)
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(request)
        realm_for_request(request._request)
        try:
            self.perform_authentication(request)
        except exceptions.AuthenticationFailed:
            self.check_throttles(request)  # counted against the client's address
            raise
        self.check_throttles(request)
        self.check_permissions(request)
        if request.method not in ("GET", "HEAD"):
            # A body that cannot be read (a media type other than a form's, a broken multipart body)
            # is refused before the handler does anything (the fuzz QA pass: handlers that read no
            # parameter acted, then json_success's look at the parameters refused the request).
            request_params(request)

    def throttled(self, request: Request, wait: float | None) -> None:
        raise RateLimitedError(wait or 0.001)

    def finalize_response(self, request: Request, response: HttpResponse, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        return add_rate_limit_headers(request_notes(request), response)


class ApiView(ApiViewMixin, APIView):
    """One view class per URL, one handler per HTTP method: the one-off endpoints."""


class ApiViewSet(ApiViewMixin, ViewSet):
    """A collection of one resource (user groups, ...): its actions, registered on an ApiRouter.

    The standard actions (`list`, `partial_update`, `destroy`, ...) take the router's paths; the
    others are `@action`s with Zulip's `url_path` (`"create"`, `"members/<id:user_id>"`). A method a
    path's actions lack is a 405 listing those it has (`allowed_methods`); HEAD follows GET. Role
    gates are `permission_classes` and `method_permission_classes`, as for ApiView.
    """


class ApiRouter(SimpleRouter):
    """Zulip's paths for ViewSets: no trailing slash, and the lookup a `path()` converter (a ViewSet
    sets `lookup_url_kwarg` and `lookup_value_converter = "id"`: digits only, apps.core.converters)."""

    def __init__(self) -> None:
        super().__init__(trailing_slash=False, use_regex_path=False)


# Django's error handlers. `render` turns the error into a response: Zulip's envelope here; the
# directory API passes its own (config/urls.py picks the handlers by URL space).
Render = Callable[[HttpRequest, JsonableError], HttpResponse]


def envelope(request: HttpRequest, error: JsonableError) -> HttpResponse:
    return error_response(error)


# A browser opening a page (not an API): the error in words, as a page with the error's status and
# headers (a 503's Retry-After). Rendered without the request: its context processors may need the
# very database that is down.
PAGE_TEXTS = {
    ErrorCode.SERVICE_UNAVAILABLE: ("Temporarily unavailable", "The server cannot answer now. Try again in a minute."),
    ErrorCode.INTERNAL_SERVER_ERROR: ("Something went wrong", "The server could not show this page."),
    ErrorCode.CSRF_FAILED: (
        "This page has expired",
        "The form was sent without this site's cookie, or with an old one. Go back, reload the page and try again"
        " (this site's cookies must be allowed).",
    ),
}


def page(request: HttpRequest, error: JsonableError) -> HttpResponse:
    title, explanation = PAGE_TEXTS.get(error.code, (error.msg, ""))
    if error.http_status_code == 404:
        title, explanation = "Page not found", "There is no page at this address."
    html = render_to_string("error.html", {"title": title, "explanation": explanation})
    return HttpResponse(html, status=error.http_status_code, headers=error.headers())


def wants_page(request: HttpRequest) -> bool:
    """Whether the request is a browser's for a page rather than a client's call to an API."""
    return not request.path_info.startswith(("/api/", "/json/")) and "text/html" in request.META.get("HTTP_ACCEPT", "")


def not_found(request: HttpRequest, exception: Exception | None = None, *, render: Render = envelope) -> HttpResponse:
    return render(request, ResourceNotFoundError("Not Found"))


def bad_request(request: HttpRequest, exception: Exception | None = None, *, render: Render = envelope) -> HttpResponse:
    error = as_jsonable_error(exception) if exception is not None else None
    return render(request, error or JsonableError("Bad Request"))


def permission_denied(
    request: HttpRequest, exception: Exception | None = None, *, render: Render = envelope
) -> HttpResponse:
    return render(request, AccessDeniedError())


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """Django's CSRF refusal (CSRF_FAILURE_VIEW) of a form a page sent (a login page left open past
    its cookie, cookies refused): a page that says what to do, or Zulip's CSRF_FAILED for a client."""
    error = CsrfFailedError(reason)
    return page(request, error) if wants_page(request) else envelope(request, error)


def server_error(request: HttpRequest, *, render: Render = envelope) -> HttpResponse:
    """Django's 500 handler; it runs while the exception is being handled, so it can look at it."""
    exc = sys.exc_info()[1]
    error = as_jsonable_error(exc) if exc is not None else None
    return render(request, error or InternalServerError())
