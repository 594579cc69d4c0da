"""The task workers a server starts beside itself (config/task_worker.py): both start with the
server, and one that exits is started again."""

import os
import re
import signal
import time

import pytest

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
    os.kill(int(pids["the other tasks"]), signal.SIGKILL)
    wait_for(lambda: "Task worker (the other tasks) exited" in server.log())
    again = wait_for(lambda: [pid for name, pid in started.findall(server.log()) if name == "the other tasks"][1:])
    assert again[0] != pids["the other tasks"]
