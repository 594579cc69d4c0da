"""Django's PostgreSQL backend, with the connection health check (CONN_HEALTH_CHECKS) done without a
query when it can be.

Django checks a kept connection before the first query of every request with `SELECT 1`, a round
trip per request. A connection the server closed (a restart, an administrator's
pg_terminate_backend, an idle timeout) has something to read: the server's goodbye and the end of
the stream. So a connection with nothing to read, in no transaction, is taken as healthy at once;
only one with something waiting gets Django's `SELECT 1` (and is replaced when that fails), as Redis'
client does with its pooled connections. A server that vanished without closing (a dead host) is
found out by the request's first query, as it would have been by `SELECT 1`.
"""

import select

from django.db.backends.postgresql import base


class DatabaseWrapper(base.DatabaseWrapper):
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
