"""Dependencies of our own to break: a redis-server and a PostgreSQL cluster started for one test,
never the shared ones, stopped, paused and started again on the same port."""

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis

from tests.server import BASE_DIR, free_port


def wait_until(check, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout} s")
        time.sleep(0.05)


class RedisServer:
    """`redis-server` on a free port, without persistence: a restart loses every key."""

    def __init__(self, directory: Path) -> None:
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.skip("redis-server is not installed")
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        options = ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory)]
        self.process = subprocess.Popen(
            [self.binary, *options, "--save", "", "--appendonly", "no", "--daemonize", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, "redis-server answering")

    def answers(self) -> bool:
        try:
            return redis.Redis(port=self.port, socket_timeout=0.5).ping()
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            self.process.terminate()
            self.process.wait(timeout=10)

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)


def postgres_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


class PostgresCluster:
    """A throwaway PostgreSQL cluster (initdb into a temporary directory) on a free port, with one
    database migrated for Parley. As root, the cluster belongs to (and runs as) `postgres`."""

    def __init__(self) -> None:
        self.initdb, self.pg_ctl = postgres_binary("initdb"), postgres_binary("pg_ctl")
        if self.initdb is None or self.pg_ctl is None:
            pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
        self.as_owner: list[str] = []
        if os.geteuid() == 0 and shutil.which("runuser") is None:
            pytest.skip("runuser is needed to run PostgreSQL as root")
        self.port = free_port()
        # Not under pytest's temporary directory, which only root may enter.
        self.directory = Path(tempfile.mkdtemp(prefix="parley-pg-"))
        self.data = self.directory / "data"
        if os.geteuid() == 0:
            self.as_owner = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.directory, "postgres")
        self.run(self.initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/parley"

    def run(self, *command: str) -> None:
        subprocess.run([*self.as_owner, *command], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off"
        self.run(self.pg_ctl, "-D", str(self.data), "-l", str(self.directory / "log"), "-o", options, "-w", "start")

    def stop(self) -> None:
        self.run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "stop")

    def freeze(self, sig: int = signal.SIGSTOP) -> None:
        """Stop (SIGSTOP) or resume (SIGCONT) the server and its backends: its host still answers
        TCP, the queries wait."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(postmaster)], capture_output=True, text=True)
        for pid in [postmaster, *map(int, children.stdout.split())]:
            os.kill(pid, sig)

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.freeze(signal.SIGCONT)
            self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def create_database(self) -> None:
        """The database `parley`, migrated."""
        import psycopg

        with psycopg.connect(f"postgres://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as db:
            db.execute("CREATE DATABASE parley")
        manage("migrate", "--noinput", DATABASE_URL=self.url)


def manage(*args: str, **env: str) -> str:
    """Run manage.py with these settings; its standard output."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.base", "REDIS_URL": "", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout
