"""The task workers a server starts beside itself (config/task_worker.py): both start with the
server, one that exits is started again, and both stop with the server."""

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings
from django_tasks_db.models import DBTaskResult

from apps.core.tasks import retried_task
from tests.server import database_url_of_tests

pytestmark = pytest.mark.e2e


def wait_for(condition, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
    return found


def test_both_task_workers_start_at_once_and_one_that_exits_is_started_again(live_server_factory, transactional_db):
    """Both started before the server's own workers fork (a start racing that fork waited 40 s in
    Popen, the supervisor not knowing its process meanwhile: the QA pass saw one "started" line)."""
    server = live_server_factory(TASK_WORKER="1")
    started = re.compile(r"Task worker \((webhooks|the other tasks)\) started \(pid (\d+)\)")
    pids = wait_for(lambda: dict(started.findall(server.log())) if len(started.findall(server.log())) == 2 else None, 5)
    [first_id] = _arguments(pids["the other tasks"], "--worker-id")
    os.kill(int(pids["the other tasks"]), signal.SIGKILL)
    # As it ended (the fault QA pass: "exited (status 0)"), when the master did not take its status first.
    ended = re.compile(r"Task worker \(the other tasks\) (was killed by SIGKILL|ended \(the server's master collected)")
    wait_for(lambda: ended.search(server.log()))
    assert "exited (status 0)" not in server.log()
    again = wait_for(lambda: [pid for name, pid in started.findall(server.log()) if name == "the other tasks"][1:])
    assert again[0] != pids["the other tasks"]
    # Told which worker it follows: what that one left running runs again at once (the clients QA pass).
    assert _arguments(again[0], "--requeue-tasks-of") == [first_id]
    [second_id] = _arguments(again[0], "--worker-id")
    assert second_id != first_id
    # And the ones before, should it die before it made theirs ready (the verify QA pass).
    os.kill(int(again[0]), signal.SIGKILL)
    third = wait_for(lambda: [pid for name, pid in started.findall(server.log()) if name == "the other tasks"][2:])
    assert _arguments(third[0], "--requeue-tasks-of") == [first_id, second_id]


def test_webhook_workers_sets_how_many_deliver_outgoing_webhooks(live_server_factory, transactional_db):
    """The bots QA pass: one slow bot service held the single webhooks worker, delaying every other
    bot's replies by up to the timeout, and `make run` had no setting for more."""
    server = live_server_factory(TASK_WORKER="1", WEBHOOK_WORKERS="3")
    started = re.compile(r"Task worker \(([^)]+)\) started \(pid (\d+)\)")
    pids = wait_for(lambda: dict(started.findall(server.log())) if len(started.findall(server.log())) == 4 else None, 5)
    assert set(pids) == {"webhooks 1", "webhooks 2", "webhooks 3", "the other tasks"}
    for name, pid in pids.items():
        queue = ["--exclude-queue"] if name == "the other tasks" else ["--queue"]
        assert [option for option in ("--queue", "--exclude-queue") if _arguments(pid, option)] == queue
    server.stop()


def _arguments(pid: str, name: str) -> list[str]:
    """The values of a process's command-line option."""
    arguments = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    return [arguments[i + 1] for i, argument in enumerate(arguments[:-1]) if argument == name]


def test_stopping_the_server_stops_its_task_workers_without_restarting_them(live_server_factory, transactional_db):
    """Ctrl+C reaches the whole process group: the task workers were told too, exited at once,
    and were reported as exited and started again while the server shut down (the newcomer QA pass)."""
    server = live_server_factory(TASK_WORKER="1")
    started = re.compile(r"Task worker \((?:webhooks|the other tasks)\) started \(pid (\d+)\)")
    pids = wait_for(lambda: started.findall(server.log()) if len(started.findall(server.log())) == 2 else None, 5)
    os.killpg(server.process.pid, signal.SIGINT)
    server.process.wait(timeout=30)
    log = server.log()
    assert "exited" not in log
    assert "killed" not in log
    assert "starting it again" not in log
    for pid in pids:
        wait_for(lambda pid=pid: not _alive(pid), 10)


def _alive(pid: str) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_a_master_killed_outright_leaves_no_process_behind(live_server_factory, transactional_db):
    """kill -9 of the master (the OOM killer): its task workers stopped, but its web worker served on,
    unsupervised and without them, holding the port against a new server (the clients QA pass)."""
    server = live_server_factory(TASK_WORKER="1")
    started = re.compile(r"Task worker \((?:webhooks|the other tasks)\) started")
    wait_for(lambda: len(started.findall(server.log())) == 2, 5)
    master = server.process.pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    assert len(children) == 3  # its web worker and two task workers
    os.kill(master, signal.SIGKILL)
    server.process.wait(timeout=10)
    for pid in children:
        wait_for(lambda pid=pid: not _alive(pid), 20)
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.url}/health/live", timeout=5)
    assert f"The server's master process (pid {master}) is gone: this worker stops" in server.log()


@retried_task(max_attempts=1)
def nap(seconds: float) -> None:
    time.sleep(seconds)


def test_a_task_worker_whose_server_is_killed_stops_after_the_task_it_runs(transactional_db, tmp_path):
    """The verify QA pass: its server killed outright, a task worker went on through every task of
    its queue (a slow bot's deliveries, each up to its timeout) before it looked for the server."""
    for _ in range(3):
        nap.enqueue(4)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": database_url_of_tests(),
        "REDIS_URL": settings.REDIS_URL,
        "REDIS_KEY_PREFIX": settings.REDIS_KEY_PREFIX,
        "SECRET_KEY": secrets.token_urlsafe(50),
    }
    # A server of its own (a shell that waits for it), killed as the OOM killer kills one.
    server = subprocess.Popen(
        ["sh", "-c", f'"{sys.executable}" manage.py run_tasks --parent-pid $$ & wait'],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=(tmp_path / "worker.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(lambda: DBTaskResult.objects.filter(status="RUNNING").exists(), 60)
        [worker] = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
        wait_for(lambda: not _alive(worker), 7)  # its task (4 s), not the three (12 s)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
    statuses = sorted(DBTaskResult.objects.values_list("status", flat=True))
    assert statuses == ["READY", "READY", "SUCCESSFUL"]
    assert "the server that started it is gone; stopping" in (tmp_path / "worker.log").read_text()
