"""The thin ASGI route for GET /api/v1/events, in front of Django.

A long-poll spends nearly all its life waiting. Served here, a waiting poll is one coroutine and
its socket: no Django request machinery, no thread. The request still gets everything an API
request gets (host check, HTTPS redirect and security headers, organization, authentication, rate
limit, request id and access log line, the error envelope), from the same functions Django's path
uses; only the middleware stack and URL resolver are skipped.
"""

import asyncio
import contextlib
import io
import logging

from django.core import signals
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse
from django.middleware.security import SecurityMiddleware

from apps.core.asgi import ExecutorPool
from apps.core.errors import exception_response
from apps.core.middleware import finish_request_id, start_request_id
from apps.events import longpoll

logger = logging.getLogger(__name__)

EVENTS_PATH = "/api/v1/events"


def is_events_poll(scope: dict) -> bool:
    return scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == EVENTS_PATH


class EventsPollApp:
    def __init__(self, pool: ExecutorPool) -> None:
        self.pool = pool
        # Used for its two pure functions (redirect to HTTPS, security headers); it never calls onward.
        self.security = SecurityMiddleware(get_response=lambda request: None)

    async def __call__(self, scope, receive, send) -> None:
        # A GET has no body worth reading; drain it so the next receive() reports a disconnect.
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if not message.get("more_body"):
                break
        async with self.pool.context():
            request = ASGIRequest(scope, io.BytesIO())
            started = start_request_id(request)
            await signals.request_started.asend(sender=self.__class__, scope=scope)
            try:
                response = await self._respond_unless_disconnected(request, receive)
            finally:
                await signals.request_finished.asend(sender=self.__class__)
            if response is None:
                return
            finish_request_id(request, response, started)
            await _send(response, send)

    async def _respond_unless_disconnected(self, request, receive) -> HttpResponse | None:
        poll = asyncio.ensure_future(self._respond(request))
        disconnect = asyncio.ensure_future(receive())
        try:
            done, _ = await asyncio.wait({poll, disconnect}, return_when=asyncio.FIRST_COMPLETED)
            if poll in done:
                return poll.result()
            poll.cancel()  # the client went away: end the poll, which frees the queue for the next one
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await poll
            return None
        finally:
            disconnect.cancel()

    async def _respond(self, request) -> HttpResponse:
        try:
            redirect = self.security.process_request(request)
            response = redirect or await longpoll.get_events(request)
        except Exception as exc:  # e.g. DisallowedHost from the host check
            response = exception_response(exc, "EventsPollApp")
        return self.security.process_response(request, response)


async def _send(response: HttpResponse, send) -> None:
    headers = [(name.encode("latin1"), value.encode("latin1")) for name, value in response.items()]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})
