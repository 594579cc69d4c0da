"""What operator commands write where: their output (one JSON object with --json) on stdout, logs
and errors on stderr; a database that is down is one line and exit status 1; a Redis that is down
does not stop a change (one log line says what could not be told). Real processes (`manage.py`),
since where a log line goes is decided at start-up."""

import json
import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command

from apps.users.actions.user_settings import do_regenerate_api_key
from apps.users.models import User
from tests.server import BASE_DIR, database_url_of_tests

CLOSED_PORT_REDIS = "redis://127.0.0.1:1/0"
CHANGING_COMMANDS = [
    ("rotate_api_key", "member@example.com"),
    ("create_stream", "new", "--realm", ""),
    ("create_user", "--realm", "", "--email", "new@example.com", "--full-name", "New"),
    ("change_user_role", "member@example.com", "moderator"),
    ("deactivate_user", "member@example.com", "--for-real"),
    ("create_realm", "--string-id", "new", "--name", "New", "--owner-email", "o@new.ex", "--owner-full-name", "Ol"),
]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": database_url_of_tests(),
        "REDIS_URL": "",
        **env,
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_logs_go_to_stderr(db):
    run = manage(
        "shell", "--no-imports", "-c", "import logging; logging.getLogger('apps').error('a log line'); print('output')"
    )
    assert run.stdout == "output\n"
    assert "ERROR [-] apps: a log line" in run.stderr


@pytest.mark.django_db(transaction=True)
def test_rotate_api_key_with_redis_down_rotates_and_logs_one_line_on_stderr(member):
    # The key is changed (an operator must be able to rotate a leaked key during an outage): the
    # servers' cached credentials go when their notification listeners reconnect to Redis.
    run = manage("rotate_api_key", member.delivery_email, "--json", REDIS_URL=CLOSED_PORT_REDIS)
    assert run.returncode == 0, run.stderr
    new_key = User.objects.get(id=member.id).api_key
    assert new_key != member.api_key
    assert json.loads(run.stdout)["api_key"] == new_key
    assert "Traceback" not in run.stderr
    [line] = run.stderr.splitlines()
    assert f"could not drop cached credentials of users [{member.id}], organizations []: ConnectionError" in line


@pytest.mark.django_db(transaction=True)
def test_rotate_api_key_json_is_exactly_one_object_on_stdout(member, settings):
    run = manage("rotate_api_key", member.delivery_email, "--json", REDIS_URL=settings.REDIS_URL, LOG_LEVEL="DEBUG")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)  # one object: anything after it is "Extra data"
    assert out["api_key"] == User.objects.get(id=member.id).api_key != member.api_key


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("args", [("list_realms", "--json"), ("migrate",)], ids=lambda args: args[0])
def test_a_database_that_is_down_is_one_line_on_stderr(db, args):
    """migrate too, the first command of an install and of an upgrade (the operator QA pass: 93 lines
    of traceback)."""
    run = manage(*args, DATABASE_URL="postgres://parley@127.0.0.1:1/parley")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith("CommandError: The database cannot be reached: ")
    assert len(run.stderr.splitlines()) == 1


def test_a_database_never_migrated_is_named_in_the_error(tmp_path):
    """A command run without the server's DATABASE_URL opens an empty SQLite file: the error says
    which database it opened, not that the database cannot be reached."""
    empty = tmp_path / "empty.sqlite3"
    run = manage("list_realms", DATABASE_URL=f"sqlite:///{empty}")
    assert run.returncode == 1
    assert run.stderr.startswith(f"CommandError: The database {empty} has no tables (no such table: realms_realm)")
    assert "DATABASE_URL" in run.stderr
    assert len(run.stderr.splitlines()) == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("args", CHANGING_COMMANDS, ids=lambda args: args[0])
def test_commands_that_change_something_work_while_redis_is_down(member, args):
    # Their events wait in the outbox for a server's sweep; what could not be told is logged.
    run = manage(*args, REDIS_URL=CLOSED_PORT_REDIS)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "ERROR" not in run.stdout


def test_reading_commands_and_dry_runs_do_not_need_redis(member, redis_down):
    out = StringIO()
    call_command("deactivate_user", member.delivery_email, stdout=out)
    assert "Dry run: nothing changed." in out.getvalue()
    out = StringIO()
    call_command("list_realms", "--json", stdout=out)
    assert [row["string_id"] for row in json.loads(out.getvalue())["realms"]] == [""]


def test_a_change_the_servers_cannot_be_told_of_is_one_log_line(
    member, redis_down, caplog, django_capture_on_commit_callbacks
):
    # Redis went down after the command's check (or under an API request): the change is stored,
    # the log says what could not be done, without a traceback (the server is not broken).
    with django_capture_on_commit_callbacks(execute=True):
        do_regenerate_api_key(member, acting_user=None)
    [record] = [r for r in caplog.records if r.name == "apps.events.publish"]
    assert record.exc_info is None
    assert record.getMessage().startswith(
        f"could not drop cached credentials of users [{member.id}], organizations []: ConnectionError: Error 111"
    )
