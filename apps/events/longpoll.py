"""GET /events (the long-poll) and DELETE /events.

GET /events is the hottest path of the server, so it is served from a small `PollRequest` rather
than a Django request: the thin ASGI route (apps/events/asgi.py) builds one from the ASGI scope,
the Django view (tests, WSGI, the benchmark's comparison modes) from its HttpRequest. Either way
the poll gets what every API request gets: host check, organization, authentication (from the
credential cache, else from the database), rate limit, Zulip's envelope and errors.
"""

import asyncio
import contextlib
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any
from urllib.parse import parse_qsl

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import DisallowedHost, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.http.request import split_domain_port, validate_host

from apps.core.api import authenticate_api_request, begin_api_request, serve_async_api
from apps.core.asgi import executor_pool, outside_request
from apps.core.auth import accounts, parse_basic_header, realm_for_request
from apps.core.errors import (
    REDIS_UNAVAILABLE,
    SESSION_CHALLENGE,
    JsonableError,
    RateLimitedError,
    ServiceUnavailableError,
    UnauthorizedError,
    error_for_exception,
)
from apps.core.metrics import POLLS_WAITING, WAKE_SECONDS
from apps.core.notes import RequestNotes, request_notes
from apps.core.params import parse_param_source, parse_params
from apps.core.responses import json_success, success_body
from apps.core.sessions import is_session_api, session_user
from apps.events.actions import do_delete_queue, do_register_queue_only, queue_options
from apps.events.backends import BadEventQueueIdError, EventQueueBackend, PollLimit, check_queue_id, get_backend
from apps.events.credentials import Identity, credential_cache
from apps.events.registry import QueueOptions, adapt_events, shows_event
from apps.events.serializers import DeleteQueueParams, GetEventsParams


@dataclass
class PollRequest:
    host: str  # the Host header as sent
    authorization: str
    remote_addr: str
    # The parameters, or the raw query string: parsed while serving, so that a malformed one is
    # answered like any bad request.
    query: Mapping[str, str] | bytes
    secure: bool
    # Filled in while serving (who polled, the rate limit's state): for the access log and the
    # response headers. A Django-served poll shares its request's notes.
    notes: RequestNotes = field(default_factory=RequestNotes)
    # The browser's poll (GET /json/events, served by Django only): its request, whose session
    # authenticates it instead of the Authorization header (apps.core.sessions); while the poll
    # waits, only the session's key is kept.
    session_request: HttpRequest | None = None
    session_key: str | None = None

    @classmethod
    def from_django(cls, request: HttpRequest) -> "PollRequest":
        return cls(
            host=request.META.get("HTTP_HOST", request.META.get("SERVER_NAME", "")),
            authorization=request.META.get("HTTP_AUTHORIZATION", ""),
            remote_addr=request.META.get("REMOTE_ADDR", ""),
            query=request.GET,
            secure=request.is_secure(),
            notes=request_notes(request),
            session_request=request if is_session_api(request) else None,
        )

    def as_django_request(self) -> HttpRequest:
        """A minimal HttpRequest, for the rare paths that need Django's own checks (database auth)."""
        request = HttpRequest()
        request.method = "GET"
        request.path = request.path_info = "/api/v1/events"
        request.META = {
            "HTTP_HOST": self.host,
            "HTTP_AUTHORIZATION": self.authorization,
            "REMOTE_ADDR": self.remote_addr,
            "SERVER_NAME": "",
            "SERVER_PORT": "",
            "wsgi.url_scheme": "https" if self.secure else "http",
        }
        request.GET = QueryDict()  # authentication reads none of them
        return request

    def parameters(self) -> Mapping[str, str]:
        if isinstance(self.query, bytes):
            self.query = parse_query(self.query)
        return self.query


def parse_query(query_string: bytes) -> dict[str, str]:
    """A query string's parameters, the last value of a repeated one (as QueryDict's [] gives):
    what the poll reads, without building a QueryDict for every poll."""
    try:
        text = query_string.decode()
    except UnicodeDecodeError:
        text = query_string.decode("latin1")  # as Django does
    try:
        return dict(parse_qsl(text, keep_blank_values=True, max_num_fields=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS))
    except ValueError as exc:  # more fields than allowed
        raise TooManyFieldsSent("Too many query parameters") from exc


@dataclass
class PollResponse:
    """What GET /events answers: cheap to build (a busy server sends thousands at once)."""

    status: int
    body: dict[str, Any]
    headers: list[tuple[bytes, bytes]]  # as ASGI sends them: lower-case names, no Content-Type

    def to_django(self) -> HttpResponse:
        response = JsonResponse(self.body, status=self.status)
        for name, value in self.headers:
            response[name.decode("latin1")] = value.decode("latin1")
        return response


async def get_events(poll: PollRequest) -> PollResponse:
    """Answer one GET /events: the envelope, with the rate-limit headers."""
    try:
        status, body, headers = 200, await _get_events(poll), []
    except Exception as exc:
        error = error_for_exception(exc, "GET /events")
        status, body = error.http_status_code, error.to_dict()
        headers = [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in error.headers().items()]
    state = poll.notes.rate_limit
    if state is not None:
        headers += state.asgi_headers()
    return PollResponse(status, body, headers)


def host_is_allowed(host: str) -> bool:
    domain, _ = split_domain_port(host)
    return validate_host(domain, settings.ALLOWED_HOSTS)


async def _get_events(poll: PollRequest) -> dict[str, Any]:
    if not host_is_allowed(poll.host):
        raise DisallowedHost(f"Invalid HTTP_HOST header: {poll.host!r}")
    identity = await _authenticate(poll)
    backend = get_backend()
    # Polls have their own budget per user, RATE_LIMIT_EVENTS_BY_USER (not counted already: see
    # _authenticate_from_database), counted by the backend with the poll's own work, in one place for
    # every server process.
    limit = None
    if settings.RATE_LIMITING_ENABLED and poll.notes.rate_limit is None:
        limit = PollLimit(f"events_by_user:{identity.user_id}", settings.RATE_LIMIT_EVENTS_BY_USER)
    try:
        body = await _poll(poll, identity, backend, limit)
        if body.get("events"):
            await _authenticate_again(poll, identity)
        return body
    except Exception as exc:
        if limit is not None and limit.state is None and not isinstance(exc, (RateLimitedError, *REDIS_UNAVAILABLE)):
            # Refused before it reached its queue: counted all the same, and past the limit answered
            # as such. The refusal stands if Redis cannot count it.
            with contextlib.suppress(*REDIS_UNAVAILABLE):
                await backend.count_poll(limit)
        raise
    finally:
        if limit is not None:
            poll.notes.rate_limit = limit.state


async def _poll(poll: PollRequest, identity: Identity, backend: EventQueueBackend, limit: PollLimit | None) -> dict:
    query = poll.parameters()
    params = parse_param_source(GetEventsParams, query)
    ignored = sorted(set(query) - set(GetEventsParams.parameter_names()))
    # Nothing of the request stays alive while the poll waits (neither in `poll` nor here).
    poll.query = {}
    del query
    # Zulip's fetch_events: these two are plain errors (BAD_REQUEST, no var_name), not its missing
    # parameters' (the client QA pass).
    if params.queue_id is None:
        if not params.dont_block:
            raise JsonableError("Missing 'queue_id' argument")
        # Zulip's shortcut: a non-blocking GET /events without a queue registers one.
        options = queue_options(params, lifespan_secs=params.lifespan_secs)
        if limit is not None:
            await backend.count_poll(limit)
        async with executor_pool().context():
            queue_id = await sync_to_async(_register_queue)(identity.user_id, options)
        return success_body({"events": [], "queue_id": queue_id}, ignored)
    if params.last_event_id is None:
        raise JsonableError("Missing 'last_event_id' argument")
    queue_id, last_event_id, dont_block = params.queue_id, params.last_event_id, params.dont_block
    del params
    events, options = await long_poll(
        backend, queue_id, identity.user_id, last_event_id, dont_block=dont_block, limit=limit
    )
    return success_body({"events": adapt_events(events, options, queue_id), "queue_id": queue_id}, ignored)


async def _authenticate(poll: PollRequest) -> Identity:
    """Who polls: from the credential cache, else from the database (then cached); a browser's
    poll from its session, as every /json/ request, and counted in the polls' budget as an API
    key's (the web app QA pass: counted in the general one, a busy channel's events left the
    page's own requests refused)."""
    if poll.session_request is not None:
        request, poll.session_request = poll.session_request, None
        user = await sync_to_async(authenticate_api_request)(request)
        poll.session_key = request.session.session_key
        poll.notes.user_id = user.id
        return Identity(user_id=user.id, realm_id=user.realm_id)
    identity = credential_cache.get(poll.host.lower(), poll.authorization)
    if identity is None or identity.send_only:
        generation = credential_cache.generation
        # Bounded, so that thousands of clients reconnecting at once (after a restart) queue here
        # cheaply instead of all holding database work in flight.
        async with _database_slots(), executor_pool().context():
            identity = await sync_to_async(_authenticate_from_database)(poll)
        credential_cache.put(poll.host.lower(), poll.authorization, identity, generation)
    poll.notes.user_id, poll.notes.realm_id = identity.user_id, identity.realm_id
    return identity


async def _authenticate_again(poll: PollRequest, identity: Identity) -> None:
    """Before a poll that may have waited gives its events: its key may have been rotated or
    revoked meanwhile, or its browser logged out (or its session ended by a new password), and
    then the answer is that refusal; the events stay queued for a poll with good credentials. For
    a key the cache answers (every process forgets credentials that change), but after a change
    concerning the user; a session is read again (a browser polls far less often than the API's
    clients)."""
    if poll.session_key is not None:
        async with executor_pool().context():
            await sync_to_async(_check_session_again)(poll, identity)
    elif credential_cache.get(poll.host.lower(), poll.authorization) != identity:
        await _authenticate(poll)


@outside_request
def _check_session_again(poll: PollRequest, identity: Identity) -> None:
    request = poll.as_django_request()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(poll.session_key)
    user = session_user(request, realm_for_request(request))
    if user is None or user.id != identity.user_id:
        raise UnauthorizedError(challenge=SESSION_CHALLENGE)


_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


def _database_slots() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    if loop not in _slots:
        _slots[loop] = asyncio.Semaphore(settings.ASGI_THREADS)
    return _slots[loop]


@outside_request
def _authenticate_from_database(poll: PollRequest) -> Identity:
    """One light query when the credentials are good; Django's full checks (and their precise
    errors, and the per-address limit on failures) otherwise."""
    request = poll.as_django_request()
    realm = realm_for_request(request)
    try:
        email, api_key = parse_basic_header(poll.authorization)
    except JsonableError:
        email = api_key = ""
    user_id = accounts().active_user_id_by_api_key(realm, email, api_key) if api_key else None
    if user_id is not None:
        return Identity(user_id=user_id, realm_id=realm.id)
    try:
        user = begin_api_request(request)
    finally:
        poll.notes.rate_limit = request_notes(request).rate_limit
    return Identity(user_id=user.id, realm_id=user.realm_id)


@outside_request
def _register_queue(user_id: int, options: QueueOptions) -> str:
    user = get_user_model().objects.select_related("realm").get(id=user_id)
    return do_register_queue_only(user, options)


async def long_poll(
    backend: EventQueueBackend,
    queue_id: str,
    user_id: int,
    last_event_id: int,
    *,
    dont_block: bool,
    limit: PollLimit | None = None,
) -> tuple[list[dict[str, Any]], QueueOptions]:
    """Acknowledge through `last_event_id` and return the queue's newer events (the poll counted
    against `limit` first, if any).

    With none and no `dont_block`, wait until events arrive (they come with the notification, so
    the queue is not read again), another poll takes the queue over, this process stops or may have
    missed notifications (all answered with no events: the client polls again, elsewhere if need
    be), the queue is deleted (BAD_EVENT_QUEUE_ID; deleted by its client: no events, as Zulip),
    Redis is down (SERVICE_UNAVAILABLE), or the heartbeat interval passes or events the queue's
    narrow hides pile up (a heartbeat event, which takes an id like any event).
    """
    check_queue_id(queue_id)
    await backend.start_notifications()
    # Parked before the queue is read, so an event published in between still wakes this poll.
    waiter = backend.waiters.add(queue_id)
    waiting = False
    try:
        start = await backend.begin_poll(queue_id, user_id, last_event_id, waiting=not dont_block, limit=limit)
        waiter.started(start.poll_number)
        shown = [event for event in start.events if shows_event(event, start.options)]
        hidden = len(start.events) - len(shown)
        if shown or (dont_block and hidden < _hidden_events_limit()):
            return shown, start.options
        deadline = asyncio.get_running_loop().time() + random.uniform(*settings.EVENTS_HEARTBEAT_SECONDS)  # noqa: S311
        POLLS_WAITING.inc()
        waiting = True
        while hidden < _hidden_events_limit():
            await waiter.wait(deadline)
            published, waiter.published = waiter.published, 0.0
            reasons, events = waiter.take()
            if "deleted" in reasons:
                raise BadEventQueueIdError(queue_id)
            if "closed" in reasons:  # by its client (quitting): answered as Zulip's, with no events
                return [], start.options
            # Answered now, not at the heartbeat (which could not be stored either): the client
            # polls again later, and its events, deleted only when acknowledged, are still queued.
            if "unavailable" in reasons:
                raise ServiceUnavailableError("Redis server")
            # "resync": this process may have missed notifications (events, a takeover, the
            # queue's deletion): the client's next poll reads the queue afresh.
            if reasons & {"takeover", "shutdown", "resync"}:
                return [], start.options
            # A notification can arrive late (after this poll's first read): what the client has
            # acknowledged is not sent again.
            events = [e for e in events if e["id"] > last_event_id]
            shown = [e for e in events if shows_event(e, start.options)]
            if shown:
                if published:
                    WAKE_SECONDS.observe(max(time.time() - published, 0.0))
                return shown, start.options
            hidden += len(events)
            if "timeout" in reasons:
                break
        # A heartbeat, whose id the client acknowledges, and with it the events its queue hid.
        events = await backend.add_heartbeat(queue_id, user_id, last_event_id)
        return [e for e in events if shows_event(e, start.options)], start.options
    finally:
        backend.waiters.remove(waiter)
        if waiting:
            POLLS_WAITING.dec()


def _hidden_events_limit() -> int:
    """Events a queue hides (its narrow) stay until the client acknowledges a later one, and count
    toward EVENT_QUEUE_MAX_EVENTS: past this many, the poll is answered with a heartbeat, so that a
    client whose narrow matches nothing in a busy organization is not evicted."""
    return max(1, min(100, settings.EVENT_QUEUE_MAX_EVENTS // 2))


async def delete_queue(request: HttpRequest) -> HttpResponse:
    return await serve_async_api(request, _delete_queue)


async def _delete_queue(request: HttpRequest, user) -> HttpResponse:
    params = parse_params(DeleteQueueParams, request)
    await sync_to_async(do_delete_queue)(user, params.queue_id)
    return json_success(request)
