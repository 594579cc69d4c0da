"""Registering and deleting event queues."""

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.core.redis_client import redis_guarded
from apps.events.backends import check_queue_id, get_backend
from apps.events.backends.base import count_removed
from apps.events.models import OutboxEvent, RealmEventSequence
from apps.events.publish import publish_missed_events, restart_forgotten_sequences
from apps.events.registry import QueueOptions, StateContext, fetch_initial_state, queue_registered
from apps.events.serializers import QueueParams

logger = logging.getLogger(__name__)

# How long published events stay in the outbox: long enough for a failed publish to be retried by
# a later sweep, or by the next publish of the organization.
OUTBOX_RETENTION = timedelta(minutes=10)
# An event the sweep publishes itself is a failed publish only when made longer ago than this: one
# made just before has its publish, run after its commit, still on its way.
PUBLISH_GRACE = timedelta(seconds=10)


# Legacy event types a queue does not receive when it also asked for their replacement (Zulip's rule).
SUPERSEDED_EVENT_TYPES = {"muted_topics": "user_topic"}


def queue_options(params: QueueParams, *, lifespan_secs: int, user=None) -> QueueOptions:
    """The options of a new queue. With `user`, a bot's defaults (Zulip's) apply where the request
    says nothing: its default_all_public_streams, and a narrow to its default_events_register_stream."""
    all_public_streams, narrow = params.all_public_streams, tuple(params.narrow)
    if user is not None and user.is_bot:
        if "all_public_streams" not in params.model_fields_set:
            all_public_streams = user.default_all_public_streams
        if not narrow and user.default_events_register_stream_id is not None:
            narrow = (("channel", user.default_events_register_stream.name, False),)
    event_types = None
    if params.event_types is not None:
        event_types = frozenset(params.event_types)
        event_types -= {old for old, new in SUPERSEDED_EVENT_TYPES.items() if new in event_types}
    return QueueOptions(
        event_types=event_types,
        narrow=narrow,
        apply_markdown=params.apply_markdown,
        client_gravatar=params.client_gravatar,
        all_public_streams=all_public_streams,
        slim_presence=params.slim_presence,
        include_subscribers=params.include_subscribers,
        client_capabilities=params.client_capabilities,
        lifespan_secs=lifespan_secs or settings.EVENT_QUEUE_LIFESPAN_SECONDS,
    )


# What a queue's narrow may filter on (Zulip's check_narrow_for_events): any "is" operand but these.
QUEUE_NARROW_OPERATORS = {"stream", "channel", "topic", "sender", "is"}
QUEUE_NARROW_UNSUPPORTED_IS_OPERANDS = {"followed"}


def check_queue_options(user, options: QueueOptions) -> None:
    if options.all_public_streams and (user.is_guest or user.realm_id is None):
        raise JsonableError("User not authorized for this query")
    for operator, operand, _ in options.narrow:
        if operator not in QUEUE_NARROW_OPERATORS:
            raise JsonableError(f"Operator {operator} not supported.")
        if operator == "is" and operand in QUEUE_NARROW_UNSUPPORTED_IS_OPERANDS:
            raise JsonableError(f"Operand {operand} not supported.")


def do_register_queue_only(user, options: QueueOptions) -> str:
    """A new queue for `user`, without initial state (GET /events without queue_id)."""
    check_queue_options(user, options)
    with redis_guarded():
        queue_id = get_backend().create_queue(user.id, user.realm_id, options)
    queue_registered(user, options)
    return queue_id


def do_register_queue(user, options: QueueOptions, fetch_event_types: list[str] | None) -> tuple[str, dict[str, Any]]:
    """A new queue and the initial state it continues from.

    The queue exists before the state is read, so nothing committed later is lost; the state and
    the number of the organization's newest event it contains come from one database snapshot,
    and the queue drops events up to that number, so nothing is applied twice.
    """
    check_queue_options(user, options)
    backend = get_backend()
    with redis_guarded():
        queue_id = backend.create_queue(user.id, user.realm_id, options, awaiting_state=True)
    try:
        queue_registered(user, options)
        with _one_snapshot():
            # The user as of the snapshot (the request loaded it earlier): their own fields too.
            user = type(user).objects.select_related("realm").get(pk=user.pk)
            types = frozenset(fetch_event_types) if fetch_event_types is not None else None
            state = fetch_initial_state(StateContext(user=user, options=options, fetch_types=types), fetch_event_types)
            state_seq = (
                RealmEventSequence.objects.filter(realm_id=user.realm_id).values_list("seq", flat=True).first() or 0
            )
        backend.exclude_events_through(queue_id, state_seq)
    except BaseException:
        with suppress(Exception):
            backend.delete_queue(queue_id, user.id)
        raise
    return queue_id, state


@contextmanager
def _one_snapshot() -> Iterator[None]:
    """A transaction whose reads all see one state of the database.

    PostgreSQL needs REPEATABLE READ for that; a SQLite transaction always does.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def do_sweep_event_queues(*, exclusive: bool = True) -> list[tuple[str, int]]:
    """Delete expired queues and outbox rows nobody needs any more; returns (queue id, user id) pairs.

    With `exclusive`, only one process of the deployment sweeps in a sweep period.
    """
    backend = get_backend()
    if exclusive and not backend.try_lock("sweep", settings.EVENT_QUEUE_SWEEP_SECONDS):
        return []
    try:
        began = timezone.now()
        removed = backend.sweep(time.time())
        restart_forgotten_sequences(backend)
        missed = publish_missed_events(backend)
        if missed and settings.REDIS_URL:
            # A publish failed (or its process died after the commit). Not one just committed, whose
            # own publish is on its way (the race QA pass: a busy server's sweep warned of those).
            if late := [row for row in missed if row.created < began - PUBLISH_GRACE]:
                logger.warning("published %d committed event(s) that had not reached the event queues", len(late))
        elif missed:
            # Without Redis this is routine (a management command's changes, or what happened before
            # this process started, reach this process's queues this way): said only when debugging
            # (the newcomer QA passes: at every start, read as a recovery, then as a puzzle).
            logger.debug("passed on %d event(s) made by another process or before this one started", len(missed))
        OutboxEvent.objects.filter(created__lt=timezone.now() - OUTBOX_RETENTION).delete()
    finally:
        close_old_connections()
    count_removed("expired", len(removed))
    for queue_id, user_id in removed:
        logger.info("event queue %s of user %s expired and was deleted", queue_id, user_id)
    return removed


def do_delete_queue(user, queue_id: str) -> None:
    """Delete the user's queue; another user's queue, or none, is BAD_EVENT_QUEUE_ID."""
    check_queue_id(queue_id)
    with redis_guarded():
        get_backend().delete_queue(queue_id, user.id, by_client=True)
