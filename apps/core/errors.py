"""API errors: the exception types views and actions raise, and the one handler that renders them.

Every error response, whatever raised it, is Zulip's envelope:
`{"result": "error", "msg": ..., "code": ..., **extra}`. Views never build error responses by hand.
"""

import logging
import math
import re
from enum import StrEnum
from typing import Any

import redis.exceptions
from django.conf import settings
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from django.http.multipartparser import MultiPartParserError
from rest_framework import exceptions as drf_exceptions

from apps.core.encoding import CompactJsonResponse
from apps.core.metrics import count_dependency_error

logger = logging.getLogger(__name__)


class ErrorCode(StrEnum):
    BAD_REQUEST = "BAD_REQUEST"
    REQUEST_VARIABLE_MISSING = "REQUEST_VARIABLE_MISSING"
    REQUEST_VARIABLE_INVALID = "REQUEST_VARIABLE_INVALID"
    UNAUTHORIZED = "UNAUTHORIZED"
    UNAUTHORIZED_PRINCIPAL = "UNAUTHORIZED_PRINCIPAL"
    AUTHENTICATION_FAILED = "AUTHENTICATION_FAILED"
    USER_DEACTIVATED = "USER_DEACTIVATED"
    REALM_DEACTIVATED = "REALM_DEACTIVATED"
    PASSWORD_AUTH_DISABLED = "PASSWORD_AUTH_DISABLED"  # noqa: S105 (an error code)
    NONEXISTENT_SUBDOMAIN = "NONEXISTENT_SUBDOMAIN"
    RATE_LIMIT_HIT = "RATE_LIMIT_HIT"
    BAD_EVENT_QUEUE_ID = "BAD_EVENT_QUEUE_ID"
    STREAM_DOES_NOT_EXIST = "STREAM_DOES_NOT_EXIST"
    CHANNEL_ALREADY_EXISTS = "CHANNEL_ALREADY_EXISTS"
    BAD_NARROW = "BAD_NARROW"
    CANNOT_ADMINISTER_CHANNEL = "CANNOT_ADMINISTER_CHANNEL"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
    EXPECTATION_MISMATCH = "EXPECTATION_MISMATCH"
    CANNOT_DEACTIVATE_GROUP_IN_USE = "CANNOT_DEACTIVATE_GROUP_IN_USE"
    CANNOT_DEACTIVATE_LAST_USER = "CANNOT_DEACTIVATE_LAST_USER"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    INVALID_PUSH_DEVICE_TOKEN = "INVALID_PUSH_DEVICE_TOKEN"  # noqa: S105 (an error code)
    INVALID_REMOTE_PUSH_DEVICE_TOKEN = "INVALID_REMOTE_PUSH_DEVICE_TOKEN"  # noqa: S105 (an error code)
    NO_ACTIVE_PUSH_DEVICE = "NO_ACTIVE_PUSH_DEVICE"
    PUSH_SERVICE_NOT_CONFIGURED = "PUSH_SERVICE_NOT_CONFIGURED"
    MOVE_MESSAGES_TIME_LIMIT_EXCEEDED = "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"
    REALM_UPLOAD_QUOTA = "REALM_UPLOAD_QUOTA"
    STREAM_WILDCARD_MENTION_NOT_ALLOWED = "STREAM_WILDCARD_MENTION_NOT_ALLOWED"
    TOPIC_WILDCARD_MENTION_NOT_ALLOWED = "TOPIC_WILDCARD_MENTION_NOT_ALLOWED"
    REACTION_ALREADY_EXISTS = "REACTION_ALREADY_EXISTS"
    REACTION_DOES_NOT_EXIST = "REACTION_DOES_NOT_EXIST"
    CSRF_FAILED = "CSRF_FAILED"
    INVITATION_FAILED = "INVITATION_FAILED"


class JsonableError(Exception):
    """An error the client caused or may act on; rendered as the error envelope.

    `data` holds the extra top-level fields of the body (`var_name`, `queue_id`, ...).
    """

    code: ErrorCode = ErrorCode.BAD_REQUEST
    http_status_code: int = 400

    def __init__(self, msg: str, *, code: ErrorCode | None = None, **data: Any) -> None:
        super().__init__(msg)
        self.msg = msg
        if code is not None:
            self.code = code
        self.data = data

    def headers(self) -> dict[str, str]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        return {"result": "error", "msg": self.msg, "code": str(self.code), **self.data}


class MissingArgumentError(JsonableError):
    code = ErrorCode.REQUEST_VARIABLE_MISSING

    def __init__(self, var_name: str) -> None:
        super().__init__(f"Missing '{var_name}' argument", var_name=var_name)


class InvalidArgumentError(JsonableError):
    code = ErrorCode.REQUEST_VARIABLE_INVALID

    def __init__(self, var_name: str, msg: str) -> None:
        super().__init__(msg, var_name=var_name)


class RequestVariableConversionError(JsonableError):
    """A value of the right type that is none of the parameter's values (Zulip's, with its fields)."""

    code = ErrorCode.REQUEST_VARIABLE_INVALID

    def __init__(self, var_name: str, bad_value: Any) -> None:
        if isinstance(bad_value, int) and not -(2**63) <= bad_value < 2**64:
            bad_value = str(bad_value)  # beyond what JSON clients hold as a number (the verify QA pass)
        super().__init__(f"Bad value for '{var_name}': {bad_value}", var_name=var_name, bad_value=bad_value)


class ResourceNotFoundError(JsonableError):
    http_status_code = 404


class AccessDeniedError(JsonableError):
    http_status_code = 403

    def __init__(self) -> None:
        super().__init__("Access denied")


class OrganizationOwnerRequiredError(JsonableError):
    code = ErrorCode.UNAUTHORIZED_PRINCIPAL

    def __init__(self) -> None:
        super().__init__("Must be an organization owner")


class OrganizationAdministratorRequiredError(JsonableError):
    code = ErrorCode.UNAUTHORIZED_PRINCIPAL

    def __init__(self) -> None:
        super().__init__("Must be an organization administrator")


NOT_LOGGED_IN = "Not logged in: API authentication or user session required"
BASIC_CHALLENGE = 'Basic realm="zulip"'
# The browser's API (/json/...): a challenge no browser answers with its password dialog, as Zulip's.
SESSION_CHALLENGE = 'Session realm="zulip"'


class UnauthorizedError(JsonableError):
    """401 with the challenge header Zulip clients expect (HTTP Basic; a session on /json/...)."""

    code = ErrorCode.UNAUTHORIZED
    http_status_code = 401

    def __init__(
        self,
        msg: str = NOT_LOGGED_IN,
        *,
        challenge: str = BASIC_CHALLENGE,
    ) -> None:
        super().__init__(msg)
        self.challenge = challenge

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.challenge}


class CsrfFailedError(JsonableError):
    """A state-changing request of the browser's API without the page's CSRF token (Zulip's answer)."""

    code = ErrorCode.CSRF_FAILED
    http_status_code = 403

    def __init__(self, reason: str) -> None:
        super().__init__(f"CSRF error: {reason}")


class AuthenticationFailedError(JsonableError):
    code = ErrorCode.AUTHENTICATION_FAILED
    http_status_code = 401

    def __init__(self) -> None:
        super().__init__("Your username or password is incorrect")


class UserDeactivatedError(UnauthorizedError):
    """As Zulip's: a 401 with its own code, and the challenge."""

    code = ErrorCode.USER_DEACTIVATED

    def __init__(self) -> None:
        super().__init__("Account is deactivated")


class RealmDeactivatedError(UnauthorizedError):
    code = ErrorCode.REALM_DEACTIVATED

    def __init__(self) -> None:
        super().__init__("This organization has been deactivated")


class PasswordAuthDisabledError(JsonableError):
    code = ErrorCode.PASSWORD_AUTH_DISABLED
    http_status_code = 401

    def __init__(self) -> None:
        super().__init__("Password authentication is disabled in this organization")


class InvalidSubdomainError(JsonableError):
    code = ErrorCode.NONEXISTENT_SUBDOMAIN
    http_status_code = 404

    def __init__(self) -> None:
        super().__init__("Invalid subdomain")


class RateLimitedError(JsonableError):
    code = ErrorCode.RATE_LIMIT_HIT
    http_status_code = 429

    def __init__(self, retry_after: float, msg: str = "API usage exceeded rate limit", *, state: Any = None) -> None:
        """`state`: the refusing limit's RateLimitState, when it is not the general API limit (whose
        X-RateLimit-* headers every answer carries): the answer's headers are then that limit's."""
        self.retry_after = retry_after
        self.state = state
        super().__init__(msg, **{"retry-after": retry_after})

    def headers(self) -> dict[str, str]:
        limit_headers = self.state.headers() if self.state is not None else {}
        return {"Retry-After": str(math.ceil(self.retry_after)), **limit_headers}


class UnavailableError(JsonableError):
    """503, to be asked again later (Retry-After): what the server needs is missing or unreachable."""

    code = ErrorCode.SERVICE_UNAVAILABLE
    http_status_code = 503

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(settings.SERVICE_UNAVAILABLE_RETRY_AFTER)}


class ServiceUnavailableError(UnavailableError):
    def __init__(self, dependency: str, **data: Any) -> None:
        super().__init__(f"Service temporarily unavailable: the {dependency} cannot be reached", **data)


class StaticFilesMissingError(UnavailableError):
    """The collected static files' manifest lacks what a page names: `collectstatic` was not run for
    this version (the operator QA pass: every page a 500)."""

    def __init__(self) -> None:
        super().__init__(
            "Service temporarily unavailable: the static files are not collected (run manage.py collectstatic)"
        )


class MigrationsPendingError(UnavailableError):
    """The database lacks migrations of the running version: requests needing them would fail."""

    def __init__(self, pending: int, **data: Any) -> None:
        super().__init__(
            f"Service temporarily unavailable: the database lacks {pending} migration(s) of this version"
            " (run manage.py migrate)",
            **data,
        )


class ConflictingChangeError(JsonableError):
    """The database gave up on the request's transaction because of another one made at the same
    moment (a deadlock, a serialization failure): nothing was changed, and trying again works."""

    code = ErrorCode.SERVICE_UNAVAILABLE
    http_status_code = 503

    def __init__(self) -> None:
        super().__init__("Service temporarily unavailable: a conflicting change was made at the same moment; try again")

    def headers(self) -> dict[str, str]:
        return {"Retry-After": "1"}


class InternalServerError(JsonableError):
    code = ErrorCode.INTERNAL_SERVER_ERROR
    http_status_code = 500

    def __init__(self) -> None:
        super().__init__("Internal server error")


# Redis errors that mean "cannot use Redis right now" (a read-only replica answers during failover;
# something else answers at REDIS_URL's address: an answer that is not Redis's protocol).
REDIS_UNAVAILABLE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    redis.exceptions.InvalidResponse,
)


# SQLite's words for a table or column missing (an INSERT says the last; the verify QA pass).
SQLITE_SCHEMA_ERROR = re.compile(r"no such (table|column): |table \S+ has no column named ")


def is_sqlite_schema_error(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError) and SQLITE_SCHEMA_ERROR.match(str(exc)) is not None


def dependency_of(exc: BaseException) -> str | None:
    """ "database" or "redis" when `exc` means that dependency is unreachable, else None."""
    if is_sqlite_schema_error(exc):
        return None  # a table or column missing (PostgreSQL's word for it is a ProgrammingError)
    if isinstance(exc, OperationalError | InterfaceError):
        return "database"
    if isinstance(exc, DatabaseError) and _is_pool_timeout(exc):
        return "database"
    if isinstance(exc, REDIS_UNAVAILABLE):
        return "redis"
    return None


def dependency_error(exc: BaseException) -> ServiceUnavailableError | None:
    """The 503 to answer when `exc` means PostgreSQL or Redis is unreachable, else None."""
    dependency = dependency_of(exc)
    if dependency is None:
        return None
    return ServiceUnavailableError("database" if dependency == "database" else "Redis server")


def count_dependency_failure(exc: BaseException) -> str | None:
    """Count `exc` in the metrics if it means a dependency is unreachable; returns which, else None."""
    dependency = dependency_of(exc)
    if dependency is not None:
        count_dependency_error(dependency)
    return dependency


def _is_pool_timeout(exc: BaseException) -> bool:
    cause = exc.__cause__
    return cause is not None and type(cause).__name__ == "PoolTimeout"


def error_response(error: JsonableError) -> CompactJsonResponse:
    response = CompactJsonResponse(error.to_dict(), status=error.http_status_code)
    for name, value in error.headers().items():
        response[name] = value
    return response


def is_conflict(exc: BaseException) -> bool:
    """Whether `exc` is PostgreSQL ending the transaction because of a concurrent one (SQLSTATE
    class 40: a deadlock, a serialization failure)."""
    return isinstance(exc, OperationalError) and str(getattr(exc.__cause__, "sqlstate", "") or "").startswith("40")


def malformed_multipart_message(exc: MultiPartParserError) -> str:
    """Why a multipart body could not be read, for its sender. Django limits a part's headers to
    1 kB; a file's name is the one a client may make that long (the hostile QA pass: answered
    "Multipart form parse error - Request max total header size exceeded.")."""
    if "header size" in str(exc):
        return "Malformed request body: a part's headers are over 1 kB (is a file's name that long?)"
    return "Malformed request body"


def one_line(exc: BaseException) -> str:
    """The exception's message on one line, for a log line of its own (libpq's messages span lines)."""
    return " ".join(str(exc).split())


def as_jsonable_error(exc: BaseException) -> JsonableError | None:
    """Translate any exception a view may raise into our error type; None if it is a bug."""
    if isinstance(exc, JsonableError):
        return exc
    if is_conflict(exc):
        logger.warning("transaction given up for a concurrent one: %s", one_line(exc))
        return ConflictingChangeError()
    if (unavailable := dependency_error(exc)) is not None:
        count_dependency_failure(exc)
        logger.warning("dependency unavailable: %s: %s", type(exc).__name__, one_line(exc))
        return unavailable
    if isinstance(exc, RequestDataTooBig):
        error = JsonableError(f"Request body too large (the limit is {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes)")
        error.http_status_code = 413
        return error
    if isinstance(exc, TooManyFieldsSent):  # (said why: the directory QA pass)
        return JsonableError(f"Too many parameters (the limit is {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,})")
    if isinstance(exc, TooManyFilesSent):  # (the fuzz QA pass: "Bad Request")
        return JsonableError(f"Too many files (the limit is {settings.DATA_UPLOAD_MAX_NUMBER_FILES:,})")
    if isinstance(exc, SuspiciousOperation):
        return JsonableError("Bad Request")
    if isinstance(exc, drf_exceptions.ParseError) and isinstance(exc.__context__, MultiPartParserError):
        return JsonableError(malformed_multipart_message(exc.__context__))
    if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
        # apps.core.authentication carries Zulip's error for the refusal in `error`.
        error = getattr(exc, "error", None)
        if isinstance(error, JsonableError):
            return error
        # REST framework notes the first authentication class's challenge (apps.core.views).
        return UnauthorizedError(challenge=getattr(exc, "auth_header", None) or BASIC_CHALLENGE)
    if isinstance(exc, Http404 | drf_exceptions.NotFound):
        return ResourceNotFoundError("Not Found")
    if isinstance(exc, PermissionDenied | drf_exceptions.PermissionDenied):
        return AccessDeniedError()
    if isinstance(exc, drf_exceptions.APIException):
        error = JsonableError(str(exc.detail))
        error.http_status_code = exc.status_code
        return error
    if isinstance(exc, ValueError) and str(exc).startswith("Missing staticfiles manifest"):
        return StaticFilesMissingError()
    if pending := migrations_missing_for(exc):
        # A table or column of this version missing (the operator QA pass: 500s, where /health/ready
        # said why): what the probe says, until `migrate` runs.
        return MigrationsPendingError(pending)
    return None


def migrations_missing_for(exc: BaseException) -> int:
    """How many migrations the database lacks when `exc` is a database error (a table or column of
    this version missing, most likely); 0 otherwise, or when that cannot be told (a failed transaction)."""
    if not isinstance(exc, DatabaseError):
        return 0
    from apps.core.health import pending_migrations  # (it reports errors of this module's)

    try:
        return pending_migrations(fresh=True)
    except DatabaseError:
        return 0


class MethodNotAllowedError(JsonableError):
    http_status_code = 405

    def __init__(self, allowed_methods: list[str]) -> None:
        super().__init__("Method Not Allowed", allowed_methods=allowed_methods)

    def headers(self) -> dict[str, str]:
        return {"Allow": ", ".join(self.data["allowed_methods"])}


def error_for_exception(exc: BaseException, where: str) -> JsonableError:
    """The error to answer for any exception a view raised; unexpected ones are logged and hidden."""
    error = as_jsonable_error(exc)
    if error is None:
        logger.error("unhandled error in %s", where, exc_info=exc)
        error = InternalServerError()
    return error


def exception_response(exc: BaseException, where: str) -> CompactJsonResponse:
    """The envelope for any exception a view raised."""
    return error_response(error_for_exception(exc, where))


def drf_exception_handler(exc: Exception, context: dict[str, Any]) -> CompactJsonResponse:
    """REST framework's EXCEPTION_HANDLER: our envelope for everything a view raises."""
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        view = context.get("view")
        return error_response(MethodNotAllowedError(list(getattr(view, "allowed_methods", []))))
    return exception_response(exc, context.get("view").__class__.__name__)
