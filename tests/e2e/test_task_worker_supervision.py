"""The task workers a server starts beside itself (config/task_worker.py): both start with the
server, one that exits is started again, and both stop with the server."""

import os
import re
import signal
import time
from pathlib import Path

import pytest
import requests

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
    first_id = _argument(pids["the other tasks"], "--worker-id")
    os.kill(int(pids["the other tasks"]), signal.SIGKILL)
    # As it ended (the fault QA pass: "exited (status 0)"), when the master did not take its status first.
    ended = re.compile(r"Task worker \(the other tasks\) (was killed by SIGKILL|ended \(the server's master collected)")
    wait_for(lambda: ended.search(server.log()))
    assert "exited (status 0)" not in server.log()
    again = wait_for(lambda: [pid for name, pid in started.findall(server.log()) if name == "the other tasks"][1:])
    assert again[0] != pids["the other tasks"]
    # Told which worker it follows: what that one left running runs again at once (the clients QA pass).
    assert _argument(again[0], "--requeue-tasks-of") == first_id
    assert _argument(again[0], "--worker-id") not in (first_id, None)


def _argument(pid: str, name: str) -> str | None:
    """The value of a process's command-line option."""
    arguments = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    return arguments[arguments.index(name) + 1] if name in arguments else None


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
