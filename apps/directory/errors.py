"""The directory API's errors: every 4xx and 5xx under its URLs is Dropshot's `Error` body,
`{"message", "request_id", "error_code"?}`, with `request_id` equal to the `X-Request-Id` header.

Views and the shared request pipeline raise the same exception types as the messaging API
(apps.core.errors); only the rendering differs.
"""

from typing import Any

from django.http import HttpRequest, JsonResponse
from rest_framework import exceptions as drf_exceptions

from apps.core.auth import BasicAuthRequiredError
from apps.core.authentication import ApiAuthenticationFailed
from apps.core.errors import (
    NOT_LOGGED_IN,
    ErrorCode,
    JsonableError,
    MethodNotAllowedError,
    UnauthorizedError,
    error_for_exception,
)
from apps.core.notes import request_notes

# A request without credentials (Oxide's words, and what to send).
CREDENTIALS_MISSING = "credentials missing or invalid: HTTP Basic authentication with an email and API key"

# Dropshot's `error_code` for the messaging API's errors that have one worth a program's attention;
# the others (bad request, not found, wrong method) have none, as in Dropshot.
ERROR_CODES = {
    ErrorCode.UNAUTHORIZED: "Unauthorized",
    ErrorCode.USER_DEACTIVATED: "Unauthorized",
    ErrorCode.REALM_DEACTIVATED: "Unauthorized",
    ErrorCode.NONEXISTENT_SUBDOMAIN: "NoSuchOrganization",
    ErrorCode.RATE_LIMIT_HIT: "TooManyRequests",
    ErrorCode.SERVICE_UNAVAILABLE: "ServiceUnavailable",
    ErrorCode.INTERNAL_SERVER_ERROR: "Internal",
}


class DirectoryError(JsonableError):
    """An error only the directory API raises, with its own `error_code` (None: left out of the body)."""

    def __init__(self, message: str, *, status: int = 400, error_code: str | None = None) -> None:
        super().__init__(message)
        self.http_status_code = status
        self.error_code = error_code


class InvalidQueryError(DirectoryError):
    """400 for a query parameter that cannot be used; Dropshot's wording."""

    def __init__(self, problem: str, *, error_code: str = "InvalidRequest") -> None:
        super().__init__(f"unable to parse query string: {problem}", error_code=error_code)


class InvalidPageTokenError(InvalidQueryError):
    def __init__(self, problem: str) -> None:
        super().__init__(f"failed to parse pagination token: {problem}", error_code="InvalidPageToken")


class BadPathParameterError(DirectoryError):
    """400 for a path parameter that does not parse, Dropshot's wording (no error_code)."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"bad parameter in URL path: {problem}")


class UserNotFoundError(DirectoryError):
    def __init__(self, user_id: object) -> None:
        super().__init__(f'not found: user with id "{user_id}"', status=404, error_code="ObjectNotFound")


class PreconditionFailedError(DirectoryError):
    def __init__(self) -> None:
        super().__init__(
            "precondition failed: the user is not as the request's conditions require",
            status=412,
            error_code="PreconditionFailed",
        )


def error_to_dict(error: JsonableError, request_id: str) -> dict[str, Any]:
    body = {"message": error.msg, "request_id": request_id}
    error_code = error.error_code if isinstance(error, DirectoryError) else ERROR_CODES.get(error.code)
    if error_code is not None:
        body["error_code"] = error_code
    return body


def error_response(request: HttpRequest, error: JsonableError) -> JsonResponse:
    response = JsonResponse(error_to_dict(error, request_notes(request).request_id), status=error.http_status_code)
    for name, value in error.headers().items():
        response[name] = value
    return response


def drf_exception_handler(exc: Exception, context: dict[str, Any]) -> JsonResponse:
    """The directory views' exception handler: everything they raise, as an `Error`."""
    view = context["view"]
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        error = MethodNotAllowedError(list(view.allowed_methods))
    elif isinstance(exc, ApiAuthenticationFailed) and isinstance(exc.error, BasicAuthRequiredError):
        # Dropshot's services answer every credential they cannot use with a 401 (and here its
        # challenge names the scheme to use), where the messaging API answers Zulip's 400.
        error = UnauthorizedError(exc.error.msg)
    else:
        error = error_for_exception(exc, type(view).__name__)
        if isinstance(error, UnauthorizedError) and error.msg == NOT_LOGGED_IN:
            # The messaging API's words offer a session, which the directory does not take (the
            # directory QA pass).
            error = UnauthorizedError(CREDENTIALS_MISSING)
    return error_response(context["request"]._request, error)
