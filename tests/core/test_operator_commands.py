"""What operator commands write where: their output (one JSON object with --json) on stdout, logs
and errors on stderr; a database or Redis that is down is one line and exit status 1, with
nothing changed. Real processes (`manage.py`), since where a log line goes is decided at start-up."""

import json
import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.subscriptions.models import Stream
from apps.users.actions import do_regenerate_api_key
from apps.users.models import User
from tests.server import BASE_DIR, database_url_of_tests

CLOSED_PORT_REDIS = "redis://127.0.0.1:1/0"
CHANGING_COMMANDS = [
    ("rotate_api_key", "member@example.com"),
    ("create_stream", "new", "--realm", ""),
    ("create_user", "--realm", "", "--email", "new@example.com", "--full-name", "New"),
    ("change_user_role", "member@example.com", "moderator"),
    ("deactivate_user", "member@example.com", "--for-real"),
    ("create_realm", "--string-id", "new", "--name", "New", "--owner-email", "o@new.example", "--owner-full-name", "O"),
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
def test_rotate_api_key_with_redis_down_is_one_line_on_stderr(member):
    run = manage("rotate_api_key", member.delivery_email, "--json", REDIS_URL=CLOSED_PORT_REDIS)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == (
        "CommandError: Redis (REDIS_URL) cannot be reached: Error 111 connecting to 127.0.0.1:1. "
        "Connection refused. Nothing was changed.\n"
    )
    assert User.objects.get(id=member.id).api_key == member.api_key


@pytest.mark.django_db(transaction=True)
def test_rotate_api_key_json_is_exactly_one_object_on_stdout(member, settings):
    run = manage("rotate_api_key", member.delivery_email, "--json", REDIS_URL=settings.REDIS_URL, LOG_LEVEL="DEBUG")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)  # one object: anything after it is "Extra data"
    assert out["api_key"] == User.objects.get(id=member.id).api_key != member.api_key


@pytest.mark.django_db(transaction=True)
def test_a_database_that_is_down_is_one_line_on_stderr(db):
    run = manage("list_realms", "--json", DATABASE_URL="postgres://parley@127.0.0.1:1/parley")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith("CommandError: The database cannot be reached: ")
    assert len(run.stderr.splitlines()) == 1


@pytest.mark.parametrize("args", CHANGING_COMMANDS, ids=lambda args: args[0])
def test_commands_that_change_something_change_nothing_when_redis_is_down(member, redis_down, args):
    before = (list(User.objects.order_by("id").values()), list(Stream.objects.values()))
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=StringIO())
    assert str(error.value).startswith("Redis (REDIS_URL) cannot be reached: ")
    assert str(error.value).endswith(". Nothing was changed.")
    assert (list(User.objects.order_by("id").values()), list(Stream.objects.values())) == before


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
