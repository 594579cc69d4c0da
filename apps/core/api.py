"""What every API request goes through: the organization from the host, HTTP Basic authentication
(the browser's session on /json/: apps.core.sessions), the rate limit, and the error envelope.

REST framework views get these from the classes in apps.core.authentication, .permissions and
.throttling (see apps.core.views.ApiView); async views, which REST framework cannot serve, from
serve_async_api. Both call the functions here, so the rules are written once.
"""

from collections.abc import Awaitable, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apps.core import ratelimit
from apps.core.auth import authenticated_user, realm_for_request
from apps.core.errors import RateLimitedError, UnauthorizedError, exception_response
from apps.core.notes import RequestNotes, request_notes
from apps.core.sessions import is_session_api, session_api_user


def begin_api_request(request: HttpRequest, *, authenticated: bool = True):
    """The authenticated user (None for anonymous endpoints), after the rate limit let it through."""
    realm_for_request(request)  # an unknown organization is refused first, anonymous or not
    user = authenticate_api_request(request) if authenticated else None
    check_rate_limit(request, user)
    return user


def authenticate_api_request(request: HttpRequest):
    """The user the request's credentials name (its API key, or its session on /json/), not yet
    counted in their rate limit. Failed authentications count against the client's address, so
    keys cannot be guessed faster than anonymous requests are allowed."""
    realm_for_request(request)
    try:
        user = session_api_user(request) if is_session_api(request) else authenticated_user(request)
    except UnauthorizedError:
        check_rate_limit(request, None)
        raise
    request_notes(request).user_id = user.id
    return user


def count_api_request(request: HttpRequest, user) -> ratelimit.RateLimitState | None:
    """Count the request against its user's limit (RATE_LIMIT_API_BY_USER) or, anonymous, its
    address's (RATE_LIMIT_API_BY_IP); the state is noted for the X-RateLimit-* headers. None when
    limits are off or Redis cannot count (the general limit fails open)."""
    if user is not None:
        key, limit = f"api_by_user:{user.id}", settings.RATE_LIMIT_API_BY_USER
    else:
        key, limit = f"api_by_ip:{request.META.get('REMOTE_ADDR', '')}", settings.RATE_LIMIT_API_BY_IP
    state = request_notes(request).rate_limit = ratelimit.check_api_request(key, limit)
    return state


def check_rate_limit(request: HttpRequest, user) -> None:
    state = count_api_request(request, user)
    if state is not None and state.blocked:
        raise RateLimitedError(state.retry_after)


def add_rate_limit_headers(notes: RequestNotes, response: HttpResponse) -> HttpResponse:
    """The rate-limit headers Zulip sends on every API response: the general API limit's, unless
    another limit refused the request (its error set that limit's: remaining 0)."""
    if notes.rate_limit is not None and not response.has_header(ratelimit.HEADER_NAMES[0]):
        for name, value in notes.rate_limit.headers().items():
            response[name] = value
    return response


AsyncHandler = Callable[[HttpRequest, object], Awaitable[HttpResponse]]


async def serve_async_api(request: HttpRequest, handler: AsyncHandler, *, authenticated: bool = True) -> HttpResponse:
    """Run an async API handler `handler(request, user)` with the same conventions as ApiView."""
    try:
        user = await sync_to_async(begin_api_request)(request, authenticated=authenticated)
        response = await handler(request, user)
    except Exception as exc:
        response = exception_response(exc, getattr(handler, "__qualname__", "handler"))
    return add_rate_limit_headers(request_notes(request), response)
