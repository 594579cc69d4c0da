"""Django's SQLite backend, with case-insensitive equality (`iexact`) written as PostgreSQL's is.

Django compiles `iexact` on SQLite to `LIKE %s ESCAPE '\\'`, and SQLite refuses a LIKE pattern
longer than 50,000 bytes ("LIKE or GLOB pattern too complex", an OperationalError, which the API
answers as the database being unreachable). Names and emails come from clients, so here it is
`UPPER(column) = UPPER(%s)`, as on PostgreSQL: no length limit, nothing to escape, and the same
result (SQLite's UPPER folds ASCII letters, as its LIKE does), able to use the `Upper(...)` indexes.
"""

from django.db.backends.sqlite3 import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def lookup_cast(self, lookup_type: str, internal_type: str | None = None) -> str:
        return "UPPER(%s)" if lookup_type == "iexact" else super().lookup_cast(lookup_type, internal_type)

    def prep_for_iexact_query(self, x: str) -> str:
        return x  # compared with =, where % and _ are not wildcards


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    operators = {**base.DatabaseWrapper.operators, "iexact": "= UPPER(%s)"}
