"""Start the real server (gunicorn + uvicorn worker, as `make run` does) in a subprocess for a test."""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

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


def start_server(tmp_path: Path, **env_overrides: str) -> ServerProcess:
    """Serve config.asgi on a free port with the test database (unless DATABASE_URL is overridden)."""
    port = free_port()
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
