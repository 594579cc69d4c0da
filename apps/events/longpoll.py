"""GET /events and DELETE /events: the long-poll.

One implementation serves both entry points: the thin ASGI route in front of Django (production,
see config/asgi.py) and the Django view in urls.py (tests, WSGI).
"""

import asyncio
import logging
import random
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apps.core.api import serve_async_api
from apps.core.errors import MissingArgumentError
from apps.core.params import parse_params
from apps.core.responses import json_success
from apps.events.actions import do_delete_queue, do_register_queue_only, queue_options
from apps.events.backends import BadEventQueueIdError, EventQueueBackend, get_backend
from apps.events.registry import QueueOptions, adapt_event
from apps.events.serializers import DeleteQueueParams, GetEventsParams

logger = logging.getLogger(__name__)


async def get_events(request: HttpRequest) -> HttpResponse:
    return await serve_async_api(request, _get_events)


async def delete_queue(request: HttpRequest) -> HttpResponse:
    return await serve_async_api(request, _delete_queue)


async def _get_events(request: HttpRequest, user) -> HttpResponse:
    params = parse_params(GetEventsParams, request)
    if params.queue_id is None:
        if not params.dont_block:
            raise MissingArgumentError("queue_id")
        # Zulip's shortcut: a non-blocking GET /events without a queue registers one.
        options = queue_options(params, lifespan_secs=params.lifespan_secs)
        queue_id = await sync_to_async(do_register_queue_only)(user, options)
        return json_success(request, {"events": [], "queue_id": queue_id})
    if params.last_event_id is None:
        raise MissingArgumentError("last_event_id")
    events, options = await long_poll(
        get_backend(), params.queue_id, user.id, params.last_event_id, dont_block=params.dont_block
    )
    return json_success(
        request, {"events": [adapt_event(event, options) for event in events], "queue_id": params.queue_id}
    )


async def _delete_queue(request: HttpRequest, user) -> HttpResponse:
    params = parse_params(DeleteQueueParams, request)
    await sync_to_async(do_delete_queue)(user, params.queue_id)
    return json_success(request)


async def long_poll(
    backend: EventQueueBackend, queue_id: str, user_id: int, last_event_id: int, *, dont_block: bool
) -> tuple[list[dict[str, Any]], QueueOptions]:
    """Acknowledge through `last_event_id` and return the queue's newer events.

    With none and no `dont_block`, wait until events arrive, another poll takes the queue over
    (answered with no events), the queue is deleted (BAD_EVENT_QUEUE_ID), or the heartbeat
    interval passes (a heartbeat event, which takes an id like any event).
    """
    await backend.start_notifications()
    token = uuid.uuid4().hex
    # Parked before the queue is read, so an event published in between still wakes this poll.
    waiter = backend.waiters.add(queue_id, token)
    began = False
    try:
        start = await backend.begin_poll(queue_id, user_id, last_event_id, token, waiting=not dont_block)
        began = True
        if start.events or dont_block:
            return start.events, start.options
        loop = asyncio.get_running_loop()
        deadline = loop.time() + random.uniform(*settings.EVENTS_HEARTBEAT_SECONDS)  # noqa: S311
        while True:
            try:
                await asyncio.wait_for(waiter.wake.wait(), timeout=max(deadline - loop.time(), 0))
            except TimeoutError:
                return await backend.add_heartbeat(queue_id, user_id, last_event_id), start.options
            waiter.wake.clear()
            reasons, waiter.reasons = waiter.reasons, set()
            if "deleted" in reasons:
                raise BadEventQueueIdError(queue_id)
            if "takeover" in reasons:
                return [], start.options
            events = await backend.read_events(queue_id, user_id, last_event_id)
            if events:
                return events, start.options
    finally:
        backend.waiters.remove(waiter)
        if began and not dont_block:
            await asyncio.shield(_end_poll(backend, queue_id, token))


async def _end_poll(backend: EventQueueBackend, queue_id: str, token: str) -> None:
    try:
        await backend.end_poll(queue_id, token)
    except Exception:  # the queue's lease still ends it; never mask the poll's own outcome
        logger.warning("could not end the poll on queue %s", queue_id, exc_info=True)
