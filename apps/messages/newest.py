"""The newest message a user has received (`max_message_id`), which every GET /users/me and POST
/register ask for.

In plain SQL: compiling the ORM's query cost several times what running it does, the largest
part of GET /users/me once its credentials are cached (benchmarks/scale/README.md). The table name
is the model's; the value is a parameter.

GET /users/me answers from a per-process cache (`newest_cache`) with Redis, where every process
hears of the changes: every action that adds or removes someone's message rows (a send, a
deletion, a move, history given to a newcomer, a flag on a message never received) calls
`newest_changed_on_commit`, and every process then drops what it holds of the organization. POST
/register always reads the database: its queue starts from that id.
"""

import threading
import time
from collections.abc import Iterable

from django.conf import settings
from django.db import connection

from apps.events.credentials import caches_outdated, credential_cache
from apps.events.publish import outdate_caches_on_commit
from apps.messages.models import UserMessage
from apps.users.models import User

_SQL = f"SELECT message_id FROM {UserMessage._meta.db_table} WHERE user_id = %s ORDER BY message_id DESC LIMIT 1"  # noqa: S608

CACHE_NAME = "newest"


def max_message_id(user: User) -> int:
    """The id of the newest message the user has; -1 for none."""
    with connection.cursor() as cursor:
        cursor.execute(_SQL, [user.id])
        row = cursor.fetchone()
    return row[0] if row is not None else -1


class NewestCache:
    """Users' newest message ids, each valid while nothing changed in their organization since it
    was read (each organization's `generation` counts its changes) and for ENTRY_SECONDS at most (a
    change Redis could not take is told again until it does, for longer than that: see
    outdate_caches_on_commit). Kept only while this process hears of changes
    (credential_cache.trusted: its Redis subscription works)."""

    ENTRY_SECONDS = 60.0
    MAX_ENTRIES = 100_000

    def __init__(self) -> None:
        # user id → (newest message id, organization id, its generation then, valid until)
        self._entries: dict[int, tuple[int, int, tuple[int, int], float]] = {}
        self._generations: dict[int, int] = {}
        self._epoch = 0  # counts the times everything was dropped
        self._lock = threading.Lock()

    def _generation(self, realm_id: int) -> tuple[int, int]:
        return self._epoch, self._generations.get(realm_id, 0)

    def max_message_id(self, user: User) -> int:
        if not settings.REDIS_URL:  # one process, and a database in it: nothing to save
            return max_message_id(user)
        entry = self._entries.get(user.id)
        if (
            entry is not None
            and credential_cache.trusted
            and entry[1] == user.realm_id
            and entry[2] == self._generation(user.realm_id)
            and time.monotonic() < entry[3]
        ):
            return entry[0]
        generation = self._generation(user.realm_id)  # read before the database
        value = max_message_id(user)
        with self._lock:
            if generation == self._generation(user.realm_id) and credential_cache.trusted:
                if len(self._entries) >= self.MAX_ENTRIES:
                    self._entries.clear()
                self._entries[user.id] = (value, user.realm_id, generation, time.monotonic() + self.ENTRY_SECONDS)
        return value

    def outdate(self, realm_ids: Iterable[int] | None) -> None:
        """Entries of these organizations are stale (all of them with None)."""
        with self._lock:
            if realm_ids is None:
                self._entries.clear()
                self._epoch += 1
                return
            for realm_id in realm_ids:
                self._generations[realm_id] = self._generations.get(realm_id, 0) + 1


newest_cache = NewestCache()


@caches_outdated.register
def _outdated(name: str | None, realm_ids: list[int] | None) -> None:
    if name in (CACHE_NAME, None):
        newest_cache.outdate(realm_ids)


def newest_changed_on_commit(realm_id: int) -> None:
    """Someone's message rows in the organization change in this transaction (see the docstring)."""
    outdate_caches_on_commit(CACHE_NAME, [realm_id])
