"""What the benchmarks' runners share about the processes they start: a free port to serve on, and
stopping a server with everything it started."""

import contextlib
import os
import signal
import socket
import subprocess

HOST = "127.0.0.1"


def free_port() -> int:
    """A port nothing listens on at HOST (for a server the benchmark starts, or to find refused)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def stop_process_group(process: subprocess.Popen) -> None:
    """Stop a server started in a process group of its own (its workers too, whatever their state):
    SIGTERM, 20 s to finish, then SIGKILL."""
    os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
