"""A watch over the calls waiting on PostgreSQL, for a server whose processes stop answering while
its host still acknowledges (frozen, swapped out, a paused virtual machine).

TCP cannot tell such a server from a busy one: its kernel acknowledges every packet, so neither
keepalives nor tcp_user_timeout end the wait, and a request whose query went out on a connection
it already held waited as long as the freeze lasted (the fault QA pass: over 100 s, its client long
gone). Here a call (a query, a commit or rollback, a health check) waiting longer than
FROZEN_AFTER_SECONDS makes the watch open a new connection to the server; when even that handshake
cannot finish within the connect timeout, the waiting calls' sockets are shut down, so that they
fail at once: a 503, as for a database that cannot be reached. A slow call on a server that still
accepts connections (a lock wait, a big move) is left alone.

One thread per process, started with the first call watched; a call costs a lock taken twice.
"""

import contextlib
import itertools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

FROZEN_AFTER_SECONDS = 5
CHECK_EVERY_SECONDS = 1


@dataclass(frozen=True)
class _Waiting:
    since: float
    fd: int  # the connection's socket
    server_answers: Callable[[], bool]  # whether a new connection to its server can be made


_lock = threading.Lock()
_waiting: dict[int, _Waiting] = {}
_tokens = itertools.count()
_watcher_pid: int | None = None  # the process whose watcher runs (a forked worker starts its own)


class watched:
    """Watch the call made inside, which waits on the connection whose socket is `fd`. A class, not
    a generator: it runs around every query (1.6 µs against a contextlib generator's 2.1, in one run)."""

    __slots__ = ("fd", "server_answers", "token")

    def __init__(self, fd: int, server_answers: Callable[[], bool]) -> None:
        self.fd, self.server_answers = fd, server_answers

    def __enter__(self) -> None:
        global _watcher_pid
        self.token = next(_tokens)
        with _lock:
            _waiting[self.token] = _Waiting(time.monotonic(), self.fd, self.server_answers)
            if _watcher_pid != os.getpid():
                _watcher_pid = os.getpid()
                threading.Thread(target=_watch, name="postgresql-watchdog", daemon=True).start()

    def __exit__(self, *exc_info: object) -> None:
        with _lock:
            del _waiting[self.token]


def _watch() -> None:
    next_probe = 0.0
    while True:
        time.sleep(CHECK_EVERY_SECONDS)
        try:
            next_probe = _look(next_probe)
        except Exception:  # the watch goes on whatever one look met
            logger.exception("the PostgreSQL watch failed to look at the waiting calls")


def _look(next_probe: float) -> float:
    """One look at the waiting calls; returns when the server may next be probed."""
    now = time.monotonic()
    with _lock:
        stuck = {token: call for token, call in _waiting.items() if now - call.since > FROZEN_AFTER_SECONDS}
    if not stuck or now < next_probe:
        return next_probe
    if next(iter(stuck.values())).server_answers():
        return time.monotonic() + FROZEN_AFTER_SECONDS  # a slow call: ask again later
    with _lock:
        ended = [call.fd for token, call in stuck.items() if token in _waiting]
        for fd in ended:
            _shut_down(fd)
    if ended:
        logger.warning(
            "PostgreSQL accepts no connection and %d calls waited on it over %s s: their connections are closed",
            len(ended),
            FROZEN_AFTER_SECONDS,
        )
    return next_probe


def _shut_down(fd: int) -> None:
    """End the connection on socket `fd` for both ends' reads and writes; the call waiting on it
    fails. Done on a duplicate of the descriptor: the connection's own stays its owner's to close."""
    try:
        duplicate = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    with duplicate, contextlib.suppress(OSError):
        duplicate.shutdown(socket.SHUT_RDWR)
