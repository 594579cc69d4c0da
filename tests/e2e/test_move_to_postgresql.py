"""The README's move from the embedded default to PostgreSQL, as an operator makes it: an organization
used on SQLite through the official `zulip` client, dumped with the server stopped, loaded into a
new PostgreSQL database and served from there with Redis. Every row comes along, and the same keys,
messages, files, drafts and bot storage work; new rows get new ids.

Runs where the tests run on PostgreSQL (CI's first run), whose server receives the new database."""

import io
import json
import os
import re
import secrets
import subprocess
import sys

import psycopg
import pytest
import requests
import zulip
from django.conf import settings
from django.db import connection

from tests.server import BASE_DIR, start_server

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(300),  # two databases migrated, seven commands each starting Django
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs the PostgreSQL server of the tests"),
]

# Rows of every model, as `manage.py shell` prints them.
COUNT_ROWS = (
    "import json; from django.apps import apps; "
    "print(json.dumps({m._meta.label: m._base_manager.count() for m in apps.get_models() if not m._meta.proxy}))"
)


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def row_counts(env: dict) -> dict[str, int]:
    return json.loads(manage(env, "shell", "--no-imports", "-c", COUNT_ROWS).strip().splitlines()[-1])


@pytest.fixture
def new_postgresql_database(transactional_db):
    """An empty database on the tests' PostgreSQL server, dropped afterwards: its DATABASE_URL."""
    db = connection.settings_dict
    name = f"parley_move_{secrets.token_hex(4)}"
    server = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"]}
    if db["PASSWORD"]:
        server["password"] = db["PASSWORD"]
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    yield f"postgres://{auth}@{server['host']}:{server['port']}/{name}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_an_embedded_organization_moves_to_postgresql_whole(tmp_path, new_postgresql_database):
    var = tmp_path / "var"
    var.mkdir()
    common = {
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "UPLOADS_DIR": str(tmp_path / "uploads"),
    }
    embedded = {**os.environ, **common, "DATABASE_URL": f"sqlite:///{var / 'parley.sqlite3'}", "REDIS_URL": ""}
    demo = manage(embedded, "bootstrap_demo", "--migrate", "--url", "http://127.0.0.1:8000")
    owner_key = re.search(r"curl -u owner@example\.com:(\S+) ", demo)[1]
    bot_key = re.search(r"demo-bot@example\.com\s+(\S+)", demo)[1]

    # A working day on the embedded server: a file, an edited message with a reaction, a draft, a
    # group, bot storage.
    server = start_server(tmp_path, **{k: embedded[k] for k in ("DATABASE_URL", "REDIS_URL", *common)})
    try:
        owner = zulip.Client(email="owner@example.com", api_key=owner_key, site=server.url)
        owner_id = owner.get_profile()["user_id"]
        upload = io.BytesIO(b"minutes of the meeting\n")
        upload.name = "minutes.txt"
        file_url = owner.upload_file(upload)["uri"]
        sent = owner.send_message(
            {"type": "stream", "to": "general", "topic": "plans", "content": f"[minutes]({file_url})"}
        )
        assert sent["result"] == "success", sent
        message_id = sent["id"]
        edited = owner.update_message({"message_id": message_id, "content": f"The [minutes]({file_url})"})
        assert edited["result"] == "success", edited
        assert owner.add_reaction({"message_id": message_id, "emoji_name": "octopus"})["result"] == "success"
        draft = {"type": "private", "to": [owner_id], "topic": "", "content": "half a thought", "timestamp": 1700000000}
        assert owner.call_endpoint(url="drafts", method="POST", request={"drafts": [draft]})["result"] == "success"
        group = owner.create_user_group({"name": "planners", "description": "Who plans", "members": [owner_id]})
        assert group["result"] == "success", group
        bot = zulip.Client(email="demo-bot@example.com", api_key=bot_key, site=server.url)
        assert bot.update_storage({"storage": {"count": "3"}})["result"] == "success"
    finally:
        server.stop()
    before = row_counts(embedded)

    # The README's commands: the dump of the stopped embedded server, then migrate and load.
    dump = var / "parley.jsonl"
    manage(embedded, "dumpdata", "--natural-foreign", "--natural-primary", "--format", "jsonl", "-o", str(dump))
    moved = {**os.environ, **common, "DATABASE_URL": new_postgresql_database, "REDIS_URL": settings.REDIS_URL}
    manage(moved, "migrate", "--noinput")
    manage(moved, "loaddata", str(dump))
    assert row_counts(moved) == before

    server = start_server(tmp_path, **{k: moved[k] for k in ("DATABASE_URL", "REDIS_URL", *common)})
    try:
        owner = zulip.Client(email="owner@example.com", api_key=owner_key, site=server.url)
        assert owner.get_profile()["email"] == "owner@example.com"
        [message] = owner.get_messages(
            {"anchor": message_id, "num_before": 0, "num_after": 0, "narrow": [["channel", "general"]]}
        )["messages"]
        assert (message["id"], message["subject"]) == (message_id, "plans")
        assert message["content"].startswith("<p>The <a href=")
        assert [reaction["emoji_name"] for reaction in message["reactions"]] == ["octopus"]
        assert message["last_edit_timestamp"] > 0
        download = requests.get(server.url + file_url, auth=("owner@example.com", owner_key), timeout=10)
        assert download.content == b"minutes of the meeting\n"
        drafts = owner.call_endpoint(url="drafts", method="GET")["drafts"]
        assert [d["content"] for d in drafts] == ["half a thought"]
        groups = owner.get_user_groups()["user_groups"]
        assert [g["members"] for g in groups if g["name"] == "planners"] == [[owner_id]]
        bot = zulip.Client(email="demo-bot@example.com", api_key=bot_key, site=server.url)
        assert bot.get_storage()["storage"] == {"count": "3"}
        # New rows get ids after the loaded ones (the sequences were moved on).
        later = owner.send_message({"type": "stream", "to": "general", "topic": "plans", "content": "moved!"})
        assert later["result"] == "success", later
        assert later["id"] > message_id
    finally:
        server.stop()
