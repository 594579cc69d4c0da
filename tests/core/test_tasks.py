"""Background tasks (apps/core/tasks.py and `manage.py run_tasks`): retries with backoff, tasks a
dead worker abandoned, pruning, and the worker command running what is queued."""

import threading
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
import redis.exceptions
from django.core.management import CommandError, call_command
from django.db import OperationalError, ProgrammingError, transaction
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.core.management.commands import run_tasks
from apps.core.tasks import (
    PERIODIC_JOBS,
    TemporaryFailure,
    prune_finished,
    requeue_abandoned,
    retried_task,
    retry_delay_seconds,
)
from tests.tasks import run_ready_tasks

CALLS: list[tuple] = []


@retried_task(max_attempts=3)
def flaky(name: str, failures: int) -> str:
    CALLS.append((name, failures))
    if sum(1 for call in CALLS if call[0] == name) <= failures:
        raise TemporaryFailure(f"{name} is down")
    return name


@retried_task(max_attempts=3)
def needs_redis(failures: int) -> str:
    CALLS.append(("redis", failures))
    if len(CALLS) <= failures:
        raise redis.exceptions.InvalidResponse("Protocol error, got '<' as reply type byte")
    return "done"


@retried_task(max_attempts=3)
def broken() -> None:
    raise ValueError("a bug")


@pytest.fixture(autouse=True)
def _no_calls():
    CALLS.clear()


def make_due() -> None:
    DBTaskResult.objects.filter(status="READY").update(run_after=timezone.now())


def test_a_temporary_failure_runs_again_later_with_the_same_arguments(db):
    flaky.enqueue("svc", 2)
    run_ready_tasks()
    [retry] = DBTaskResult.objects.filter(status="READY")
    assert retry.args_kwargs == {"args": ["svc", 2], "kwargs": {"attempt": 2}}
    assert retry.run_after > timezone.now() + timedelta(seconds=7)
    assert run_ready_tasks() == 0  # not yet
    make_due()
    run_ready_tasks()
    make_due()
    run_ready_tasks()
    assert CALLS == [("svc", 2)] * 3
    assert DBTaskResult.objects.filter(status="SUCCESSFUL").count() == 3
    assert DBTaskResult.objects.order_by("-enqueued_at").first().return_value == "svc"


def test_a_retry_runs_behind_every_first_attempt(db):
    """A retry that is due waits for the tasks queued meanwhile, as Zulip's go to the back of the
    queue (the expensive-request QA pass: ahead of them, a slow bot's retries held up every other
    bot's deliveries for minutes)."""
    flaky.enqueue("slow", 5)
    run_ready_tasks()
    DBTaskResult.objects.filter(status="READY").update(run_after=timezone.now())  # the retry is due
    flaky.enqueue("fresh", 0)
    assert run_ready_tasks() == 2
    assert CALLS == [("slow", 5), ("fresh", 0), ("slow", 5)]


def test_after_the_last_attempt_the_task_fails(db):
    flaky.enqueue("svc", 5)
    for _ in range(3):
        make_due()
        run_ready_tasks()
    assert len(CALLS) == 3
    assert not DBTaskResult.objects.filter(status="READY").exists()
    assert "svc is down" in DBTaskResult.objects.get(status="FAILED").traceback


def test_a_dependency_that_cannot_be_used_is_a_temporary_failure(db):
    """The production QA pass: a message's email notifications were lost to a Redis answering
    nonsense (only TemporaryFailure was retried)."""
    needs_redis.enqueue(1)
    run_ready_tasks()
    assert DBTaskResult.objects.get(status="READY").args_kwargs == {"args": [1], "kwargs": {"attempt": 2}}
    make_due()
    run_ready_tasks()
    assert DBTaskResult.objects.order_by("-enqueued_at").first().return_value == "done"


def test_other_exceptions_fail_at_once(db):
    broken.enqueue()
    run_ready_tasks()
    assert DBTaskResult.objects.get().status == "FAILED"


def test_backoff_doubles_up_to_an_hour():
    assert 8 <= retry_delay_seconds(1) <= 12
    assert 16 <= retry_delay_seconds(2) <= 24
    assert 2880 <= retry_delay_seconds(20) <= 4320


def test_tasks_abandoned_by_a_dead_worker_run_again(db, settings):
    flaky.enqueue("svc", 0)
    row = DBTaskResult.objects.get()
    row.claim("a-worker-that-died")
    assert requeue_abandoned() == 0  # it may still be running
    DBTaskResult.objects.update(
        started_at=timezone.now() - timedelta(seconds=settings.TASK_ABANDONED_AFTER_SECONDS + 1)
    )
    assert requeue_abandoned() == 1
    assert run_ready_tasks() == 1
    assert CALLS == [("svc", 0)]


@pytest.mark.django_db(transaction=True)
def test_a_worker_started_after_one_that_died_runs_its_tasks_again_at_once():
    """The server starts a task worker again when one ends, naming the one that ended: what that one
    left running is ready again at once (the clients QA pass: a webhook's answer ten minutes late, the
    time after which any running task counts as abandoned); another worker's running task is left."""
    flaky.enqueue("died with it", 0)
    DBTaskResult.objects.get().claim("a-worker-that-died")
    flaky.enqueue("still running elsewhere", 0)
    others = DBTaskResult.objects.get(status="READY")
    others.claim("a-worker-at-work")
    call_command("run_tasks", "--batch", "--requeue-tasks-of", "a-worker-that-died")
    assert CALLS == [("died with it", 0)]
    assert DBTaskResult.objects.get(id=others.id).status == "RUNNING"


def test_finished_tasks_are_pruned_after_their_time(db, settings):
    flaky.enqueue("svc", 0)
    broken.enqueue()
    run_ready_tasks()
    assert prune_finished() == 0
    DBTaskResult.objects.update(
        finished_at=timezone.now() - timedelta(seconds=settings.TASK_KEEP_SUCCEEDED_SECONDS + 1)
    )
    assert prune_finished() == 1  # the successful one; the failure is kept longer
    assert DBTaskResult.objects.get().status == "FAILED"


@pytest.mark.django_db(transaction=True)
def test_the_worker_command_runs_what_was_committed():
    with transaction.atomic():
        flaky.enqueue("committed", 0)
    try:
        with transaction.atomic():
            flaky.enqueue("rolled back", 0)
            raise RuntimeError
    except RuntimeError:
        pass
    call_command("run_tasks", "--batch")
    assert CALLS == [("committed", 0)]
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"


@retried_task(max_attempts=1, queue_name="webhooks")
def on_the_webhooks_queue(name: str) -> str:
    CALLS.append((name, 0))
    return name


def test_a_queue_that_does_not_exist_is_refused():
    """The operator QA pass: a mistyped queue ran nothing, and said nothing."""
    with pytest.raises(CommandError, match=r"^No such queue: hooks \(the queues: default, webhooks\)\.$"):
        call_command("run_tasks", "--batch", "--queue", "hooks")


@pytest.mark.django_db(transaction=True)
def test_workers_take_their_own_queues():
    """The server runs one worker for outgoing webhooks and one for the rest (config/gunicorn.py)."""
    flaky.enqueue("default queue", 0)
    on_the_webhooks_queue.enqueue("webhooks queue")
    call_command("run_tasks", "--batch", "--exclude-queue", "webhooks")
    assert CALLS == [("default queue", 0)]
    call_command("run_tasks", "--batch", "--queue", "webhooks")
    assert CALLS == [("default queue", 0), ("webhooks queue", 0)]


def test_periodic_jobs_run_when_due_and_a_failure_does_not_stop_the_others(monkeypatch, caplog):
    calls = []

    def failing():
        calls.append("failing")
        raise ValueError("bad data")

    def fine():
        calls.append("fine")

    def database_gone():
        raise OperationalError("connection refused")

    monkeypatch.setattr(run_tasks, "PERIODIC_JOBS", [(3600, failing), (3600, fine)])
    next_runs = [0.0, 0.0]
    run_tasks.run_due_jobs(next_runs)
    assert calls == ["failing", "fine"]
    assert "the periodic job failing failed" in caplog.text
    run_tasks.run_due_jobs(next_runs)  # not due again for an hour
    assert calls == ["failing", "fine"]
    # The database gone: the round stops (the worker waits it out) and the job is due at once after.
    monkeypatch.setattr(run_tasks, "PERIODIC_JOBS", [(3600, database_gone)])
    next_runs = [0.0]
    with pytest.raises(OperationalError):
        run_tasks.run_due_jobs(next_runs)
    assert next_runs == [0.0]


def test_the_worker_waits_out_a_database_outage_in_short_steps(monkeypatch, caplog):
    """Waits doubling up to OUTAGE_MAX_WAIT_SECONDS (tasks queued during the outage wait no longer
    than that after the database returns), one log line each, and a line when it is back."""
    outage = OperationalError('connection failed: Connection refused\n\tIs the server running on "db"?')

    class Worker:
        running = True
        rounds = 0

        def run(self):
            self.rounds += 1
            if self.rounds <= 6:
                raise outage
            self.running = False

    waits = []
    worker_thread, real_sleep = threading.get_ident(), time.sleep

    def sleep(seconds: float) -> None:  # the worker's waits; other threads' (a watch's) go on as they were
        if threading.get_ident() == worker_thread:
            waits.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(run_tasks, "PERIODIC_JOBS", [])
    monkeypatch.setattr(run_tasks.time, "sleep", sleep)
    # No database here: a connection an earlier test of this process left open is not to be checked.
    monkeypatch.setattr(run_tasks, "connections", SimpleNamespace(all=list))
    monkeypatch.setattr(run_tasks, "close_old_connections", lambda: None)
    caplog.set_level("INFO", logger="apps.core.tasks")
    run_tasks.run_forever(Worker())
    assert waits[:6] == [1, 2, 4, 5, 5, 5]
    refusals = [r.getMessage() for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(refusals) == 6
    assert refusals[0] == (
        "Task worker: the database cannot be reached (connection failed: Connection refused Is the server running"
        ' on "db"?); trying again in 1 s'
    )
    assert "Task worker: the database is back" in caplog.text


def test_the_worker_waits_for_migrations_the_database_lacks(monkeypatch, caplog):
    """The operator QA pass: started before `migrate` ran, each periodic job logged a traceback every
    5 s (1,783 lines in 40 s); it waits as for an outage, saying what to run."""
    missing = ProgrammingError('relation "scheduled_messages_scheduledmessage" does not exist')
    jobs_run = []

    def job():
        jobs_run.append(1)
        if len(jobs_run) <= 3:
            raise missing

    class Worker:
        running = True

        def run(self):
            if len(jobs_run) > 3:
                self.running = False

    waits = []
    monkeypatch.setattr(run_tasks, "PERIODIC_JOBS", [(5, job)])
    monkeypatch.setattr(run_tasks, "migrations_missing_for", lambda exc: 2 if exc is missing else 0)
    monkeypatch.setattr(run_tasks.time, "sleep", waits.append)
    monkeypatch.setattr(run_tasks, "connections", SimpleNamespace(all=list))
    monkeypatch.setattr(run_tasks, "close_old_connections", lambda: None)
    caplog.set_level("INFO", logger="apps.core.tasks")
    run_tasks.run_forever(Worker())
    assert waits[:3] == [1, 2, 4]  # the job tried again each time (not at its next period)
    said = [r.getMessage() for r in caplog.records if r.name == "apps.core.tasks"]
    lacking = "Task worker: the database lacks 2 migration(s) of this version (run manage.py migrate); trying again in"
    assert [line.startswith(lacking) for line in said[:3]] == [True] * 3
    assert "Traceback" not in caplog.text
    assert not any(r.exc_info for r in caplog.records)
    assert "Task worker: the database is back" in said


def test_the_apps_periodic_jobs_are_registered():
    jobs = {job.__name__ for _, job in PERIODIC_JOBS}
    assert {"requeue_abandoned", "prune_finished", "promote_new_full_members"} <= jobs


def test_the_admin_says_a_retried_run_failed_and_why(db, owner):
    """A run that failed and queued itself again is SUCCESSFUL to Django; the Task Results page says
    it failed (the operator QA pass: five minutes of green rows for mail that was never sent)."""
    flaky.enqueue("svc", 1)
    broken.enqueue()
    run_ready_tasks()
    make_due()
    run_ready_tasks()
    owner.is_staff = owner.is_superuser = True
    owner.save()
    client = Client()
    client.force_login(owner)
    page = client.get("/admin/django_tasks_database/dbtaskresult/").content.decode()
    assert "failed (TemporaryFailure: svc is down); attempt 2 queued" in page
    assert "failed (ValueError): see its traceback" in page
    assert page.count('<td class="field-outcome">done</td>') == 1  # the second run of flaky

    # Listed by outcome: the retried run's failure is a failure; each result's page says its own.
    failed = client.get("/admin/django_tasks_database/dbtaskresult/?outcome=failed").content.decode()
    assert failed.count('<td class="field-outcome">failed') == 2
    assert 'class="field-outcome">done' not in failed
    done = client.get("/admin/django_tasks_database/dbtaskresult/?outcome=done").content.decode()
    assert done.count('<td class="field-outcome">') == 1
    retried = DBTaskResult.objects.get(task_path__endswith="flaky", return_value__has_key="retry")
    detail = client.get(f"/admin/django_tasks_database/dbtaskresult/{retried.pk}/change/").content.decode()
    assert "failed (TemporaryFailure: svc is down); attempt 2 queued" in detail
