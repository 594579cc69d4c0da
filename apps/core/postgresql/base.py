"""Django's PostgreSQL backend, with the connection health check (CONN_HEALTH_CHECKS) done without a
query when it can be.

Django checks a kept connection before the first query of every request with `SELECT 1`, a round
trip per request. A connection the server closed (a restart, an administrator's
pg_terminate_backend, an idle timeout) has something to read: the server's goodbye and the end of
the stream. So a connection with nothing to read, in no transaction, is taken as healthy at once;
only one with something waiting gets Django's `SELECT 1` (and is replaced when that fails), as Redis'
client does with its pooled connections. A server that vanished without closing (a dead host) is
found out by the request's first query, as it would have been by `SELECT 1`.

Every call that waits on the server is watched (apps/core/postgresql/watchdog.py): a server that
froze fails them within seconds instead of holding them until it resumes.
"""

import contextlib
import select
from typing import Any

from django.db.backends.postgresql import base
from psycopg.errors import ConnectionTimeout

from apps.core.postgresql.watchdog import watched


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.execute_wrappers.append(self._watched_execute)
        self._conn_params: dict[str, Any] = {}

    def get_new_connection(self, conn_params: dict[str, Any]):
        self._conn_params = conn_params
        return super().get_new_connection(conn_params)

    def _watched_execute(self, execute, sql, params, many, context):
        with self._watched():
            return execute(sql, params, many, context)

    def _commit(self) -> None:
        with self._watched():
            return super()._commit()

    def _rollback(self) -> None:
        with self._watched():
            return super()._rollback()

    def is_usable(self) -> bool:
        with self._watched():
            return super().is_usable()

    def _watched(self) -> contextlib.AbstractContextManager:
        try:
            fd = self.connection.fileno()
        except Exception:  # no connection, or a closed one: nothing to wait on
            return contextlib.nullcontext()
        return watched(fd, self._server_answers)

    def _server_answers(self) -> bool:
        """Whether the server answers a new connection's handshake within the connect timeout: with
        a connection, or with a refusal of its own (too many clients, its database closed to
        connections: it is alive, and its slow calls are left alone; the verify QA pass). Only a
        handshake that does not finish in time says it froze."""
        try:
            self.Database.connect(**self._conn_params).close()
        except ConnectionTimeout:
            return False
        except Exception:
            return True  # a refusal is an answer
        return True

    def close_if_health_check_failed(self) -> None:
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and self._nothing_to_read()
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def _nothing_to_read(self) -> bool:
        """The connection is idle and the server has sent nothing since (no query needed)."""
        try:
            if self.connection.info.transaction_status != self.connection.info.transaction_status.IDLE:
                return False
            poller = select.poll()
            poller.register(self.connection.fileno(), select.POLLIN | select.POLLPRI)
            return not poller.poll(0)
        except Exception:  # a closed or broken connection: let Django's own check decide
            return False
