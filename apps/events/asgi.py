"""The thin ASGI route for GET /api/v1/events, in front of Django.

A long-poll spends nearly all its life waiting. Served here, a waiting poll is one coroutine, its
socket and a few small objects: no Django request, middleware stack or thread. It still gets
everything an API request gets (see apps/events/longpoll.py), plus what the middleware would add:
the HTTPS redirect and security headers, the request id and the access log line.
"""

import asyncio
import contextlib
import time

from django.conf import settings
from django.http import HttpResponse, HttpResponsePermanentRedirect, QueryDict
from django.middleware.security import SecurityMiddleware

from apps.core.logging import current_request_id
from apps.core.middleware import log_access, new_request_id
from apps.events import longpoll

EVENTS_PATH = "/api/v1/events"


def is_events_poll(scope: dict) -> bool:
    return scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == EVENTS_PATH


class EventsPollApp:
    def __init__(self) -> None:
        # Only its response headers are used (security headers, HSTS); it never calls onward.
        self.security = SecurityMiddleware(get_response=lambda request: None)

    async def __call__(self, scope, receive, send) -> None:
        started = time.monotonic()
        request_id = new_request_id()
        # A GET has no body worth reading: drain it.
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if not message.get("more_body"):
                break
        headers = {name.decode("latin1"): value.decode("latin1") for name, value in scope["headers"]}
        poll = longpoll.PollRequest(
            host=headers.get("host", ""),
            authorization=headers.get("authorization", ""),
            remote_addr=(scope.get("client") or ("", 0))[0],
            query=QueryDict(scope["query_string"], encoding="utf-8"),
            secure=_is_secure(scope, headers),
        )
        if settings.SECURE_SSL_REDIRECT and not poll.secure:
            query = scope["query_string"].decode("latin1")
            response = HttpResponsePermanentRedirect(
                f"https://{poll.host}{EVENTS_PATH}" + (f"?{query}" if query else "")
            )
        else:
            response = await longpoll.get_events(poll)
        self.security.process_response(_SecureFlag(poll.secure), response)
        response["X-Request-Id"] = request_id
        log_access("GET", EVENTS_PATH, response.status_code, started, poll.api_user_id)
        with contextlib.suppress(OSError, asyncio.CancelledError):
            await _send(response, send)
        current_request_id.set("-")


class _SecureFlag:
    """What SecurityMiddleware.process_response asks of a request."""

    def __init__(self, secure: bool) -> None:
        self._secure = secure

    def is_secure(self) -> bool:
        return self._secure


def _is_secure(scope: dict, headers: dict[str, str]) -> bool:
    if scope.get("scheme") == "https":
        return True
    proxy_header = settings.SECURE_PROXY_SSL_HEADER
    if proxy_header:
        name, expected = proxy_header
        header = name.removeprefix("HTTP_").replace("_", "-").lower()
        return headers.get(header, "").split(",")[0].strip() == expected
    return False


async def _send(response: HttpResponse, send) -> None:
    body = response.content
    response["Content-Length"] = str(len(body))
    headers = [(name.encode("latin1"), value.encode("latin1")) for name, value in response.items()]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
