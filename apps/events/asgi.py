"""The thin ASGI route for GET /api/v1/events, in front of Django.

A long-poll spends nearly all its life waiting, and a busy server answers thousands at once. Served
here, a waiting poll is one coroutine, its socket and a few small objects: no Django request,
middleware stack or thread; its response is written straight to the socket. It still gets
everything an API request gets (see apps/events/longpoll.py), plus what the middleware would add:
the HTTPS redirect and the security headers (from Django's own middleware: apps/core/security.py),
the request id, the access log line and the request metrics (apps.core.metrics: the same route
template as the Django view's). tests/events/test_route_parity.py holds the two routes to the same
answers.
"""

import asyncio
import json
import time

from django.conf import settings
from django.core.exceptions import DisallowedHost
from pydantic_core import to_json

from apps.core.logging import current_request_id
from apps.core.middleware import REQUEST_ID_HEADER, log_access, new_request_id
from apps.core.security import https_redirect, is_secure, security_headers
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
        # A header sent twice is its values joined by commas, as Django reads it (route parity).
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            name, value = raw_name.decode("latin1"), raw_value.decode("latin1")
            headers[name] = f"{headers[name]},{value}" if name in headers else value
        secure = is_secure(scope.get("scheme", "http"), headers)
        poll = longpoll.PollRequest(
            host=headers.get("host", ""),
            authorization=headers.get("authorization", ""),
            remote_addr=(scope.get("client") or ("", 0))[0],
            query=scope["query_string"],
            secure=secure,
        )
        poll.notes.request_id, poll.notes.client = request_id, poll.remote_addr or None
        location, refused_by_security = None, False
        if settings.SECURE_SSL_REDIRECT:
            try:
                location = https_redirect(secure, poll.host, EVENTS_PATH, scope["query_string"].decode("latin1"))
            except DisallowedHost:
                refused_by_security = True  # get_events refuses the host, as Django does
        if location is not None:
            status, body, extra = 301, b"", [(b"location", location.encode("latin1"))]
        else:
            response = await longpoll.get_events(poll)
            status, body, extra = response.status, encode_json(response.body), response.headers
        # Logged and counted like every other request, once this pass of the event loop is over: a
        # fan-out answers every poll it woke first (the call keeps this request's context: its id).
        seconds = time.monotonic() - started
        asyncio.get_running_loop().call_soon(log_access, "GET", EVENTS_PATH, EVENTS_PATH, status, seconds, poll.notes)
        current_request_id.set("-")
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (REQUEST_ID_HEADER.lower().encode(), request_id.encode()),
                    *security_headers(secure, refused_by_security=refused_by_security),
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
