"""`manage.py run_tasks`: the background task worker (apps/core/tasks.py).

It runs every ready task of every queue, then waits TASK_POLL_SECONDS and looks again; between
tasks it runs the periodic jobs when they are due (apps.core.tasks.PERIODIC_JOBS): once a minute it
makes tasks abandoned by a dead worker ready again, once an hour it deletes finished tasks kept long
enough, and the apps' own (full members promoted after the waiting period, ...). A job that fails is
logged and tried again at its next time. Several workers (on one machine or several) share the work: each claims a task
under a row lock. The database going away is one log line and a retry with backoff, never an exit:
the worker carries on when it is back. SIGTERM or SIGINT stops it after the task it is running.

The server starts one beside itself (config/gunicorn.py); `--batch` runs what is ready and exits.
"""

import logging
import os
import signal
import threading
import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import close_old_connections, connections
from django.utils.crypto import get_random_string
from django_tasks_db.management.commands.db_worker import Worker

from apps.core.commands import OperatorCommand
from apps.core.errors import count_dependency_failure, dependency_error, migrations_missing_for, one_line
from apps.core.tasks import PERIODIC_JOBS, batch_worker, requeue_tasks_of

logger = logging.getLogger("apps.core.tasks")

# Waits after a failure to reach the database: doubling from the first to the last (a connection
# attempt costs the database little; tasks queued meanwhile wait at most this long after its return).
OUTAGE_FIRST_WAIT_SECONDS = 1
OUTAGE_MAX_WAIT_SECONDS = 5
# How often a worker started by the server looks whether that server is still there.
PARENT_CHECK_SECONDS = 0.5


class Command(OperatorCommand):
    help = "Run background tasks (push notifications, outgoing webhooks) as they are queued."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--batch", action="store_true", help="Run the tasks that are ready, then exit.")
        parser.add_argument("--worker-id", default=None, help="A name unique among the workers (default: random).")
        parser.add_argument(
            "--queue", action="append", dest="queues", help="Run only this queue's tasks (repeatable; default: all)."
        )
        parser.add_argument(
            "--exclude-queue", action="append", dest="exclude", help="Run every queue's tasks but this one's."
        )
        parser.add_argument(
            "--parent-pid", type=int, default=None, help="Stop when this process (the server that started it) is gone."
        )
        parser.add_argument(
            "--requeue-tasks-of",
            action="append",
            dest="requeue_of",
            metavar="WORKER_ID",
            default=[],
            help="First make the tasks these workers, which died, left running ready again (the server does this).",
        )

    def handle(
        self,
        *args: Any,
        batch: bool,
        worker_id: str | None,
        parent_pid: int | None,
        requeue_of: list[str],
        queues: list[str] | None,
        exclude: list[str] | None,
        **options: Any,
    ) -> None:
        if queues and exclude:
            raise CommandError("--queue and --exclude-queue do not go together")
        known = settings.TASKS["default"]["QUEUES"]
        if unknown := [name for name in [*(queues or ()), *(exclude or ())] if name not in known]:
            raise CommandError(f"No such queue: {', '.join(unknown)} (the queues: {', '.join(known)}).")
        worker = batch_worker(worker_id or get_random_string(32), queues=queues, exclude=exclude)
        if batch:
            if requeue_of:
                requeue_tasks_of(requeue_of)
            worker.run()
            return
        worker.configure_signals()
        if parent_pid is not None:
            watch_parent(parent_pid)
        logger.info("Task worker %s started", worker.worker_id)
        run_forever(worker, requeue_of=requeue_of)


def watch_parent(parent_pid: int) -> None:
    """The server that started this worker gone (killed outright), the worker stops as SIGTERM stops
    it: at once, or after the task it is running (the verify QA pass: it went on through every task
    of its queue first, checking between rounds). A thread of its own: a task may take a while."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_SECONDS)
        logger.warning("Task worker: the server that started it is gone; stopping")
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def run_forever(worker: Worker, *, requeue_of: Sequence[str] = ()) -> None:
    next_runs = [0.0] * len(PERIODIC_JOBS)
    outage_wait = 0.0
    while worker.running:
        try:
            if requeue_of:  # (in here: the database may be away at first)
                requeue_tasks_of(requeue_of)
                requeue_of = ()
            run_due_jobs(next_runs)
            worker.run()  # every ready task, then back here
            if outage_wait:
                logger.info("Task worker: the database is back")
            outage_wait = 0.0
        except Exception as exc:
            # Waited out as an outage too: a database that lacks this version's migrations (the
            # operator QA pass: a traceback every 5 s, until `migrate` ran).
            pending = 0
            if count_dependency_failure(exc) is None and not (pending := migrations_missing_for(exc)):
                raise
            outage_wait = min(max(outage_wait * 2, OUTAGE_FIRST_WAIT_SECONDS), OUTAGE_MAX_WAIT_SECONDS)
            why = (
                f"lacks {pending} migration(s) of this version (run manage.py migrate)"
                if pending
                else f"cannot be reached ({one_line(exc)})"
            )
            logger.warning("Task worker: the database %s; trying again in %.0f s", why, outage_wait)
            for connection in connections.all():
                connection.close_if_unusable_or_obsolete()
            time.sleep(outage_wait)
            continue
        close_old_connections()
        if worker.running:
            time.sleep(settings.TASK_POLL_SECONDS)


def run_due_jobs(next_runs: list[float]) -> None:
    """Each periodic job whose time has come (next_runs: when each may run next, updated). The
    database being unreachable stops the round (run_forever waits it out); another failure is
    logged, and the job runs again at its next time."""
    for index, (every_seconds, job) in enumerate(PERIODIC_JOBS):
        now = time.monotonic()
        if now < next_runs[index]:
            continue
        next_runs[index] = now + every_seconds
        try:
            job()
        except Exception as exc:
            if dependency_error(exc) is not None or migrations_missing_for(exc):
                next_runs[index] = 0.0
                raise
            logger.exception("Task worker: the periodic job %s failed", job.__name__)
