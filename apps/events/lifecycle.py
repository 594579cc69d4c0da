"""Per server process: listening for event notifications, the periodic sweep of expired queues,
without Redis following the outbox for other processes' events, and ending the waiting polls when
the process stops; at start, an error logged when the database lacks migrations."""

import asyncio
import contextlib
import logging

from asgiref.sync import sync_to_async
from django.conf import settings

from apps.core.asgi import outside_request
from apps.core.health import warn_of_pending_migrations, warn_of_uncollected_static_files
from apps.events.actions import do_sweep_event_queues
from apps.events.backends import get_backend
from apps.events.publish import newest_outbox_id, publish_events_since

logger = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self) -> None:
        self._sweeper: asyncio.Task | None = None
        self._listening: asyncio.Task | None = None
        self._following: asyncio.Task | None = None
        self._checking: asyncio.Task | None = None

    async def serve_lifespan(self, receive, send) -> None:
        """The ASGI lifespan protocol: start at start-up, stop at shutdown."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def start(self) -> None:
        if settings.REDIS_URL:
            logger.info("event queues in Redis: any number of server processes may serve them")
        else:
            logger.info("event queues in this process's memory (no REDIS_URL): run a single server process")
        warn_of_uncollected_static_files()
        loop = asyncio.get_running_loop()
        self._checking = loop.create_task(
            sync_to_async(outside_request(warn_of_pending_migrations), thread_sensitive=False)(),
            name="parley-migrations-check",
        )
        # In the background: a Redis that is down must not hold up start-up; polls subscribe again.
        self._listening = loop.create_task(self._start_notifications(), name="parley-event-subscribe")
        self._sweeper = loop.create_task(self._sweep_periodically(), name="parley-event-sweep")
        if not settings.REDIS_URL:
            self._following = loop.create_task(self._follow_outbox(), name="parley-event-outbox")

    async def _start_notifications(self) -> None:
        """Until subscribed: meanwhile the process trusts no cached credentials (the backend's
        listener), so it must not wait for a long-poll to try again once Redis is back."""
        failures = 0
        while True:
            try:
                await get_backend().start_notifications()
                return
            except Exception as exc:
                if failures == 0:
                    logger.warning("event notifications not started yet, trying again every second: %s", exc)
                failures += 1
            await asyncio.sleep(1)

    async def stop(self) -> None:
        for task in (self._sweeper, self._listening, self._following, self._checking):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await get_backend().stop_notifications()

    async def _sweep_periodically(self) -> None:
        # The first sweep at start: what happened while no server ran (a database restored from a
        # backup, events committed but not published) is seen to at once.
        while True:
            try:
                await sync_to_async(outside_request(do_sweep_event_queues), thread_sensitive=False)()
            except Exception as exc:
                logger.warning("event queue sweep failed: %s", exc)
            await asyncio.sleep(settings.EVENT_QUEUE_SWEEP_SECONDS)

    async def _follow_outbox(self) -> None:
        """Without Redis: the events other processes commit (the task worker's, a command's) reach
        this process's queues within EVENT_OUTBOX_POLL_SECONDS (one query on the outbox's newest
        row when nothing happened), not at the next sweep."""
        run = sync_to_async(outside_request(publish_events_since), thread_sensitive=False)
        after = None  # events committed before this process started are the sweep's
        while True:
            try:
                if after is None:
                    after = await sync_to_async(outside_request(newest_outbox_id), thread_sensitive=False)()
                else:
                    after = await run(get_backend(), after)
            except Exception as exc:
                logger.warning("publishing other processes' events failed: %s", exc)
            await asyncio.sleep(settings.EVENT_OUTBOX_POLL_SECONDS)


background_tasks = BackgroundTasks()


def end_waiting_polls() -> None:
    """Answer every waiting long-poll now (with no events) and any that starts from now on.

    Called when the server stops, before it waits for open requests: otherwise each waiting poll
    would hold the stop up until its heartbeat, up to a minute. Clients poll again at once, on
    another process or after the restart; their queues (in Redis) lose nothing.
    """
    get_backend().waiters.close()
