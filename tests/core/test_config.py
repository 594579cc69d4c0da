"""Settings are validated when the process starts; logs can be JSON with the request id."""

import json
import logging
import os
import subprocess
import sys

import pytest
from django.conf import settings

from apps.core.logging import JsonFormatter, RequestIdFilter, current_request_id
from tests.server import BASE_DIR


def read_server_settings(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """config/gunicorn.py read as the server reads it at start, with the metrics in `tmp_path`
    (which the settings empty)."""
    return subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('config/gunicorn.py')"],
        cwd=BASE_DIR,
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def start_with(**env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.base", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_URL": "mysql://root@localhost/x"}, "DATABASE_URL: must be a postgres:// or sqlite:// URL"),
        ({"REDIS_URL": "http://localhost:6379"}, "REDIS_URL: must be a redis://, rediss:// or unix:// URL"),
        # The operator QA pass: redis-py took database 0, which another deployment may share.
        ({"REDIS_URL": "redis://127.0.0.1:6379/abc"}, "REDIS_URL: names its database by number"),
        ({"REDIS_URL": "unix:///run/redis.sock?db=one"}, "REDIS_URL: names its database by number"),
        ({"SECRET_KEY": "short"}, "SECRET_KEY: must be at least 50 characters"),
        ({"PORT": "eighty"}, "PORT: must be an integer"),
        ({"PORT": "70000"}, "PORT: must be between 1 and 65535"),
        ({"EXTERNAL_HOST": "https://chat.example.com"}, "EXTERNAL_HOST: must be a host name"),
        ({"EXTERNAL_HOST": "bad_host!"}, "EXTERNAL_HOST: is not a valid host"),
        ({"RATE_LIMIT_API_BY_USER": "0"}, "RATE_LIMIT_API_BY_USER: must be at least 1"),
        ({"EMAIL_URL": "filemail://"}, "EMAIL_URL: names no folder"),
        # The production QA pass: each of these was taken (two slashes: mail went to /dir) or
        # stopped the server with a bare traceback.
        ({"EMAIL_URL": "filemail://relative/dir"}, "EMAIL_URL: names a host ('relative')"),
        ({"LOG_LEVEL": "verbose"}, "LOG_LEVEL: must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'VERBOSE'"),
        ({"DATABASE_URL": "postgres://p@127.0.0.1/p", "CONN_MAX_AGE": "-5"}, "CONN_MAX_AGE: must be at least 0"),
        (
            {
                "DJANGO_SETTINGS_MODULE": "config.settings.production",
                "SECRET_KEY": "x" * 10 + "abcdefghij" * 5,
                "SECURE_HSTS_SECONDS": "1y",
            },
            "SECURE_HSTS_SECONDS: must be an integer, got '1y'",
        ),
        (
            {"DATABASE_URL": "postgres://p@127.0.0.1/p", "DATABASE_POOL": "true", "DATABASE_POOL_MAX_SIZE": "lots"},
            "DATABASE_POOL_MAX_SIZE: must be an integer",
        ),
        # A mistyped on/off value was read as false (the newcomer QA pass: rate limits turned off).
        ({"RATE_LIMITING_ENABLED": "ture"}, "RATE_LIMITING_ENABLED: must be true or false, got 'ture'"),
        ({"DEBUG": "maybe"}, "DEBUG: must be true or false"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT: must be one of text, json, got 'xml'"),
        ({"DEFAULT_AVATAR_URI": "chat.example.com/a.png"}, "DEFAULT_AVATAR_URI: must be an http(s) URL or a path"),
        ({"ENABLE_GRAVATAR": "no way"}, "ENABLE_GRAVATAR: must be true or false"),
        # (the verify QA pass: read without a check, a traceback or a timeout of 0)
        ({"REDIS_SOCKET_TIMEOUT": "abc"}, "REDIS_SOCKET_TIMEOUT: must be a number, got 'abc'"),
        ({"REDIS_SOCKET_TIMEOUT": "0"}, "REDIS_SOCKET_TIMEOUT: must be more than 0"),
        ({"TASK_POLL_SECONDS": "abc"}, "TASK_POLL_SECONDS: must be a number"),
        ({"OUTGOING_WEBHOOK_TIMEOUT_SECONDS": "-1"}, "OUTGOING_WEBHOOK_TIMEOUT_SECONDS: must be more than 0"),
        ({"DJANGO_SETTINGS_MODULE": "config.settings.nope"}, "DJANGO_SETTINGS_MODULE: No module named"),
    ],
)
def test_bad_settings_stop_the_process_with_a_clear_message(env, message):
    result = start_with(**env)
    assert result.returncode != 0
    # The message alone (the operator QA pass: it ended a 45-line traceback).
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Configuration error: {message}")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SECRET_KEY": "short"}, "SECRET_KEY: must be at least 50 characters"),
        ({"REDIS_URL": "redis://127.0.0.1:6379/0", "WEB_CONCURRENCY": "0"}, "WEB_CONCURRENCY: must be at least 1"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT: must be one of text, json"),
        ({"WEBHOOK_WORKERS": "0"}, "WEBHOOK_WORKERS: must be at least 1"),
        ({"WEBHOOK_WORKERS": "1000"}, "WEBHOOK_WORKERS: must be at most 32, got 1000"),
    ],
)
def test_the_server_stops_at_a_bad_setting_with_its_message_alone(tmp_path, env, message):
    """Before any worker starts (each printed the traceback, and the task workers were started
    again and again)."""
    result = read_server_settings(tmp_path, **env)
    assert result.returncode == 1
    assert result.stderr.startswith(f"Configuration error: {message}")
    assert "Traceback" not in result.stderr


def test_commands_read_the_settings_module_from_the_dot_env_file(tmp_path):
    """As the server does (the operator QA pass: commands ran with the base settings)."""
    (tmp_path / "manage.py").write_bytes((BASE_DIR / "manage.py").read_bytes())
    (tmp_path / ".env").write_text("DJANGO_SETTINGS_MODULE=config.settings.no_such_settings\n")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, str(tmp_path / "manage.py"), "check"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(BASE_DIR)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "No module named 'config.settings.no_such_settings'" in result.stderr


def test_a_command_run_before_the_server_makes_the_metrics_folder(tmp_path):
    """The production QA pass: with the server's PROMETHEUS_MULTIPROC_DIR exported before the server
    ever ran, every command (migrate, create_realm) failed on the folder not being there."""
    folder = tmp_path / "not" / "yet"
    result = start_with(PROMETHEUS_MULTIPROC_DIR=str(folder))
    assert result.returncode == 0, result.stderr
    assert folder.is_dir()


def test_production_requires_a_secret_key():
    result = start_with(DJANGO_SETTINGS_MODULE="config.settings.production", SECRET_KEY="")
    assert result.returncode != 0
    assert "SECRET_KEY: is required" in result.stderr


@pytest.mark.parametrize(("external_https", "secure"), [("true", True), ("false", False)])
def test_production_cookies_and_redirect_follow_how_clients_reach_the_server(external_https, secure):
    """The operator QA pass: served over plain HTTP (EXTERNAL_HTTPS=false) the cookies were still
    HTTPS-only, so no browser could log in to the web app ("This page has expired")."""
    read = (
        "import config.settings.production as s;"
        " print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT)"
    )
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": "x" * 10 + "abcdefghij" * 5,
        "EXTERNAL_HOST": "192.0.2.2:8723",
        "EXTERNAL_HTTPS": external_https,
    }
    environment.pop("SECURE_SSL_REDIRECT", None)
    result = subprocess.run(
        [sys.executable, "-c", read], cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.split() == [str(secure)] * 3, result.stderr


def test_production_refuses_debug():
    result = start_with(
        DJANGO_SETTINGS_MODULE="config.settings.production", SECRET_KEY="x" * 10 + "abcdefghij" * 5, DEBUG="true"
    )
    assert result.returncode != 0
    assert "DEBUG: must be false in production" in result.stderr


def test_good_settings_start():
    result = start_with(EXTERNAL_HOST="chat.example.com", PORT="9000")
    assert result.returncode == 0, result.stderr


def test_json_log_lines_carry_the_request_id():
    record = logging.LogRecord("parley.test", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    token = current_request_id.set("abc123")
    try:
        RequestIdFilter().filter(record)
    finally:
        current_request_id.reset(token)
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "abc123"
    assert line["message"] == "hello world"
    assert line["level"] == "INFO"


def test_a_database_url_may_name_a_unix_socket(monkeypatch, tmp_path):
    """The socket's directory percent-encoded in the host, as libpq reads such a URL."""
    from config.env import database

    monkeypatch.setenv("DATABASE_URL", "postgres://parley:p%40ss@%2Fvar%2Frun%2Fpostgresql/parley")
    config = database(tmp_path, 5)
    assert (config["HOST"], config["USER"], config["PASSWORD"], config["NAME"]) == (
        "/var/run/postgresql",
        "parley",
        "p@ss",
        "parley",
    )
    monkeypatch.setenv("DATABASE_URL", "postgres://parley@db.example.com:5433/parley")
    assert (database(tmp_path, 5)["HOST"], database(tmp_path, 5)["PORT"]) == ("db.example.com", 5433)


def test_earlier_secret_keys_are_read_from_the_environment(tmp_path):
    """SECRET_KEY_FALLBACKS, which the README offers for a key's rotation (the directory QA pass: no
    setting read it, and a rotated key refused every open scan's page token)."""
    old, older = "an-earlier-key-" * 4, "an-even-earlier-key-" * 3
    code = "from django.conf import settings; print(settings.SECRET_KEY_FALLBACKS)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.base", "SECRET_KEY_FALLBACKS": f"{old},{older}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == repr([old, older])


def test_an_earlier_secret_key_cut_short_is_refused(monkeypatch):
    """The operator QA pass: a truncated fallback passed, accepting nothing it had signed."""
    from config.env import ConfigurationError, secret_key_fallbacks

    monkeypatch.setenv("SECRET_KEY_FALLBACKS", f"{'an-earlier-key-' * 4}, short")
    with pytest.raises(ConfigurationError, match="SECRET_KEY_FALLBACKS: each key must be at least 50 characters"):
        secret_key_fallbacks()
    monkeypatch.setenv("SECRET_KEY_FALLBACKS", f"{'an-earlier-key-' * 4}, ")
    assert secret_key_fallbacks() == ["an-earlier-key-" * 4]


def test_a_directory_setting_left_empty_is_its_default_and_one_unusable_is_said(monkeypatch, tmp_path):
    """The verify QA pass: STATIC_ROOT= collected into the current directory; a path that could not be
    made was a traceback."""
    from config.env import ConfigurationError, directory

    monkeypatch.setenv("STATIC_ROOT", "")
    assert directory("STATIC_ROOT", tmp_path / "static") == tmp_path / "static"
    assert (tmp_path / "static").is_dir()
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("STATIC_ROOT", str(tmp_path / "a-file"))
    with pytest.raises(ConfigurationError, match="STATIC_ROOT: cannot be used as a directory: File exists"):
        directory("STATIC_ROOT", tmp_path / "static")


def test_the_embedded_data_directory_being_a_file_is_said(monkeypatch, tmp_path):
    """The operator QA pass: a file named `var` where the embedded mode keeps its database and its
    generated key was a traceback."""
    from config.env import ConfigurationError, database, secret_key

    var = tmp_path / "var"
    var.write_text("")
    monkeypatch.setenv("SECRET_KEY", "")
    monkeypatch.setenv("DATABASE_URL", "")
    with pytest.raises(ConfigurationError, match=r"SECRET_KEY: not set, and the directory .* File exists"):
        secret_key(var, allow_generated=True)
    with pytest.raises(ConfigurationError, match=r"DATABASE_URL: the SQLite database's directory .* File exists"):
        database(var, connect_timeout=5)
    var.unlink()
    assert database(var, connect_timeout=5)["NAME"] == str(var / "parley.sqlite3")
    assert len(secret_key(var, allow_generated=True)) >= 50


def test_on_off_settings_take_the_usual_words(monkeypatch):
    from config.env import boolean

    for word, value in (("TRUE", True), ("yes", True), ("1", True), ("off", False), ("No", False), ("0", False)):
        monkeypatch.setenv("SOME_SWITCH", word)
        assert boolean("SOME_SWITCH", default=not value) is value
    monkeypatch.setenv("SOME_SWITCH", "")
    assert boolean("SOME_SWITCH", default=True) is True  # empty: the default, as unset


def test_a_database_url_that_is_no_url_is_said_in_one_line():
    """The operator QA pass: django-environ's own warning came first, with what it had parsed."""
    result = start_with(DATABASE_URL="notaurl")
    assert result.returncode != 0
    assert result.stderr.strip() == "Configuration error: DATABASE_URL: must be a postgres:// or sqlite:// URL"


def test_the_server_refuses_a_mistyped_worker_count(tmp_path):
    """gunicorn's settings (config/gunicorn.py) name the variable (it was a bare ValueError)."""
    result = read_server_settings(tmp_path, WEB_CONCURRENCY="zero", REDIS_URL="redis://127.0.0.1:6379/0")
    assert result.returncode != 0
    assert "WEB_CONCURRENCY: must be an integer, got 'zero'" in result.stderr


def test_a_database_that_stops_answering_is_noticed(monkeypatch, tmp_path):
    """TCP keepalives and a limit on unacknowledged data (the reliability QA pass: a frozen database
    host held every request thread, the kernel retries for about 15 minutes); the PostgreSQL run
    of the suite connects with them, so libpq takes them. An operator's own value in the URL wins."""
    from config.env import database

    monkeypatch.setenv("DATABASE_URL", "postgres://parley@db.example.com/parley")
    options = database(tmp_path, 5)["OPTIONS"]
    assert options["keepalives"] == 1
    assert options["keepalives_idle"] + options["keepalives_interval"] * options["keepalives_count"] <= 30
    assert options["tcp_user_timeout"] <= 30_000
    monkeypatch.setenv("DATABASE_URL", "postgres://parley@db.example.com/parley?keepalives_idle=60")
    assert database(tmp_path, 5)["OPTIONS"]["keepalives_idle"] == 60


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.path.exists("/var/run/postgresql"),
    reason="needs the PostgreSQL the tests run on, and its socket in /var/run/postgresql",
)
def test_the_server_connects_through_a_unix_socket():
    """A real connection through the socket, as an operator on one machine would configure it."""
    from urllib.parse import urlsplit

    user = urlsplit(os.environ["DATABASE_URL"]).username or "postgres"
    socket_url = f"postgres://{user}@%2Fvar%2Frun%2Fpostgresql/postgres"  # a database that always exists
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "--no-imports",
            "-c",
            "from django.db import connection; print(connection.pg_version)",
        ],
        cwd=BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.base", "DATABASE_URL": socket_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) >= 140000


@pytest.mark.parametrize("url", ["filemail:///var/mail/parley", "filemail:////var/mail/parley"])
def test_a_filemail_url_names_an_absolute_folder(monkeypatch, url):
    """As the README writes it (three slashes), and with four: never relative to the working directory."""
    monkeypatch.setenv("EMAIL_URL", url)
    from config import env

    assert env.email() == {
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": "/var/mail/parley",
    }


@pytest.mark.skipif(not settings.REDIS_URL, reason="needs a real Redis (REDIS_URL)")
def test_the_server_stops_at_a_redis_database_its_redis_does_not_have(tmp_path):
    """A Redis that answers but refuses what REDIS_URL asks is a setting that can never work (every
    request was a 500: the operator QA pass); one that does not answer is an outage, served as 503s."""
    result = read_server_settings(tmp_path, REDIS_URL=settings.REDIS_URL.rsplit("/", 1)[0] + "/99")
    assert result.returncode == 1
    assert result.stderr.startswith("Configuration error: REDIS_URL: Redis answered: DB index is out of range")
    result = read_server_settings(tmp_path, REDIS_URL="redis://127.0.0.1:1/0")  # nothing there
    assert result.returncode == 0, result.stderr
