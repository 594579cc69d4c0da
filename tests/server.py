"""Start the real server (gunicorn + uvicorn worker, as `make run` does) in a subprocess for a test, and
a Redis server of the test's own."""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis
import requests
from django.conf import settings
from django.db import connection

BASE_DIR = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url_of_tests() -> str:
    """DATABASE_URL of the database this test process uses (the test database)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@dataclass
class ServerProcess:
    url: str
    port: int
    process: subprocess.Popen
    log_path: Path
    env: dict[str, str] = field(repr=False)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start_server(tmp_path: Path, *, port: int | None = None, **env_overrides: str) -> ServerProcess:
    """Serve config.asgi on a free port (or `port`: a server coming back where it was) with the test
    database (unless DATABASE_URL is overridden)."""
    port = port or free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "PORT": str(port),
        "EXTERNAL_HOST": f"127.0.0.1:{port}",
        "DATABASE_URL": database_url_of_tests(),
        "REDIS_URL": settings.REDIS_URL,
        "REDIS_KEY_PREFIX": settings.REDIS_KEY_PREFIX,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "LOG_LEVEL": "INFO",
        "WEB_CONCURRENCY": "1",
        # Most tests need no background tasks; a test of them passes TASK_WORKER="1".
        "TASK_WORKER": "0",
        **env_overrides,
    }
    log_path = tmp_path / f"server-{port}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.asgi:application"],
        cwd=BASE_DIR,
        env=env,
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = ServerProcess(f"http://127.0.0.1:{port}", port, process, log_path, env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            if requests.get(f"{server.url}/health/live", timeout=1).status_code == 200:
                return server
        except requests.RequestException:
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"server did not come up:\n{server.log()}")


@dataclass
class RedisServer:
    """A redis-server of a test's own (no persistence), to restart, kill or pause under a server."""

    port: int
    directory: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        log = (self.directory / f"redis-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            [*command, "--dir", str(self.directory)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.02)
            finally:
                client.close()

    def kill(self) -> None:
        """Gone at once, as a crash: the kernel closes its connections."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # in case it was paused
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        self.kill()
        self.start()

    def pause(self) -> None:
        """Hung: connections stay open and nothing answers."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)


def start_redis_server(directory: Path) -> RedisServer:
    server = RedisServer(free_port(), directory)
    server.start()
    return server


def wait_for(condition: Callable[[], object], what: str, *, log: Callable[[], str], timeout: float = 30) -> object:
    """condition()'s first true value, asked every 0.2 s; after `timeout`, fails with `log()`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}\n{log()}")
