"""Running queued background tasks in a test, in this process and inside the test's transaction:
each ready task is claimed and run by the task worker's own code (django-tasks-db's Worker.run_task),
as `manage.py run_tasks` does, without its polling loop (which closes database connections between
tasks, and so cannot run inside a test's transaction; tests/core/test_tasks.py runs that loop)."""

from django_tasks_db.models import DBTaskResult

from apps.core.tasks import batch_worker

_worker = batch_worker("tests")


def run_ready_tasks(*, limit: int = 1000) -> int:
    """Runs the tasks that are ready (and those they queue that are ready at once); returns how many."""
    ran = 0
    while ran < limit:
        row = DBTaskResult.objects.ready().first()
        if row is None:
            return ran
        row.claim(_worker.worker_id)
        _worker.run_task(row)
        ran += 1
    raise AssertionError(f"more than {limit} tasks: one keeps queueing another")
