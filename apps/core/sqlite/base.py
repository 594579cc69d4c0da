"""Django's SQLite backend, with case-insensitive equality (`iexact`) written as PostgreSQL's is.

Django compiles `iexact` on SQLite to `LIKE %s ESCAPE '\\'`, and SQLite refuses a LIKE pattern
longer than 50,000 bytes ("LIKE or GLOB pattern too complex", an OperationalError, which the API
answers as the database being unreachable). Names and emails come from clients, so here it is
`UPPER(column) = UPPER(%s)`, as on PostgreSQL: no length limit, nothing to escape, able to use the
`Upper(...)` indexes.

SQLite's own UPPER folds ASCII letters only, so "Été" and "été" were two topics (and two channel
names) here and one on PostgreSQL, whose UPPER folds every letter: each connection replaces it
with Python's str.upper (the indexes built with the old one are rebuilt by messages 0011), and
LOWER with str.lower.

`icontains`, `istartswith` and `iendswith` are compiled as on PostgreSQL too, `UPPER(column) LIKE
UPPER(%s)`: SQLite's LIKE ignores the case of ASCII letters only, so a search for "été" did not
find "ÉTÉ" here.

A database whose files cannot be written (their permissions, a file system remounted read-only)
is refused when a connection opens, as a database that cannot be reached: SQLite would open it
read-only instead, and such a connection, and every later one of the process while one of them is
open (they share the read-only write-ahead log index), kept failing writes after the files were
writable again, until a restart (the fault QA pass). Connections last a request here, so once
the files are writable again the next ones open read-write.
"""

import os

from django.db.backends.sqlite3 import base, operations

# The lookups that ignore case: their column is compared upper-cased (and their value, below).
_CASE_INSENSITIVE = frozenset({"iexact", "icontains", "istartswith", "iendswith"})


class DatabaseOperations(operations.DatabaseOperations):
    def lookup_cast(self, lookup_type: str, internal_type: str | None = None) -> str:
        if lookup_type in _CASE_INSENSITIVE:
            return "UPPER(%s)"
        return super().lookup_cast(lookup_type, internal_type)

    def prep_for_iexact_query(self, x: str) -> str:
        return x  # compared with =, where % and _ are not wildcards


def unicode_upper(value: object) -> object:
    """SQL's UPPER as PostgreSQL has it in a UTF-8 database: every letter, not only ASCII ones."""
    return value.upper() if isinstance(value, str) else value


def unicode_lower(value: object) -> object:
    """SQL's LOWER, likewise."""
    return value.lower() if isinstance(value, str) else value


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    operators = {
        **base.DatabaseWrapper.operators,
        "iexact": "= UPPER(%s)",
        "icontains": "LIKE UPPER(%s) ESCAPE '\\'",
        "istartswith": "LIKE UPPER(%s) ESCAPE '\\'",
        "iendswith": "LIKE UPPER(%s) ESCAPE '\\'",
    }

    def get_new_connection(self, conn_params):
        if not self.files_writable():
            raise base.Database.OperationalError(f"the database {self.settings_dict['NAME']} is read-only")
        connection = super().get_new_connection(conn_params)
        # Deterministic, so that indexes on UPPER(...) may use it.
        connection.create_function("upper", 1, unicode_upper, deterministic=True)
        connection.create_function("lower", 1, unicode_lower, deterministic=True)
        return connection

    def files_writable(self) -> bool:
        """Whether this process may write the database file, its write-ahead log and index where
        they exist, and the directory, where SQLite makes them."""
        if self.is_in_memory_db():
            return True
        path = str(self.settings_dict["NAME"])
        names = (path, os.path.dirname(path) or ".", f"{path}-wal", f"{path}-shm")
        return not any(_unwritable(name) for name in names)


def _unwritable(name: str) -> bool:
    """Whether a file (or directory) this process cannot write is there. The write-ahead log and
    index come and go (the last connection to close removes them, the next to open makes them
    again), so a look that fails is taken again: a file removed under it, or removed and made again
    between its two calls, is no hindrance (the newcomer QA pass: one request in about 2,000 got a
    503 "read-only" on a writable database)."""
    return not any(os.access(name, os.W_OK) or not os.path.exists(name) for _look in range(3))
