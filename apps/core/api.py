"""What every API request goes through, for REST framework views and async views alike:
the organization from the host, HTTP Basic authentication, the rate limit, and the error envelope.
"""

from collections.abc import Awaitable, Callable

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apps.core import ratelimit
from apps.core.auth import authenticate_api_request
from apps.core.errors import RateLimitedError, UnauthorizedError, exception_response
from apps.realms.selectors import get_realm_for_request


def begin_api_request(request: HttpRequest, *, authenticated: bool = True):
    """The authenticated user (None for anonymous endpoints), after the rate limit let it through.

    Failed authentications count against the client's address, so keys cannot be guessed faster
    than anonymous requests are allowed.
    """
    realm = get_realm_for_request(request)
    user = None
    if authenticated:
        try:
            user = authenticate_api_request(request, realm)
        except UnauthorizedError:
            apply_rate_limit(request, None)
            raise
        request.api_user_id = user.id
    apply_rate_limit(request, user)
    return user


def apply_rate_limit(request: HttpRequest, user) -> None:
    if user is not None:
        key, limit = f"api_by_user:{user.id}", settings.RATE_LIMIT_API_BY_USER
    else:
        key, limit = f"api_by_ip:{request.META.get('REMOTE_ADDR', '')}", settings.RATE_LIMIT_API_BY_IP
    state = ratelimit.check_api_request(key, limit)
    request.rate_limit_state = state
    if state is not None and state.blocked:
        raise RateLimitedError(state.retry_after)


def finish_api_response(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """Add the rate-limit headers Zulip sends on every API response."""
    state = getattr(request, "rate_limit_state", None)
    if state is not None:
        for name, value in state.headers().items():
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
    return finish_api_response(request, response)
