"""A per-process cache of who an Authorization header is, for the long-poll path and ordinary requests.

A busy server answers far more polls than anything else; looking the key up in the database for
every one costs more than the poll itself. Ordinary requests use it too (apps.users.accounts), with
the user as it was read, which each request copies. Entries live CREDENTIAL_CACHE_SECONDS and are
dropped at once, in every process, when a change could make them wrong: a key rotated, an email
changed, a user or organization deactivated, and (for ordinary requests) any change to the user's
row, which every action writing users announces (see forget_credentials_on_commit). Only
successful authentications are cached. An authentication that read the database before a change
was announced is not cached when it finishes after it (see `generation`).
"""

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from apps.core.hooks import Hooks

# Caches that must not outlive what this cache forgets (apps.realms: organizations by host): called
# with the ids of the organizations that changed, or with None when everything is forgotten.
credentials_forgotten = Hooks("credentials_forgotten")

# Other apps' per-process caches of what changes in an organization (apps.messages: each user's
# newest message), dropped in every process by outdate_caches_on_commit (apps.events.publish):
# called with the cache's name and the organizations whose entries are stale, with None and the
# organizations whose credentials were forgotten (every cache of theirs is stale), or with (None,
# None) when this process may have missed changes (its Redis subscription broke or came back).
caches_outdated = Hooks("caches_outdated")


@dataclass(frozen=True)
class Identity:
    user_id: int
    realm_id: int
    # For ordinary requests: the user as read from the database, without its organization (which
    # has a cache of its own); never handed out itself, each request gets a copy.
    user: Any = field(default=None, compare=False, repr=False)
    # An incoming webhook bot's key, cached by a send: never an identity for the long-poll path.
    send_only: bool = False


class CredentialCache:
    MAX_ENTRIES = 100_000

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], tuple[Identity, float]] = {}
        self._lock = threading.Lock()
        self.generation = 0  # counts forgets: read it before the database lookup, pass it to put()
        # False while this process cannot hear of the changes that make entries wrong (with Redis,
        # its subscription to the notifications is broken): nothing is kept or handed out meanwhile.
        self.trusted = True

    def get(self, host: str, authorization: str) -> Identity | None:
        if not self.trusted:
            return None
        entry = self._entries.get((host, authorization))
        if entry is None:
            return None
        identity, expires = entry
        if expires < time.monotonic():
            self._entries.pop((host, authorization), None)
            return None
        return identity

    def put(self, host: str, authorization: str, identity: Identity, generation: int) -> None:
        """Cache `identity`, read from the database when `self.generation` was `generation`; unless
        something was forgotten since (the identity may be what was forgotten)."""
        with self._lock:
            if generation != self.generation or not self.trusted:
                return
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            self._entries[(host, authorization)] = (identity, time.monotonic() + settings.CREDENTIAL_CACHE_SECONDS)

    def forget(self, user_ids: list[int] = (), realm_ids: list[int] = ()) -> None:
        if realm_ids:
            credentials_forgotten.call(list(realm_ids))
            caches_outdated.call(None, list(realm_ids))  # an organization forgotten: all of it
        users, realms = set(user_ids), set(realm_ids)
        with self._lock:
            self.generation += 1
            stale = [k for k, (ident, _) in self._entries.items() if ident.user_id in users or ident.realm_id in realms]
            for key in stale:
                del self._entries[key]

    def clear(self, *, trusted: bool = True) -> None:
        """Forget everything: credentials and organizations (e.g. after missing notifications); with
        `trusted` False, keep nothing until cleared again with it True (this process can no longer
        hear of changes: the operator QA pass, a key rotated during a Redis outage worked for five
        minutes more on a server that could not hear of it)."""
        credentials_forgotten.call(None)
        caches_outdated.call(None, None)
        with self._lock:
            self.trusted = trusted
            self.generation += 1
            self._entries.clear()


credential_cache = CredentialCache()
