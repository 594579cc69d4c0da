"""What a server writes with LOG_FORMAT=json: nothing but JSON lines, gunicorn's own included (the
production QA pass: its start and stop lines were plain text among the JSON), its access lines
naming the client."""

import json
import re

import pytest
import requests

pytestmark = pytest.mark.e2e


def test_with_json_logs_every_line_is_json(live_server_factory, people):
    _, _, member = people
    server = live_server_factory(LOG_FORMAT="json")
    answer = requests.get(f"{server.url}/api/v1/users/me", auth=(member.delivery_email, member.api_key), timeout=30)
    assert answer.status_code == 200
    server.stop()
    lines = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    gunicorn = [line["message"] for line in lines if line["logger"] == "gunicorn"]
    assert gunicorn[0].startswith("Starting gunicorn")
    assert gunicorn[-1] == "Shutting down: Master"
    [access] = [line for line in lines if line["logger"] == "parley.access" and line["path"] == "/api/v1/users/me"]
    assert (access["status"], access["user_id"], access["client"]) == (200, member.id, "127.0.0.1")
    assert access["request_id"] == answer.headers["X-Request-Id"]


def test_with_text_logs_every_line_is_in_one_format(live_server_factory, people):
    """The operator QA pass: gunicorn's lines ("[date] [pid] [INFO] ...") were in a format of their
    own among the server's, and its and uvicorn's INFO lines named a logger `*.error`."""
    _, _, member = people
    server = live_server_factory(LOG_FORMAT="text")
    answer = requests.get(f"{server.url}/api/v1/users/me", auth=(member.delivery_email, member.api_key), timeout=30)
    assert answer.status_code == 200
    server.stop()
    lines = [line for line in server.log().splitlines() if line.strip()]
    level = "(DEBUG|INFO|WARNING|ERROR|CRITICAL)"
    line_format = re.compile(rf"\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d,\d{{3}} {level} \[[^\]]*\] [\w.]+: ")
    assert [line for line in lines if not line_format.match(line)] == []
    assert " INFO [-] gunicorn: Starting gunicorn" in lines[0]
    assert any(" INFO [-] uvicorn: Application startup complete." in line for line in lines)
    assert any(f"[{answer.headers['X-Request-Id']}] parley.access: " in line for line in lines)


@pytest.mark.parametrize(("external_host", "hinted"), [("localhost", True), ("chat.example.com", False)])
def test_the_hint_for_other_machines_is_for_servers_only_this_machine_reaches(
    live_server_factory, transactional_db, external_host, hinted
):
    """Served on this machine's loopback address: the hint to serve on the network, unless
    EXTERNAL_HOST names another host (a proxy on this machine forwards to it: the operator QA pass)."""
    server = live_server_factory(EXTERNAL_HOST=external_host)
    server.stop()
    assert ("Only this machine can connect" in server.log()) == hinted


def test_what_a_client_sends_cannot_forge_a_line_of_the_text_log(live_server_factory, transactional_db):
    """Control characters in a path are written as escapes (the faults QA pass: `%0a` wrote a forged
    ERROR line of its own, `%00` made the log a binary file)."""
    server = live_server_factory(LOG_FORMAT="text")
    forged = "2026-12-02 04:20:00,000 ERROR [-] apps.core.errors: FORGED"
    for path in (f"/api/v1/x%0a{forged.replace(' ', '%20')}", "/api/v1/drafts/%00"):
        assert requests.get(f"{server.url}{path}", timeout=30).status_code in (401, 404)
    server.stop()
    log = server.log()
    assert "\0" not in log
    assert not [line for line in log.splitlines() if line.startswith(forged)]
    assert f"GET /api/v1/x\\x0a{forged} " in log
    assert "GET /api/v1/drafts/\\x00 " in log
