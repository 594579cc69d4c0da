"""The base class of Parley's operator commands (`manage.py <command>`).

Standard output carries a command's output only: text for people or, with `--json`, exactly one
JSON object; logs go to standard error (settings.LOGGING). A database that cannot be reached is a
one-line error on standard error and exit status 1, never a traceback.

A change made while Redis is down is stored and takes full effect without it: its events wait in
the outbox until a server's sweep publishes them, and each server drops its cached credentials when
its notification listener reconnects. So commands do not refuse to run without Redis (an operator
rotating a leaked key during an outage must be able to); what could not be told at once is one log
line on standard error.
"""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import REDIS_UNAVAILABLE, dependency_error, is_sqlite_schema_error


class OperatorCommand(BaseCommand):
    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except Exception as exc:
            if dependency_error(exc) is None and not is_sqlite_schema_error(exc):
                raise
            raise CommandError(unreachable(exc)) from None


def unreachable(error: BaseException) -> str:
    detail = " ".join(str(error).split()).rstrip(".")
    if "no such table" in detail:
        # SQLite's answer for a database never migrated: most often not the server's (a command
        # run without the DATABASE_URL the server has opens the embedded default, empty).
        name = settings.DATABASES["default"]["NAME"]
        return (
            f"The database {name} has no tables ({detail}): is it the server's (DATABASE_URL)? "
            "A new database is set up with `manage.py migrate`."
        )
    what = "Redis (REDIS_URL)" if isinstance(error, REDIS_UNAVAILABLE) else "The database"
    return f"{what} cannot be reached: {detail}"
