"""What the API answers for exceptions that are not its own errors (apps.core.errors.as_jsonable_error)."""

import psycopg.errors
from django.db import OperationalError

from apps.core.errors import as_jsonable_error


def raised(error: Exception, cause: Exception) -> Exception:
    try:
        raise error from cause
    except Exception as exc:
        return exc


def test_a_transaction_given_up_for_a_concurrent_one_says_so():
    """A deadlock or a serialization failure is no unreachable database: a 503 saying to try again."""
    for cause in (psycopg.errors.DeadlockDetected("deadlock detected"), psycopg.errors.SerializationFailure("no")):
        error = as_jsonable_error(raised(OperationalError(str(cause)), cause))
        assert error.to_dict() == {
            "result": "error",
            "code": "SERVICE_UNAVAILABLE",
            "msg": "Service temporarily unavailable: a conflicting change was made at the same moment; try again",
        }
        assert (error.http_status_code, error.headers()) == (503, {"Retry-After": "1"})


def test_an_unreachable_database_is_still_one():
    cause = psycopg.errors.OperationalError("connection refused")
    error = as_jsonable_error(raised(OperationalError("connection refused"), cause))
    assert error.msg == "Service temporarily unavailable: the database cannot be reached"


def test_an_unreachable_database_is_logged_on_one_line(caplog):
    """libpq's messages span lines; a log line is one line (the verify QA pass)."""
    message = 'connection failed: Connection refused\n\tIs the server running on host "db"?'
    as_jsonable_error(raised(OperationalError(message), psycopg.errors.OperationalError(message)))
    [record] = [r for r in caplog.records if r.name == "apps.core.errors"]
    assert record.getMessage() == (
        "dependency unavailable: OperationalError: connection failed: Connection refused"
        ' Is the server running on host "db"?'
    )
