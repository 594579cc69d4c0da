"""The background task worker (`manage.py run_tasks`) as a child of the gunicorn master, so that the
one command that starts the server starts its worker too (config/gunicorn.py): started when the
server is ready, started again if it exits (after a pause that grows while it keeps exiting), and
stopped with the server. It stops by itself if the master is killed outright.

Operators who run workers apart (several machines, a supervisor of their own) set TASK_WORKER=0
and run `manage.py run_tasks` as a service of its own; any number of workers share the work.
"""

import collections
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

# A worker that ran this long before exiting was not crash-looping: the pause starts over.
HEALTHY_AFTER_SECONDS = 60
MAX_PAUSE_SECONDS = 60
# A worker started again makes ready the tasks left running by this many workers before it.
REQUEUE_OF_LAST = 3


class TaskWorkerProcess:
    """One `manage.py run_tasks` with these arguments (which queues), supervised."""

    def __init__(self, base_dir: Path, log, name: str, arguments: list[str]) -> None:
        self.base_dir = base_dir
        self.log = log
        self.name = name
        self.arguments = arguments
        self.process: subprocess.Popen | None = None
        # The ids of the last workers started: the one running, and those before it whose tasks left
        # running may not have been made ready again (a worker may die before it gets to it).
        self.worker_ids: collections.deque[str] = collections.deque(maxlen=REQUEUE_OF_LAST)
        self._started = 0.0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="task-worker", daemon=True)

    def start(self) -> None:
        """Starts the worker, then its supervision. The first start is made here, before gunicorn
        forks its own workers: a fork while another thread is in Popen keeps Popen's pipe open in
        the forked worker, and Popen then waits (40 s was seen) before it returns."""
        self._spawn()
        self._thread.start()

    def _spawn(self) -> None:
        # Named by us, so that the next ones, started after it ended, make the tasks it left running
        # ready again at once (apps.core.tasks.requeue_tasks_of; the verify QA pass: a second one
        # killed before it did left them to TASK_ABANDONED_AFTER_SECONDS).
        requeue = [argument for dead in self.worker_ids for argument in ("--requeue-tasks-of", dead)]
        self.worker_ids.append(secrets.token_hex(16))
        command = [
            *(sys.executable, "manage.py", "run_tasks", "--parent-pid", str(os.getpid())),
            *("--worker-id", self.worker_ids[-1], *requeue, *self.arguments),
        ]
        self._started = time.monotonic()
        # In a session of its own: Ctrl+C in the terminal (SIGINT to the whole process group) or a
        # group's TERM stops the server, which stops its workers (on_exit), rather than reaching
        # them at once, to be reported as an exit and started again while the server shuts down (the
        # newcomer QA pass). A master that is killed outright is noticed by the worker itself.
        self.process = subprocess.Popen(command, cwd=self.base_dir, start_new_session=True)  # noqa: S603 (our own command)
        self.log.info("Task worker (%s) started (pid %d)", self.name, self.process.pid)

    def _supervise(self) -> None:
        pause = 1.0
        while True:
            how = self._wait()
            if self._stopping.is_set():
                return
            if time.monotonic() - self._started > HEALTHY_AFTER_SECONDS:
                pause = 1.0
            self.log.error("Task worker (%s) %s; starting it again in %.0f s", self.name, how, pause)
            if self._stopping.wait(pause):
                return
            pause = min(pause * 2, MAX_PAUSE_SECONDS)
            self._spawn()

    def _wait(self) -> str:
        """Waits for the worker to end; how it ended. Not Popen.wait(): gunicorn's master collects
        the status of every child it has (its SIGCHLD handler waits for any), and Popen then says
        0 (the fault QA pass: a worker killed with SIGKILL was reported as exiting normally)."""
        try:
            _, status = os.waitpid(self.process.pid, 0)
        except ChildProcessError:
            return "ended (the server's master collected its status)"
        code = os.waitstatus_to_exitcode(status)
        self.process.returncode = code
        if code < 0:
            return f"was killed by {signal.Signals(-code).name}"
        return f"exited (status {code})"

    def stop(self) -> None:
        """Asks the worker to stop: it finishes the task it is running (wait_stopped waits for it)."""
        self._stopping.set()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()

    def wait_stopped(self, timeout: float) -> None:
        """Waits for the worker asked to stop, for at most `timeout` seconds, then kills it."""
        process = self.process
        if process is None:
            return
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
