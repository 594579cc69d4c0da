"""Running Django under ASGI on a fixed set of threads.

Stock Django gives every request its own thread for synchronous work (a new ThreadSensitiveContext
per request), created and torn down each time, and held for as long as the request lasts. Here each
request runs its synchronous work on one of a few long-lived single-thread executors instead: the
thread count stays flat however many requests wait, and an ordinary request costs less CPU (see
benchmarks/events/README.md).
"""

import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler


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


class PooledASGIHandler(ASGIHandler):
    """Django's ASGI handler, with synchronous work on an ExecutorPool instead of a thread per request."""

    def __init__(self, pool: ExecutorPool) -> None:
        super().__init__()
        self.pool = pool

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        async with self.pool.context():
            await self.handle(scope, receive, send)
