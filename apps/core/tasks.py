"""Background tasks: Django's tasks API (the `django-tasks` backport) with the database backend of
`django-tasks-db`, run by `manage.py run_tasks`.

A task is queued inside the transaction of the change it follows (`some_task.enqueue(...)` in the
action): its row commits with the change or not at all, so nothing is queued for a change that
rolled back, nothing queued is lost when a process dies after the commit, and no worker runs it
before the commit. Tasks run at least once: a worker killed in the middle of one leaves it
"running", and after TASK_ABANDONED_AFTER_SECONDS any worker runs it again (requeue_abandoned), so a
task must be safe to run twice.

A task made with `retried_task` that raises TemporaryFailure (a service down or slow, a 5xx), or
finds Redis or the database unreachable (apps.core.errors.dependency_of), is queued again to run
later, with exponential backoff, up to its number of attempts; any other exception fails it, and
the failure is logged and kept for TASK_KEEP_FAILED_SECONDS (the Django admin lists tasks and
their tracebacks).
"""

import logging
import random
from collections.abc import Callable, Collection
from datetime import timedelta
from functools import wraps
from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone
from django_tasks import task
from django_tasks.base import TASK_MIN_PRIORITY, TaskResultStatus
from django_tasks.signals import task_enqueued, task_finished
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from apps.core.errors import dependency_of
from apps.core.metrics import TASKS

logger = logging.getLogger("apps.core.tasks")

# The first retry waits about this long; each next one twice as long, at most RETRY_MAX_SECONDS.
RETRY_FIRST_SECONDS = 10
RETRY_MAX_SECONDS = 3600


class TemporaryFailure(Exception):
    """A failure worth trying again later: a service that is down, slow or answering 5xx."""


def retry_delay_seconds(attempt: int) -> float:
    """How long to wait after the `attempt`-th failure (1 for the first), give or take a fifth so
    that tasks failing together do not all come back at once."""
    base = min(RETRY_FIRST_SECONDS * 2 ** (attempt - 1), RETRY_MAX_SECONDS)
    return base * random.uniform(0.8, 1.2)  # noqa: S311 (spreading load, not a secret)


def retried_task(
    *, max_attempts: int, pass_attempt: bool = False, **options: Any
) -> Callable[[Callable[..., Any]], Any]:
    """`@task`, plus: when the function raises TemporaryFailure, the task is queued again with the
    same arguments to run after retry_delay_seconds, until it has run `max_attempts` times (then the
    failure is the task's). The function must be a module-level name (the worker finds it by it).
    With `pass_attempt`, the function is called with `attempt=` (1 for the first run), so that its
    last attempt can do something else than fail (apps.webhooks: tell the conversation)."""

    def decorate(function: Callable[..., Any]) -> Any:
        @wraps(function)
        def run(*args: Any, attempt: int = 1, **kwargs: Any) -> Any:
            try:
                if pass_attempt:
                    return function(*args, attempt=attempt, **kwargs)
                return function(*args, **kwargs)
            except Exception as exc:
                # A dependency down (Redis, PostgreSQL) is as temporary as a service down: the
                # production QA pass lost a message's email notifications to a Redis answering
                # nonsense; anything else is a bug, and the task fails at once.
                if not isinstance(exc, TemporaryFailure) and dependency_of(exc) is None:
                    raise
                if attempt >= max_attempts:
                    logger.error("%s failed %d times, giving up: %s", function.__qualname__, attempt, exc)
                    raise
                delay = retry_delay_seconds(attempt)
                logger.warning(
                    "%s failed (attempt %d of %d), trying again in %.0f s: %s",
                    function.__qualname__, attempt, max_attempts, delay, exc,
                )  # fmt: skip
                # Behind every first attempt, as Zulip's retries go to the back of the queue: ahead
                # of them (the ready are taken by priority, then run_after, and a first attempt's
                # is the end of time), a service that times out held up every other delivery (the
                # expensive-request QA pass: a new one waited 432 s behind a slow bot's retries).
                later = the_task.using(
                    run_after=timezone.now() + timedelta(seconds=delay),
                    priority=max(TASK_MIN_PRIORITY, the_task.priority - 1),
                )
                later.enqueue(*args, attempt=attempt + 1, **kwargs)
                # This run's status is SUCCESSFUL (raised, it would be logged as an error with its
                # traceback at each attempt); what it returns says it failed, and why, which the
                # admin's Task Results show (the operator QA pass read five minutes of green rows
                # for mail that was never sent).
                return retried_result(attempt + 1, exc)

        the_task = task(**options)(run)
        return the_task

    return decorate


def retried_result(next_attempt: int, exc: Exception) -> dict[str, Any]:
    """What a run of a retried_task that failed and queued itself again returns."""
    return {"retry": next_attempt, "error": f"{type(exc).__name__}: {exc}"}


def is_retried_result(value: Any) -> bool:
    return isinstance(value, dict) and "retry" in value and set(value) <= {"retry", "error"}


# Queues: outgoing webhooks wait on services of other people's, up to their timeout each, so they
# have a queue (and, by default, a worker: config/gunicorn.py) of their own, as in Zulip; everything
# else (push notifications) is on the default one.
WEBHOOKS_QUEUE = "webhooks"


def batch_worker(worker_id: str, *, queues: list[str] | None = None, exclude: list[str] | None = None) -> Worker:
    """django-tasks-db's worker, set to run every ready task of these queues (all by default, but
    those excluded) and return."""
    return Worker(
        queue_names=queues or ["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id,
        excluded_queue_names=[] if queues else (exclude or []),
    )


# Jobs the worker runs now and then beside its tasks, each every so many seconds: apps add theirs
# with @periodic(seconds) in a module their AppConfig.ready imports. A job must be safe to run in
# several workers at once.
PERIODIC_JOBS: list[tuple[int, Callable[[], Any]]] = []


def periodic(every_seconds: int) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def register(function: Callable[[], Any]) -> Callable[[], Any]:
        PERIODIC_JOBS.append((every_seconds, function))
        return function

    return register


@periodic(60)
def requeue_abandoned() -> int:
    """Tasks left "running" by a worker that died: ready to run again. Returns how many."""
    cutoff = timezone.now() - timedelta(seconds=settings.TASK_ABANDONED_AFTER_SECONDS)
    count = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING, started_at__lt=cutoff).update(
        status=TaskResultStatus.READY, started_at=None
    )
    if count:
        logger.warning("%d task(s) abandoned by a worker that stopped will run again", count)
    return count


def requeue_tasks_of(worker_ids: Collection[str]) -> int:
    """Tasks workers known to have died (their supervisor saw them end: config/task_worker.py) left
    "running": ready again at once, not after TASK_ABANDONED_AFTER_SECONDS (the clients QA pass: a
    bot's answer came ten minutes late). Returns how many."""
    dead = set(worker_ids)
    running = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).only("id", "worker_ids")
    theirs = [task.id for task in running if task.worker_ids and task.worker_ids[-1] in dead]
    count = DBTaskResult.objects.filter(id__in=theirs, status=TaskResultStatus.RUNNING).update(
        status=TaskResultStatus.READY, started_at=None
    )
    if count:
        logger.warning("%d task(s) left running by task workers that stopped (%s) will run again", count, sorted(dead))
    return count


@periodic(3600)
def prune_finished() -> int:
    """Deletes finished tasks kept long enough. Returns how many."""
    now = timezone.now()
    keep_succeeded = timedelta(seconds=settings.TASK_KEEP_SUCCEEDED_SECONDS)
    keep_failed = timedelta(seconds=settings.TASK_KEEP_FAILED_SECONDS)
    succeeded = DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL, finished_at__lt=now - keep_succeeded)
    failed = DBTaskResult.objects.filter(status=TaskResultStatus.FAILED, finished_at__lt=now - keep_failed)
    return succeeded.delete()[0] + failed.delete()[0]


@receiver(task_enqueued)
def count_queued(sender: Any, task_result: Any, **kwargs: Any) -> None:
    """Counted once its transaction commits (a task queued by a change that rolled back never was)."""
    name = task_result.task.module_path
    transaction.on_commit(lambda: TASKS.labels(name, "queued").inc())


@receiver(task_finished)
def count_finished(sender: Any, task_result: Any, **kwargs: Any) -> None:
    """A run ends as "succeeded", "failed", or "retried" (a retried_task that queued itself again)."""
    outcome = "failed"
    if task_result.status == TaskResultStatus.SUCCESSFUL:
        value = task_result.return_value
        outcome = "retried" if is_retried_result(value) else "succeeded"
    TASKS.labels(task_result.task.module_path, outcome).inc()
