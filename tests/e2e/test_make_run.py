"""`make run` itself, on a fresh database: it listens before it sets up (migrations, the demo), so a
client calling meanwhile, as during a restart, is answered 503 (to be asked again) rather than refused."""

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time

import pytest
import requests

from tests.server import BASE_DIR, free_port

pytestmark = pytest.mark.e2e


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start_make_run(tmp_path, port: int, log) -> subprocess.Popen:
    """`make run` on a fresh SQLite database in `tmp_path`, in a process group of its own (as a
    terminal's), once its port listens."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "PORT": str(port),
        "EXTERNAL_HOST": f"127.0.0.1:{port}",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'parley.sqlite3'}",
        "REDIS_URL": "",
        "STATIC_ROOT": str(tmp_path / "static"),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "TASK_WORKER": "0",
    }
    server = subprocess.Popen(
        ["make", "--no-print-directory", "-o", ".venv/.installed", "-o", "install", "run"],
        cwd=BASE_DIR,
        env=environment,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not listening(port):
        if server.poll() is not None or time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            pytest.fail(log.read_text())
        time.sleep(0.02)
    return server


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_listens_before_it_sets_up(tmp_path):
    """The resilience QA pass: the set-up ran before gunicorn bound the port, which stayed closed for
    10-14 s on a restart; zulip-terminal's poll gives up after ten refused tries a second apart. Held
    in the listen backlog instead, a request timed out when the set-up took long (the verify QA pass)."""
    port = free_port()
    log = tmp_path / "run.log"
    server = start_make_run(tmp_path, port, log)
    try:
        url = f"http://127.0.0.1:{port}"
        # Answered at once, as the set-up runs: a 503 to be asked again, for a client and a browser.
        starting = requests.get(f"{url}/api/v1/server_settings", timeout=10)
        assert "Created the demo organization" not in log.read_text()  # not made yet
        assert starting.status_code == 503
        assert starting.json()["code"] == "SERVICE_UNAVAILABLE"
        assert int(starting.headers["Retry-After"]) > 0
        page = requests.get(f"{url}/login/", headers={"Accept": "text/html"}, timeout=10)
        assert page.status_code == 503
        assert '<meta http-equiv="refresh"' in page.text
        posted = requests.post(f"{url}/api/v1/fetch_api_key", data={"username": "x" * 5000}, timeout=10)
        assert posted.status_code == 503  # what was sent is read, not reset under the answer
        deadline = time.monotonic() + 120
        while requests.get(f"{url}/api/v1/server_settings", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert "Created the demo organization" in log.read_text()
        assert (tmp_path / "static" / "staticfiles.json").exists()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_stops_when_its_set_up_fails(tmp_path):
    """The set-up made after the port listens still stops the server when it fails: said, and the
    port closed again."""
    port = free_port()
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "PORT": str(port),
        "EXTERNAL_HOST": f"127.0.0.1:{port}",
        "DATABASE_URL": "postgres://parley@127.0.0.1:1/parley",  # nothing listens there
        "REDIS_URL": "",
        "STATIC_ROOT": str(tmp_path / "static"),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "TASK_WORKER": "0",
    }
    result = subprocess.run(
        ["make", "--no-print-directory", "-o", ".venv/.installed", "-o", "install", "run"],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "CommandError: The database cannot be reached" in result.stderr
    assert "serving on" not in result.stderr
    assert not listening(port)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_ctrl_c_during_the_set_up_stops_it_quietly(tmp_path):
    """Ctrl-C (SIGINT to the terminal's process group) while the set-up runs: each of its commands
    printed its KeyboardInterrupt traceback (the operator QA pass). Now the server stops them, says
    so in one line, and the port closes."""
    port = free_port()
    log = tmp_path / "run.log"
    server = start_make_run(tmp_path, port, log)
    try:
        assert requests.get(f"http://127.0.0.1:{port}/api/v1/server_settings", timeout=10).status_code == 503
        time.sleep(0.5)  # the set-up's commands under way
        os.killpg(server.pid, signal.SIGINT)
        server.wait(timeout=60)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
    output = log.read_text()
    assert "Stopped during the set-up (SIGINT)" in output
    assert "Traceback" not in output, output
    assert "KeyboardInterrupt" not in output, output
    assert "Created the demo organization" not in output
    assert not listening(port)
