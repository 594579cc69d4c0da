"""Sending events: actions call send_event_on_commit; the event reaches queues after the commit.

Each event is written to the outbox (OutboxEvent) in the transaction that causes it and numbered
in commit order within its organization. After the commit it is published to the queues, in that
order: a publish that overtakes an earlier event of the organization (committed first, its own
publish still on the way, or failed) publishes that event from the outbox first. Events whose
publish failed altogether (Redis unreachable) are published by the periodic sweep.
"""

import atexit
import contextlib
import itertools
import json
import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import redis
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max

from apps.core.errors import count_dependency_failure, dependency_of
from apps.core.redis_client import RedisLeftAlone, redis_breaker, redis_guarded
from apps.events.backends import (
    AlreadyPublished,
    BadEventQueueIdError,
    EventQueueBackend,
    Everyone,
    PredecessorMissing,
    audience_from_json,
    get_backend,
)
from apps.events.credentials import caches_outdated, credential_cache
from apps.events.models import OutboxEvent, RealmEventSequence

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from apps.realms.models import Realm

logger = logging.getLogger(__name__)


def send_event_on_commit(realm: "Realm | int", event: dict[str, Any], user_ids: Iterable[int] | Everyone) -> None:
    """Queue `event` for every queue of `user_ids` (users of `realm`; or Everyone of it) that wants
    its type, once the transaction commits.

    Nothing is sent if the transaction rolls back. `event` has a "type" and no "id" (each queue
    numbers its own events).
    """
    if "type" not in event or "id" in event:
        raise ValueError("an event has a type and no id")
    if isinstance(user_ids, Everyone):
        audience = user_ids.to_json()
    else:
        audience = sorted(set(user_ids))
        if not audience:
            return
    row = write_outbox_event(realm if isinstance(realm, int) else realm.id, event, audience)

    def publish() -> None:
        if not redis_breaker.usable():  # Redis failed lately: not waited for (the sweep publishes it)
            return
        try:
            publish_in_order(get_backend(), row)
        except Exception as exc:
            if dependency_of(exc) == "redis":
                redis_breaker.failed()
            _log_failure(exc, "could not publish %s event %s; the sweep will", row.event_type, row.id)
        else:
            redis_breaker.answered()

    transaction.on_commit(publish, robust=False)


def write_outbox_event(realm_id: int, event: dict[str, Any], audience: list[int] | dict) -> OutboxEvent:
    """The outbox row of an event, in the current transaction (`audience`: user ids, or
    Everyone.to_json())."""
    return OutboxEvent.objects.create(
        realm_id=realm_id,
        # PostgreSQL numbers the row while committing (a deferred trigger); SQLite runs one writing
        # transaction at a time, so the number taken now is in commit order too.
        seq=None if connection.vendor == "postgresql" else _next_seq(realm_id),
        event_type=event["type"],
        payload=json.dumps(event),
        user_ids=audience,
    )


def _next_seq(realm_id: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO events_realmeventsequence (realm_id, seq) VALUES (%s, 1) "
            "ON CONFLICT (realm_id) DO UPDATE SET seq = events_realmeventsequence.seq + 1 RETURNING seq",
            [realm_id],
        )
        return cursor.fetchone()[0]


def _committed_seq(row: OutboxEvent) -> int:
    if row.seq is None:
        row.seq = OutboxEvent.objects.filter(id=row.id).values_list("seq", flat=True).get()
        if row.seq is None:
            # Still inside the transaction (a test running on-commit callbacks early): number it now.
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS events_outbox_commit_seq IMMEDIATE")
            row.seq = OutboxEvent.objects.filter(id=row.id).values_list("seq", flat=True).get()
    return row.seq


def publish_in_order(backend: EventQueueBackend, row: OutboxEvent) -> None:
    """Publish a committed event, after any earlier event of its organization not yet published."""
    seq = _committed_seq(row)
    try:
        _publish(backend, row, seq)
        return
    except PredecessorMissing as gap:
        last = gap.last_seq
    # Everything numbered before this event committed before it, so it is in the outbox (unless
    # older than the outbox keeps rows: then it is lost to the queues, and skipped).
    earlier = OutboxEvent.objects.filter(realm_id=row.realm_id, seq__gt=last, seq__lt=seq).order_by("seq")
    _publish_all(backend, [*earlier, row])


def _publish_all(backend: EventQueueBackend, rows: list[OutboxEvent]) -> None:
    for row in rows:
        # Forced: in order, anything missing before `row` is gone for good; events another
        # process published meanwhile are recognised and not published twice.
        _publish(backend, row, row.seq, force=True)


def _publish(backend: EventQueueBackend, row: OutboxEvent, seq: int, *, force: bool = False) -> None:
    """Publish one event. One published before is left alone, unless the queues were given events
    numbered beyond the database's newest: the database went back in time (restored from a backup),
    so the organization's queues start again (restart_events) and the event goes out after."""
    audience = audience_from_json(row.user_ids)
    try:
        backend.publish(row.realm_id, seq, row.payload, row.event_type, audience, force=force)
    except AlreadyPublished as published:
        # Read after the backend's answer: in normal operation the database's counter is never
        # behind what was published from it, so a counter read after can only be ahead.
        counter = RealmEventSequence.objects.filter(realm_id=row.realm_id).values_list("seq", flat=True).first()
        if (counter or 0) < published.last_seq:
            restart_events(backend, row.realm_id)
            publish_in_order(backend, row)


def restart_events(backend: EventQueueBackend, realm_id: int) -> int:
    """The organization's queues start again (EventQueueBackend.restart_sequence); says so in the
    log. Returns how many queues were deleted."""
    deleted = backend.restart_sequence(realm_id)
    logger.warning(
        "the database of organization %s is behind its event queues (restored from a backup?): its %d event "
        "queue(s) were deleted (their clients register again) and its events are published again from the database",
        realm_id,
        deleted,
    )
    return deleted


def publish_missed_events(backend: EventQueueBackend) -> list[OutboxEvent]:
    """Publish committed events that never reached the queues (their publish failed, or the process
    died right after the commit), and those whose publish after their commit is still on its way;
    returns them. Called by the periodic sweep."""
    newest = OutboxEvent.objects.filter(seq__isnull=False)
    return _publish_unpublished(backend, newest)


def publish_events_since(backend: EventQueueBackend, after_id: int) -> int:
    """Publish the events of outbox rows after `after_id` that have not reached these queues; returns
    the newest row id seen. Without Redis, the queues are in the server's memory, and the events of
    other processes (the task worker's: scheduled messages sent, outgoing webhooks' replies; a
    command's) reach them this way, a moment after their commit (lifecycle: EVENT_OUTBOX_POLL_SECONDS)."""
    newest_id = OutboxEvent.objects.filter(id__gt=after_id).aggregate(newest=Max("id"))["newest"]
    if newest_id is None:
        return after_id
    _publish_unpublished(backend, OutboxEvent.objects.filter(id__gt=after_id, id__lte=newest_id, seq__isnull=False))
    return newest_id


def restart_forgotten_sequences(backend: EventQueueBackend) -> list[int]:
    """The organizations whose queues were given events the database does not know of (it went back
    in time) while none of theirs was published since: their queues start again (restart_events).
    Returns their ids. Called by the sweep, also when a server starts (a new event of theirs finds
    it out at once: _publish).

    The backend is read before the database: in normal operation an organization's counter in the
    database is never behind what was published from it, so a counter read after can only be ahead."""
    realm_ids = list(RealmEventSequence.objects.values_list("realm_id", flat=True))
    published = backend.last_published_seqs(realm_ids)
    in_database = dict(RealmEventSequence.objects.filter(realm_id__in=published).values_list("realm_id", "seq"))
    behind = [realm_id for realm_id, last in published.items() if last > in_database.get(realm_id, last)]
    for realm_id in behind:
        restart_events(backend, realm_id)
    return behind


def newest_outbox_id() -> int:
    return OutboxEvent.objects.aggregate(newest=Max("id"))["newest"] or 0


def _publish_unpublished(backend: EventQueueBackend, rows: "QuerySet[OutboxEvent]") -> list[OutboxEvent]:
    """Publish, for each organization with rows among `rows`, its outbox events the backend has not
    published yet; returns them."""
    newest = dict(rows.values_list("realm_id").annotate(newest=Max("seq")).order_by())
    published = backend.last_published_seqs(list(newest))
    done: list[OutboxEvent] = []
    for realm_id, newest_seq in newest.items():
        # An organization the backend has no record of has had no event published since its
        # queues' storage began (its very first publish failed, or Redis was emptied): publish
        # what the outbox holds. Queues skip events older than their initial state, so nothing
        # is applied twice.
        last = published.get(realm_id, 0)
        if newest_seq > last:
            missed = list(OutboxEvent.objects.filter(realm_id=realm_id, seq__gt=last).order_by("seq"))
            _publish_all(backend, missed)
            done += missed
    return done


def forget_credentials_on_commit(*, user_ids: Iterable[int] = (), realm_ids: Iterable[int] = ()) -> None:
    """After the commit, every server process stops trusting cached credentials of these users or
    organizations (a key rotated, an email changed, a deactivation)."""
    users, realms = sorted(set(user_ids)), sorted(set(realm_ids))
    # This process forgets at once (harmless if the transaction rolls back: entries just refill).
    credential_cache.forget(users, realms)

    def forget() -> None:
        if not redis_breaker.usable():  # Redis failed lately: told again once it answers
            _undropped_credentials.add(users, realms)
            return
        try:
            get_backend().forget_credentials(users, realms)
        except Exception as exc:
            if dependency_of(exc) == "redis":
                redis_breaker.failed()
            _log_failure(exc, "could not drop cached credentials of users %s, organizations %s", users, realms)
            # A Redis that refused or dropped the connection did so to the servers' subscriptions
            # too: they drop every cached credential as they subscribe again. One that did not
            # answer in time may have kept them (paused, hung): it is told again.
            if isinstance(exc, redis.exceptions.TimeoutError):
                _undropped_credentials.add(users, realms)
        else:
            redis_breaker.answered()

    transaction.on_commit(forget)


class _UndroppedCredentials:
    """Drops of cached credentials Redis was not told of, told again (a thread of this process, every
    few seconds) until it is, or until no process can still hold what they drop
    (CREDENTIAL_CACHE_SECONDS). The fault QA pass: a key rotated during a pause of Redis shorter than
    the servers' check of it stayed valid in the other processes until their cache expired."""

    RETRY_SECONDS = (0.5, 1, 2, 4)
    # A process ending (a command: rotate_api_key) waits this long for its drops to be told.
    EXIT_WAIT_SECONDS = 15

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: set[int] = set()
        self._realms: set[int] = set()
        self._until = 0.0
        self._thread: threading.Thread | None = None

    def add(self, users: Iterable[int], realms: Iterable[int]) -> None:
        with self._lock:
            self._users.update(users)
            self._realms.update(realms)
            self._until = time.monotonic() + settings.CREDENTIAL_CACHE_SECONDS
            if self._thread is None:  # (the thread clears it, under the lock, as it ends)
                self._thread = threading.Thread(target=self._retry, name="credential-drops", daemon=True)
                self._thread.start()
                atexit.register(self._thread.join, self.EXIT_WAIT_SECONDS)

    def discard(self) -> None:
        """Tell none of them (the tests, whose settings and Redis change from one to the next)."""
        with self._lock:
            self._users, self._realms = set(), set()

    def _retry(self) -> None:
        for attempt in itertools.count():
            time.sleep(self.RETRY_SECONDS[min(attempt, len(self.RETRY_SECONDS) - 1)])
            with self._lock:
                users, realms = sorted(self._users), sorted(self._realms)
                # Nothing left (discarded), or every cache has let them go by now.
                if not (users or realms) or time.monotonic() > self._until:
                    self._users, self._realms, self._thread = set(), set(), None
                    return
            try:
                get_backend().forget_credentials(users, realms)
            except Exception:  # noqa: S112 (still down: tried again shortly)
                continue
            redis_breaker.answered()  # (this thread does not wait for the requests' next try)
            logger.info("dropped cached credentials of users %s, organizations %s at last", users, realms)
            with self._lock:
                self._users.difference_update(users)
                self._realms.difference_update(realms)
                if not (self._users or self._realms):
                    self._thread = None
                    return


_undropped_credentials = _UndroppedCredentials()


def outdate_caches_on_commit(name: str, realm_ids: Iterable[int]) -> None:
    """Every process drops what its cache `name` holds of these organizations (the caches_outdated
    hook): this one at once and again at the commit (a request between the two may have cached what
    the transaction changes), the others when told after the commit. One Redis could not be told of
    (down, or failed lately here) is told as soon as it answers, as the organization's credentials
    forgotten, which outdates all its caches too (the leaseqa QA pass: a process whose Redis had just
    come back was not told yet, while the others listened again and kept a stale newest message)."""
    realms = sorted(set(realm_ids))
    caches_outdated.call(name, realms)

    def outdate() -> None:
        caches_outdated.call(name, realms)
        if not settings.REDIS_URL:
            return
        try:
            with redis_guarded():
                get_backend().outdate_caches(name, realms)
        except Exception as exc:
            if not isinstance(exc, RedisLeftAlone):
                _log_failure(exc, "could not tell the servers that %s of organizations %s changed", name, realms)
            _undropped_credentials.add((), realms)

    transaction.on_commit(outdate)


def delete_queues_on_commit(user_ids: Iterable[int]) -> None:
    """After the commit, the users' event queues are deleted (deactivated users hear nothing more;
    a poll waiting on one ends with BAD_EVENT_QUEUE_ID). Queues Redis cannot be told of now expire
    unpolled: a deactivated user's polls are refused."""
    users = sorted(set(user_ids))

    def delete() -> None:
        backend = get_backend()
        try:
            with redis_guarded():
                for user_id in users:
                    for queue_id in backend.queue_ids_of_user(user_id):
                        with contextlib.suppress(BadEventQueueIdError):  # expired meanwhile
                            backend.delete_queue(queue_id, user_id)
        except RedisLeftAlone:
            logger.warning("event queues of users %s not deleted: Redis failed lately", users)
        except Exception as exc:
            _log_failure(exc, "could not delete the event queues of users %s", users)

    transaction.on_commit(delete)


def _log_failure(exc: Exception, message: str, *args: Any) -> None:
    """An unreachable Redis or database is a warning on one line (it is not a bug, the caller says
    what follows, and an outage would log one an event: the ops QA pass); anything else is an error
    with its traceback."""
    if count_dependency_failure(exc) is None:
        logger.exception(message, *args)
    else:
        logger.warning(message + ": %s: %s", *args, type(exc).__name__, exc)
