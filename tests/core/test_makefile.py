"""The README's `make run` takes its port from the environment, else from .env (where manage.py's
commands read it too), else 8000."""

import os
import shutil
import socket
import subprocess

import pytest

from tests.server import BASE_DIR


def demo_url(directory, **env) -> str:
    """The address `make run` would give the demo (a dry run: nothing is executed)."""
    environment = {key: value for key, value in os.environ.items() if key != "PORT"} | env
    output = subprocess.run(
        ["make", "-n", "run"], cwd=directory, env=environment, capture_output=True, text=True, timeout=60
    ).stdout
    (line,) = [line for line in output.splitlines() if "PARLEY_SET_UP_DEMO=" in line]
    return line.split("PARLEY_SET_UP_DEMO=")[1].split()[0]


@pytest.fixture
def checkout(tmp_path):
    shutil.copy(BASE_DIR / "Makefile", tmp_path / "Makefile")
    (tmp_path / "requirements.txt").touch()  # a prerequisite of the install step (not run)
    return tmp_path


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_port_comes_from_the_environment_then_dotenv_then_8000(checkout):
    assert demo_url(checkout) == "http://127.0.0.1:8000"
    (checkout / ".env").write_text("DATABASE_URL=sqlite:////tmp/x.sqlite3\nPORT=8123\n")
    assert demo_url(checkout) == "http://127.0.0.1:8123"
    assert demo_url(checkout, PORT="9001") == "http://127.0.0.1:9001"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_taken_port_is_said_before_the_set_up(checkout):
    """The newcomer QA pass: a second `make run` set everything up for 12 s, then gunicorn failed
    five times in its own words."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        environment = os.environ | {"PORT": str(port)}
        refused = subprocess.run(
            ["make", "port-free"], cwd=checkout, env=environment, capture_output=True, text=True, timeout=60
        )
    assert refused.returncode != 0
    assert f"Port {port} is taken" in refused.stderr
    assert "PORT=9000 make run" in refused.stderr
    free = subprocess.run(["make", "port-free"], cwd=checkout, env=environment, capture_output=True, timeout=60)
    assert free.returncode == 0


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("port", ["abc", "70000", "0", "\uff18\uff17\uff14\uff11"])  # full-width digits too
def test_a_port_that_is_no_port_is_said_in_a_line(checkout, port):
    """The operator QA pass: `PORT=abc make run` printed a Python traceback."""
    environment = os.environ | {"PORT": port}
    refused = subprocess.run(
        ["make", "port-free"], cwd=checkout, env=environment, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode != 0
    assert f"Configuration error: PORT: must be a port number (1-65535), got '{port}'" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_a_port_only_make_run_knows_is_pointed_out(checkout):
    """The newcomer QA pass: after `PORT=8702 make run`, manage.py's commands printed invitation
    links to port 8000 (they read .env), and nothing said so."""

    def note(**env) -> str:
        environment = {key: value for key, value in os.environ.items() if key not in ("PORT", "EXTERNAL_HOST")} | env
        done = subprocess.run(
            ["make", "port-note"], cwd=checkout, env=environment, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0
        return done.stderr

    assert note() == ""
    said = note(PORT="8702")
    assert "PORT=8702 is not in .env: this server's own links name port 8702, but manage.py's commands" in said
    assert "run later will name port 8000" in said
    (checkout / ".env").write_text("PORT=8702\n")
    assert note(PORT="8702") == ""
    assert "name port 8702" in note(PORT="9000")
    assert note(PORT="9000", EXTERNAL_HOST="chat.example.com") == ""
