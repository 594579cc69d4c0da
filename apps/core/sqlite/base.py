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
"""

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
        connection = super().get_new_connection(conn_params)
        # Deterministic, so that indexes on UPPER(...) may use it.
        connection.create_function("upper", 1, unicode_upper, deterministic=True)
        connection.create_function("lower", 1, unicode_lower, deterministic=True)
        return connection
