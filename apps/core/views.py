"""The base class of every /api/v1 view, and Django's error handlers in our envelope."""

import sys
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.core.api import begin_api_request, finish_api_response
from apps.core.errors import (
    AccessDeniedError,
    InternalServerError,
    JsonableError,
    ResourceNotFoundError,
    as_jsonable_error,
    error_response,
)


class ApiView(APIView):
    """One view class per URL, one handler per HTTP method.

    Before a handler runs: the organization is resolved from the host, the user is authenticated
    with HTTP Basic (unless `authenticated = False`), and the rate limit is applied. Every error
    raised on the way is rendered by apps.core.errors.drf_exception_handler.
    """

    authenticated = True
    # OPTIONS would answer with REST framework's metadata, which no Zulip client expects.
    http_method_names = ["get", "post", "put", "patch", "delete", "head"]

    def get_authenticators(self) -> list:
        return []  # begin_api_request authenticates, the same way for every kind of view

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method.lower() not in self.http_method_names or not hasattr(self, request.method.lower()):
            # Before authentication: an unsupported method is a 405 whoever asks.
            raise MethodNotAllowed(request.method)
        request.user = begin_api_request(request._request, authenticated=self.authenticated)
        super().initial(request, *args, **kwargs)

    def finalize_response(self, request: Request, response: HttpResponse, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        return finish_api_response(request._request, response)


# Django's error handlers. `render` turns the error into a response: Zulip's envelope here; the
# directory API passes its own (config/urls.py picks the handlers by URL space).
Render = Callable[[HttpRequest, JsonableError], HttpResponse]


def envelope(request: HttpRequest, error: JsonableError) -> HttpResponse:
    return error_response(error)


def not_found(request: HttpRequest, exception: Exception | None = None, *, render: Render = envelope) -> HttpResponse:
    return render(request, ResourceNotFoundError("Not Found"))


def bad_request(request: HttpRequest, exception: Exception | None = None, *, render: Render = envelope) -> HttpResponse:
    error = as_jsonable_error(exception) if exception is not None else None
    return render(request, error or JsonableError("Bad Request"))


def permission_denied(
    request: HttpRequest, exception: Exception | None = None, *, render: Render = envelope
) -> HttpResponse:
    return render(request, AccessDeniedError())


def server_error(request: HttpRequest, *, render: Render = envelope) -> HttpResponse:
    """Django's 500 handler; it runs while the exception is being handled, so it can look at it."""
    exc = sys.exc_info()[1]
    error = as_jsonable_error(exc) if exc is not None else None
    return render(request, error or InternalServerError())
