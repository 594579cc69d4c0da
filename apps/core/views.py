"""The base class of every /api/v1 view, and Django's error handlers in our envelope."""

import sys
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.core import ratelimit
from apps.core.auth import ApiKeyAuthentication
from apps.core.errors import (
    AccessDeniedError,
    InternalServerError,
    JsonableError,
    RateLimitedError,
    ResourceNotFoundError,
    UnauthorizedError,
    as_jsonable_error,
    error_response,
)
from apps.realms.selectors import get_realm_for_request


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
        return [ApiKeyAuthentication()] if self.authenticated else []

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if request.method.lower() not in self.http_method_names or not hasattr(self, request.method.lower()):
            # Before authentication: an unsupported method is a 405 whoever asks.
            raise MethodNotAllowed(request.method)
        get_realm_for_request(request._request)
        try:
            super().initial(request, *args, **kwargs)
        except UnauthorizedError:
            # Failed authentications count against the client's address, so keys cannot be
            # guessed faster than unauthenticated requests are allowed.
            self.check_rate_limit(request, user=None)
            raise
        self.check_rate_limit(request, user=request.user)

    def check_rate_limit(self, request: Request, *, user) -> None:
        if user is not None:
            request._request.api_user_id = user.id
            key, limit = f"api_by_user:{user.id}", settings.RATE_LIMIT_API_BY_USER
        else:
            key, limit = f"api_by_ip:{request.META.get('REMOTE_ADDR', '')}", settings.RATE_LIMIT_API_BY_IP
        state = ratelimit.check_api_request(key, limit)
        request._request.rate_limit_state = state
        if state is not None and state.blocked:
            raise RateLimitedError(state.retry_after)

    def finalize_response(self, request: Request, response: HttpResponse, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        state = getattr(request._request, "rate_limit_state", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return response


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(ResourceNotFoundError("Not Found"))


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    error = as_jsonable_error(exception) if exception is not None else None
    return error_response(error or JsonableError("Bad Request"))


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(AccessDeniedError())


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500 handler; it runs while the exception is being handled, so it can look at it."""
    exc = sys.exc_info()[1]
    error = as_jsonable_error(exc) if exc is not None else None
    return error_response(error or InternalServerError())
