"""Event queues through real server processes: the official client's event loop, and several
processes sharing Redis, one of them killed mid-poll."""

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
import requests
import zulip
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from apps.users.models import Role
from tests.factories import RealmFactory, UserFactory
from tests.reliability.faults import wait_until
from tests.server import BASE_DIR

pytestmark = pytest.mark.e2e

LISTENER = """
import json, sys, zulip
client = zulip.Client(email=sys.argv[1], api_key=sys.argv[2], site=sys.argv[3])
register = client.register
def announce_register(*args, **kwargs):
    result = register(*args, **kwargs)
    print(json.dumps({"registered": result.get("queue_id")}), flush=True)
    return result
client.register = announce_register
client.call_on_each_event(lambda event: print(json.dumps({"event": event}), flush=True), event_types=["realm_user"])
"""


@pytest.fixture
def people(transactional_db):
    realm = RealmFactory(string_id="", name="E2E Org")
    owner = UserFactory(realm=realm, role=Role.OWNER, delivery_email="owner@e2e.example")
    admin = UserFactory(realm=realm, role=Role.ADMINISTRATOR, delivery_email="admin@e2e.example")
    member = UserFactory(realm=realm, delivery_email="member@e2e.example", full_name="Mick Member")
    return owner, admin, member


class Lines:
    """The JSON lines a subprocess prints, readable with a timeout."""

    def __init__(self, process: subprocess.Popen) -> None:
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self._lines.put(json.loads(line))

    def next(self, key: str, timeout: float = 20) -> object:
        deadline = time.monotonic() + timeout
        while True:
            line = self._lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if key in line:
                return line[key]


def test_official_client_event_loop(live_server_factory, people):
    owner, admin, member = people
    server = live_server_factory()
    listener = subprocess.Popen(
        [sys.executable, "-c", LISTENER, owner.delivery_email, owner.api_key, server.url],
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = Lines(listener)
        first_queue = lines.next("registered")
        admin_client = zulip.Client(email=admin.delivery_email, api_key=admin.api_key, site=server.url)
        assert admin_client.update_user_by_id(member.id, full_name="Mick Renamed")["result"] == "success"
        event = lines.next("event")
        assert (event["type"], event["op"]) == ("realm_user", "update")
        assert event["person"] == {"user_id": member.id, "full_name": "Mick Renamed"}

        # Delete the queue under the running loop: its waiting poll ends with no events, the next
        # gets BAD_EVENT_QUEUE_ID and it registers again.
        owner_client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
        assert owner_client.deregister(first_queue)["result"] == "success"
        second_queue = lines.next("registered")
        assert second_queue != first_queue
        gone = owner_client.get_events(queue_id=first_queue, last_event_id=-1, dont_block=True)
        assert gone["code"] == "BAD_EVENT_QUEUE_ID"
        assert admin_client.update_user_by_id(member.id, role=300)["result"] == "success"
        assert lines.next("event")["person"] == {"user_id": member.id, "role": 300}
    finally:
        listener.kill()
        listener.wait()


@pytest.mark.skipif(not settings.REDIS_URL, reason="several server processes need REDIS_URL (a real Redis)")
def test_processes_share_queues_and_a_killed_poll_loses_nothing(live_server_factory, people):
    owner, admin, member = people
    first, second = live_server_factory(), live_server_factory()
    auth = (owner.delivery_email, owner.api_key)
    queue_id = requests.post(
        f"{first.url}/api/v1/register", auth=auth, data={"event_types": '["realm_user"]'}, timeout=10
    ).json()["queue_id"]

    def change(name: str) -> None:
        response = requests.patch(
            f"{first.url}/api/v1/users/{member.id}",
            auth=(admin.delivery_email, admin.api_key),
            data={"full_name": name},
            timeout=10,
        )
        assert response.json()["result"] == "success"

    # Poll on the second process while the change happens on the first.
    threading.Timer(0.5, change, args=("One",)).start()
    events = requests.get(
        f"{second.url}/api/v1/events", auth=auth, params={"queue_id": queue_id, "last_event_id": -1}, timeout=30
    ).json()["events"]
    assert [(e["id"], e["person"]["full_name"]) for e in events] == [(0, "One")]

    # Park a poll on the second process, then kill it outright.
    parked = threading.Thread(
        target=lambda: _ignore_errors(
            requests.get,
            f"{second.url}/api/v1/events",
            auth=auth,
            params={"queue_id": queue_id, "last_event_id": 0},
            timeout=30,
        ),
        daemon=True,
    )
    parked.start()
    time.sleep(1)
    worker_pids = _children(second.process.pid)
    os.killpg(second.process.pid, signal.SIGKILL)
    second.process.wait()
    assert worker_pids, "the parked poll was held by a worker process"

    change("Two")
    events = requests.get(
        f"{first.url}/api/v1/events", auth=auth, params={"queue_id": queue_id, "last_event_id": 0}, timeout=30
    ).json()["events"]
    assert [(e["id"], e["person"]["full_name"]) for e in events] == [(1, "Two")]
    change("Three")
    events = requests.get(
        f"{first.url}/api/v1/events", auth=auth, params={"queue_id": queue_id, "last_event_id": 1}, timeout=30
    ).json()["events"]
    assert [(e["id"], e["person"]["full_name"]) for e in events] == [(2, "Three")]


def _children(pid: int) -> list[int]:
    path = f"/proc/{pid}/task/{pid}/children"
    with open(path) as handle:
        return [int(child) for child in handle.read().split()]


def _ignore_errors(function, *args, **kwargs) -> None:
    with contextlib.suppress(requests.RequestException):
        function(*args, **kwargs)


@pytest.mark.parametrize(
    ("signalled", "stop"),
    [
        ("group", signal.SIGTERM),  # Ctrl-C in a terminal, systemd's default: every process
        ("master", signal.SIGTERM),  # docker stop, kill: the main process alone
        ("master", signal.SIGINT),  # gunicorn's stop at once: its workers get QUIT
        ("master", signal.SIGQUIT),
    ],
    ids=["group-TERM", "master-TERM", "master-INT", "master-QUIT"],
)
def test_stopping_a_server_answers_its_waiting_polls_at_once(live_server_factory, people, signalled, stop):
    """A stop (deploy, restart) must not wait for each waiting poll's heartbeat, up to a minute, however
    it is asked for (the QA pass: INT to the master alone left its worker serving until it was killed,
    30 s later); its task workers stop with it, each saying so as an INFO line, not a WARNING."""
    owner, _, _ = people
    server = live_server_factory(EVENTS_HEARTBEAT_SECONDS="60,60", TASK_WORKER="1")
    auth = (owner.delivery_email, owner.api_key)
    queue_id = requests.post(f"{server.url}/api/v1/register", auth=auth, timeout=10).json()["queue_id"]
    answers: queue.Queue = queue.Queue()

    def poll() -> None:
        response = requests.get(
            f"{server.url}/api/v1/events", auth=auth, params={"queue_id": queue_id, "last_event_id": -1}, timeout=60
        )
        answers.put((response.status_code, response.json()))

    threading.Thread(target=poll, daemon=True).start()
    deadline = time.monotonic() + 10
    while requests.get(f"{server.url}/health/ready", timeout=5).json().get("event_polls_waiting") != 1:
        assert time.monotonic() < deadline, "the poll never started waiting"
        time.sleep(0.05)

    started = re.compile(r"apps\.core\.tasks: Task worker \w+ started")
    wait_until(lambda: len(started.findall(server.log())) == 2, "the task workers' start")
    stopped_at = time.monotonic()
    (os.killpg if signalled == "group" else os.kill)(server.process.pid, stop)
    status, body = answers.get(timeout=5)
    assert (status, body["result"], body["events"]) == (200, "success", [])
    server.process.wait(timeout=10)
    # Well inside gunicorn's graceful timeout (30 s): the worker exited, it was not killed.
    assert time.monotonic() - stopped_at < 10
    # (The task workers' last lines may reach the log after the master is gone.)
    said = "INFO [-] django_tasks_db: Task worker: stopping once its current task, if any, is done (Terminated)"
    wait_until(lambda: server.log().count(said) == 2, "the task workers' stop")
    log = server.log()
    assert "Shutting down: Master" in log
    assert "SIGKILL" not in log
    assert " WARNING " not in log


def test_a_queue_deleted_by_its_client_answers_its_waiting_poll_with_no_events(live_server_factory, people):
    """zulip-terminal deletes its queue as it quits, its poll waiting: the poll is answered with no
    events, as Zulip finishes it (the zulip-terminal QA pass: it was answered BAD_EVENT_QUEUE_ID)."""
    owner, _, _ = people
    server = live_server_factory(EVENTS_HEARTBEAT_SECONDS="60,60")
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    queue_id = client.register()["queue_id"]
    answers: queue.Queue = queue.Queue()
    poll = threading.Thread(target=lambda: answers.put(client.get_events(queue_id=queue_id, last_event_id=-1)))
    poll.start()
    deadline = time.monotonic() + 10
    while requests.get(f"{server.url}/health/ready", timeout=5).json().get("event_polls_waiting") != 1:
        assert time.monotonic() < deadline, "the poll never started waiting"
        time.sleep(0.05)
    assert client.deregister(queue_id)["result"] == "success"
    answer = answers.get(timeout=5)
    assert (answer["result"], answer["events"]) == ("success", [])
    assert client.get_events(queue_id=queue_id, last_event_id=-1, dont_block=True)["code"] == "BAD_EVENT_QUEUE_ID"
    poll.join(5)


def test_a_rotated_key_ends_the_poll_waiting_with_it(live_server_factory, people):
    """A poll already waiting when its key is rotated is answered 401 when events come, not with
    them (the QA pass: a revoked key got one more batch); the events stay for the new key."""
    owner, _, _ = people
    server = live_server_factory()
    owner_client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    bot = owner_client.call_endpoint("bots", method="POST", request={"full_name": "Poller", "short_name": "poller"})
    email = owner_client.get_user_by_id(bot["user_id"])["user"]["email"]
    queue_id = zulip.Client(email=email, api_key=bot["api_key"], site=server.url).register()["queue_id"]
    answers = {}

    def poll() -> None:
        params = {"queue_id": queue_id, "last_event_id": -1}
        answers["poll"] = requests.get(f"{server.url}/api/v1/events", params=params, auth=(email, bot["api_key"]),
                                       timeout=60)  # fmt: skip

    waiting = threading.Thread(target=poll)
    waiting.start()
    time.sleep(1.5)  # the poll waits
    regenerated = owner_client.call_endpoint(f"bots/{bot['user_id']}/api_key/regenerate", method="POST")
    sent = owner_client.send_message({"type": "private", "to": [bot["user_id"]], "content": "after the rotation"})
    waiting.join(30)
    assert answers["poll"].status_code == 401
    new = zulip.Client(email=email, api_key=regenerated["api_key"], site=server.url)
    events = new.get_events(queue_id=queue_id, last_event_id=-1, dont_block=True)["events"]
    assert [e["message"]["id"] for e in events if e["type"] == "message"] == [sent["id"]]


def test_logging_out_ends_the_browser_poll_waiting_with_its_session(live_server_factory, people, collected_static):
    """A browser's poll (GET /json/events, its session) waiting when that browser logs out is
    answered 401 when events come, not with them: its session is read again before it answers."""
    _, owner, member = people
    password = "a long and unusual passphrase 47"
    hasher = PBKDF2PasswordHasher()  # hashed as the server's settings hash (the tests' is faster)
    member.password = hasher.encode(password, hasher.salt())
    member.save(update_fields=["password"])
    server = live_server_factory(STATIC_ROOT=collected_static)
    browser = requests.Session()
    browser.get(f"{server.url}/login/", timeout=10)
    login = {"email": member.delivery_email, "password": password, "csrfmiddlewaretoken": browser.cookies["csrftoken"]}
    assert browser.post(f"{server.url}/login/", data=login, allow_redirects=False, timeout=10).status_code == 302
    csrf = {"X-CSRFToken": browser.cookies["csrftoken"]}
    queue_id = browser.post(f"{server.url}/json/register", headers=csrf, timeout=10).json()["queue_id"]
    answers = {}

    def poll() -> None:
        params = {"queue_id": queue_id, "last_event_id": -1}
        answers["poll"] = browser.get(f"{server.url}/json/events", params=params, timeout=60)

    waiting = threading.Thread(target=poll)
    waiting.start()
    time.sleep(1.5)  # the poll waits
    other_tab = requests.Session()  # the same browser: its cookies, not its connection
    other_tab.cookies.update(browser.cookies)
    logout = {"csrfmiddlewaretoken": browser.cookies["csrftoken"]}
    assert other_tab.post(f"{server.url}/logout/", data=logout, allow_redirects=False, timeout=10).status_code == 302
    owner_client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    owner_client.send_message({"type": "private", "to": [member.id], "content": "after the logout"})
    waiting.join(30)
    assert answers["poll"].status_code == 401
    assert answers["poll"].json()["code"] == "UNAUTHORIZED"
