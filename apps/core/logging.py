"""Log records carry the id of the request they belong to; JSON output for log collectors."""

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime

# No log format here names a source file or function: skip looking them up for every record (the
# logging module's documented optimisation; gunicorn's own format needs the process id, kept).
logging._srcfile = None

# Set by the request-id middleware for the duration of a request. A ContextVar follows the request
# across threads (sync_to_async copies the context) and asyncio tasks.
current_request_id: ContextVar[str] = ContextVar("current_request_id", default="-")


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id.get()
        return True


class ServerLoggerNameFilter(logging.Filter):
    """gunicorn and uvicorn log their start, stop and workers under `*.error`: named "gunicorn" and
    "uvicorn" in the log, where "error" beside INFO misled (the operator QA pass)."""

    RENAMED = {"gunicorn.error": "gunicorn", "uvicorn.error": "uvicorn"}

    def filter(self, record: logging.LogRecord) -> bool:
        record.name = self.RENAMED.get(record.name, record.name)
        return True


class SuspiciousRequestFilter(logging.Filter):
    """Django logs each refused suspicious request (a Host header that is not ours, too many fields)
    as an ERROR with its traceback, under `django.security.*`: a fault of the client, not of the
    server, which anyone could use to fill the log. One WARNING line without the traceback; the
    access log has the request's 400 too."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.security.") and record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info = record.exc_text = None
        return True


class ServiceUnavailableFilter(logging.Filter):
    """Django logs every 5xx answer as an ERROR (an uncaught exception's, a page's, with its
    traceback). A 503 says a dependency is down or a transaction gave way to another, which
    apps.core.errors already logged as one WARNING line: not again, and without a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "django.request" and getattr(record, "status_code", None) == 503)


class TaskWorkerStopFilter(logging.Filter):
    """django_tasks_db says each stop it is asked for ("Received Terminated - shutting down
    gracefully... (press Ctrl+C again to force)") as a WARNING; the server stops its task workers so
    every time it stops (two WARNINGs at each Ctrl-C of `make run`, asking for another): an INFO line
    in the server's words (the operator QA pass)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "django_tasks_db" and str(record.msg).startswith("Received %s - shutting down gracefully"):
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = "Task worker: stopping once its current task, if any, is done (%s)"
            record.args = record.args[:1]
        return True


# The control characters (but the tab) as escapes: what a client sent (a path, a client name) cannot
# start a line of its own or hide in one (the faults QA pass: a path with %0a wrote a forged ERROR
# line, one with %00 made the log a binary file to grep).
_ESCAPED_CONTROLS = {code: f"\\x{code:02x}" for code in [*range(0x20), *range(0x7F, 0xA0)] if code != 0x09}


class TextFormatter(logging.Formatter):
    """The text format: one line a record (its traceback, if any, on the lines that follow)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = record.message.translate(_ESCAPED_CONTROLS)
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, request_id, message (and exc_info); an access
    log line adds its request's method, path, route, status, duration_ms, realm_id and user_id."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", current_request_id.get()),
            "message": record.getMessage(),
        }
        if isinstance(access := getattr(record, "access", None), dict):
            entry.update(access)  # apps.core.middleware.log_access
        if isinstance(data := getattr(record, "data", None), dict):
            entry["data"] = data  # a record's fields: logger.info(..., extra={"data": {...}})
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
