"""Running Django under ASGI on a fixed set of threads.

Stock Django gives every request its own thread for synchronous work (a new ThreadSensitiveContext
per request), created and torn down each time and held as long as the request lasts, and it hops
between the event loop and that thread for each middleware. Here:

- each request's synchronous work runs on one of a few long-lived single-thread executors, so the
  thread count stays flat however many requests wait;
- a request for a synchronous view (every REST framework view) runs the request_started signal,
  the whole middleware chain, the view and the response's close in one hop onto that thread, as
  under WSGI; async views keep Django's async chain.

The measurements are in benchmarks/events/README.md.
"""

import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import ParamSpec, TypeVar

from asgiref.sync import ThreadSensitiveContext, iscoroutinefunction, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, get_resolver, set_script_prefix

from apps.core.health import live
from apps.core.middleware import REQUEST_ID_HEADER, log_access, new_request_id
from apps.core.notes import RequestNotes


class ExecutorPool:
    """`size` single-thread executors; a request uses the least busy one for its synchronous code."""

    def __init__(self, size: int) -> None:
        self._executors = [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"parley-sync-{i}") for i in range(size)
        ]
        self._in_flight = [0] * size

    @contextlib.asynccontextmanager
    async def context(self) -> AsyncIterator[None]:
        index = min(range(len(self._executors)), key=self._in_flight.__getitem__)
        self._in_flight[index] += 1
        try:
            async with ThreadSensitiveContext(executor=self._executors[index]):
                yield
        finally:
            self._in_flight[index] -= 1


@cache
def executor_pool() -> ExecutorPool:
    """The process's pool (ASGI_THREADS threads) for all synchronous work of requests."""
    return ExecutorPool(settings.ASGI_THREADS)


P = ParamSpec("P")
R = TypeVar("R")


def outside_request(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, for database work on a pool thread outside any Django request (the long-poll's
    authentication and queue registration): its connections are looked after as a request's are.

    The threads are shared with requests and keep their connections between uses. Before a
    request, Django's request_started marks each connection for a health check at its next
    query; a use outside requests must do the same, or its first query after the database came
    back would run on a connection the restart killed, and fail (a 503) although the database
    answers. After it, the connection is closed if it broke or is past CONN_MAX_AGE, as after a
    request. A connection inside a transaction (a caller's; a test's) is left alone.
    """

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        _tidy_connections()
        try:
            return function(*args, **kwargs)
        finally:
            _tidy_connections()

    return run


def _tidy_connections() -> None:
    """What django.db.close_old_connections does, for the connections not in a transaction."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


class PooledASGIHandler(ASGIHandler):
    """Django's ASGI handler, with synchronous work on an ExecutorPool instead of a thread per request."""

    def __init__(self, pool: ExecutorPool) -> None:
        super().__init__()
        self.pool = pool
        self.sync_handler = BaseHandler()
        self.sync_handler.load_middleware(is_async=False)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        async with self.pool.context():
            await self.handle(scope, receive, send)

    async def handle(self, scope, receive, send) -> None:
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            body_file.close()
            await self.send_response(error_response, send)
            return
        if _is_async_view(request.path_info):
            await signals.request_started.asend(sender=self.__class__, scope=scope)
            response = await self.run_get_response(request)
            await self.send_response(response, send)
            await sync_to_async(response.close)()
            return
        response = await sync_to_async(self._respond)(request, scope)
        await self.send_response(response, send)
        if response.streaming:
            await sync_to_async(response.close)()

    def _respond(self, request: HttpRequest, scope: dict) -> HttpResponse:
        """Everything synchronous of one request, on the request's pool thread."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        response = self.sync_handler.get_response(request)
        response._handler_class = self.__class__
        if response.streaming and not response.is_async:
            # Django's ASGI handler reads a synchronous stream (a static file) to the end in a
            # thread anyway, with a warning; read it here, where we already are.
            response.streaming_content = _async_chunks(list(response.streaming_content))
        if not response.streaming:
            # The content is ready; closing now (request_finished: the thread's database
            # connection is tidied) saves another trip to this thread after sending.
            response.close()
        return response


async def _async_chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


@functools.lru_cache(maxsize=4096)
def _is_async_view(path: str) -> bool:
    """Whether the path's view is a coroutine function (remembered: resolving costs more than the
    rest of a small request's routing)."""
    try:
        match = get_resolver().resolve(path)
    except Resolver404:
        return False
    return iscoroutinefunction(match.func)


# --- the liveness probe, on the event loop ---------------------------------------------------------

LIVE_PATH = "/health/live"


def is_liveness_probe(scope: dict) -> bool:
    return scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and scope["path"] == LIVE_PATH


async def answer_liveness_probe(scope: dict, receive: Callable, send: Callable) -> None:
    """GET /health/live answered on the event loop, not on the request threads: "the process is
    up" must hold while every thread waits (on a database that stopped answering, a locked SQLite
    file), or an orchestrator would restart a process that is fine. The same answer, request id,
    metrics and logging as Django's (apps.core.health.live, apps.core.middleware)."""
    started = time.monotonic()
    notes = RequestNotes(request_id=new_request_id())
    while (await receive()).get("more_body"):
        pass
    response = live()
    body = b"" if scope["method"] == "HEAD" else response.content
    headers = [
        (b"content-type", response["Content-Type"].encode()),
        (b"content-length", str(len(response.content)).encode()),
        (REQUEST_ID_HEADER.lower().encode(), notes.request_id.encode()),
    ]
    # Counted before it is answered, as Django's path does: whoever got the answer finds it counted.
    log_access(scope["method"], LIVE_PATH, LIVE_PATH, response.status_code, time.monotonic() - started, notes)
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})
