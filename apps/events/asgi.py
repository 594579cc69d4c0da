"""The thin ASGI route for GET /api/v1/events, in front of Django.

A long-poll spends nearly all its life waiting, and a busy server answers thousands at once. Served
here, a waiting poll is one coroutine, its socket and a few small objects: no Django request,
middleware stack or thread; its response is written straight to the socket. It still gets
everything an API request gets (see apps/events/longpoll.py), plus what the middleware would add:
the HTTPS redirect, the security headers, the request id and the access log line.
"""

import json
import logging
import time
from functools import cache

from django.conf import settings
from pydantic_core import to_json

from apps.core.logging import current_request_id
from apps.core.middleware import REQUEST_ID_HEADER, log_access, new_request_id
from apps.events import longpoll

EVENTS_PATH = "/api/v1/events"


def is_events_poll(scope: dict) -> bool:
    return scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == EVENTS_PATH


class EventsPollApp:
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
        secure = _is_secure(scope, headers)
        poll = longpoll.PollRequest(
            host=headers.get("host", ""),
            authorization=headers.get("authorization", ""),
            remote_addr=(scope.get("client") or ("", 0))[0],
            query=scope["query_string"],
            secure=secure,
        )
        # Never a redirect to a host that is not ours (an open redirect): that is answered 400.
        if settings.SECURE_SSL_REDIRECT and not secure and longpoll.host_is_allowed(poll.host):
            query = scope["query_string"].decode("latin1")
            location = f"https://{poll.host}{EVENTS_PATH}" + (f"?{query}" if query else "")
            status, body, extra = 301, b"", [(b"location", location.encode("latin1"))]
        else:
            response = await longpoll.get_events(poll)
            status, body, extra = response.status, encode_json(response.body), response.headers
        # Answered polls are most of a server's traffic: logged at DEBUG; anything else at INFO.
        log_access(
            "GET",
            EVENTS_PATH,
            status,
            started,
            poll.api_user_id,
            level=logging.DEBUG if status == 200 else logging.INFO,
        )
        current_request_id.set("-")
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (REQUEST_ID_HEADER.lower().encode(), request_id.encode()),
                    *_security_headers(secure),
                    *extra,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def encode_json(body: dict) -> bytes:
    """Compact UTF-8 JSON, as Zulip's own server writes it (orjson there): a fifth of json.dumps's
    time, on the path every woken poll takes. A lone surrogate, which UTF-8 cannot carry, is
    escaped as json.dumps does."""
    try:
        return to_json(body)
    except ValueError:
        return json.dumps(body).encode()


@cache
def _security_headers(secure: bool) -> tuple[tuple[bytes, bytes], ...]:
    """The headers Django's SecurityMiddleware would add, from the same settings."""
    headers = []
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        headers.append((b"referrer-policy", settings.SECURE_REFERRER_POLICY.encode()))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append((b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode()))
    if secure and settings.SECURE_HSTS_SECONDS:
        value = f"max-age={settings.SECURE_HSTS_SECONDS}"
        if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS:
            value += "; includeSubDomains"
        if settings.SECURE_HSTS_PRELOAD:
            value += "; preload"
        headers.append((b"strict-transport-security", value.encode()))
    return tuple(headers)


def _is_secure(scope: dict, headers: dict[str, str]) -> bool:
    if scope.get("scheme") == "https":
        return True
    proxy_header = settings.SECURE_PROXY_SSL_HEADER
    if proxy_header:
        name, expected = proxy_header
        header = name.removeprefix("HTTP_").replace("_", "-").lower()
        return headers.get(header, "").split(",")[0].strip() == expected
    return False
