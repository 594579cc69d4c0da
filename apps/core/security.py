"""Django's security middleware, for a route that serves without the middleware stack.

The long-poll route (apps/events/asgi.py) answers GET /events without a Django request. What
SecurityMiddleware and XFrameOptionsMiddleware would do to its responses (the security headers, the
HTTPS redirect) is asked of those middlewares themselves, so the two routes cannot drift apart and
every setting they read (SECURE_*, X_FRAME_OPTIONS, SECURE_PROXY_SSL_HEADER) applies to both.
"""

from functools import cache

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.security import SecurityMiddleware

# The middlewares whose process_response only adds headers, in the order settings.MIDDLEWARE
# applies them to a response (innermost first). SecurityMiddleware refuses a host that is not ours
# when it redirects to HTTPS: that answer gets only the headers of the middlewares outside it.
HEADER_MIDDLEWARES = (SecurityMiddleware, XFrameOptionsMiddleware)


class _SchemeRequest(HttpRequest):
    """A request whose scheme the caller already knows (from the ASGI scope and the proxy header)."""

    def __init__(self, secure: bool, host: str = "", path: str = "/", query: str = "") -> None:
        super().__init__()
        self._scheme = "https" if secure else "http"
        self.path = self.path_info = path
        self.META = {"HTTP_HOST": host, "QUERY_STRING": query, "SERVER_NAME": "", "SERVER_PORT": ""}

    @property
    def scheme(self) -> str:
        return self._scheme


def is_secure(connection_scheme: str, headers: dict[str, str]) -> bool:
    """HttpRequest.is_secure() for a connection and its (lower-case) headers: the proxy's header
    (SECURE_PROXY_SSL_HEADER) decides when it is configured and sent, else the connection."""
    if settings.SECURE_PROXY_SSL_HEADER:
        name, expected = settings.SECURE_PROXY_SSL_HEADER
        value = headers.get(name.removeprefix("HTTP_").replace("_", "-").lower())
        if value is not None:
            return value.split(",", 1)[0].strip() == expected
    return connection_scheme == "https"


def _not_called(request: HttpRequest) -> HttpResponse:
    raise AssertionError("only the middleware's own hooks are called")


@cache
def security_headers(secure: bool, *, refused_by_security: bool = False) -> tuple[tuple[bytes, bytes], ...]:
    """The headers the middlewares add to a response over HTTPS (`secure`) or plain HTTP, as ASGI
    sends them (lower-case names); `refused_by_security`: to SecurityMiddleware's refusal of a host
    (see https_redirect). They depend on settings only, so they are worked out once."""
    request = _SchemeRequest(secure)
    response = HttpResponse()
    before = set(response.headers)
    for middleware in HEADER_MIDDLEWARES[1:] if refused_by_security else HEADER_MIDDLEWARES:
        middleware(_not_called).process_response(request, response)  # adds to `response`
    return tuple(
        (name.lower().encode("latin1"), value.encode("latin1"))
        for name, value in response.items()
        if name not in before
    )


@receiver(setting_changed)
def _forget_security_headers(**kwargs) -> None:
    security_headers.cache_clear()  # tests change the settings they are made of


def https_redirect(secure: bool, host: str, path: str, query: str) -> str | None:
    """Where SecurityMiddleware sends this request (SECURE_SSL_REDIRECT), or None to serve it.

    Raises DisallowedHost for a host that is not ours, as the middleware does (never an open
    redirect): Django answers 400 before SecurityMiddleware adds its headers.
    """
    response = SecurityMiddleware(_not_called).process_request(_SchemeRequest(secure, host, path, query))
    return None if response is None else response["Location"]
