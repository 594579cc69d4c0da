"""The base class of Parley's operator commands (`manage.py <command>`).

Standard output carries a command's output only: text for people or, with `--json`, exactly one
JSON object; logs go to standard error (settings.LOGGING). A database or Redis that cannot be
reached is a one-line error on standard error and exit status 1, never a traceback. A command that
changes something first checks that both answer and, when one does not, changes nothing: a change
the server processes cannot be told about (events, dropped credentials) would be half done.
"""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import REDIS_UNAVAILABLE, dependency_error
from apps.core.health import database_unavailable, redis_unavailable


class OperatorCommand(BaseCommand):
    def checks_dependencies_first(self, options: dict[str, Any]) -> bool:
        """Whether this run may change something (so checks the database and Redis before it starts)."""
        return True

    def execute(self, *args: Any, **options: Any) -> str | None:
        if self.checks_dependencies_first(options):
            _require_dependencies()
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except Exception as exc:
            if dependency_error(exc) is None:
                raise
            raise CommandError(_unreachable(exc)) from None


def _require_dependencies() -> None:
    error = database_unavailable() or (redis_unavailable() if settings.REDIS_URL else None)
    if error is not None:
        raise CommandError(f"{_unreachable(error)}. Nothing was changed.")


def _unreachable(error: BaseException) -> str:
    what = "Redis (REDIS_URL)" if isinstance(error, REDIS_UNAVAILABLE) else "The database"
    return f"{what} cannot be reached: {' '.join(str(error).split()).rstrip('.')}"
