"""A real server (two workers, as in production) while its Redis or PostgreSQL fails: a sender
posts a message every 50 ms, a receiver long-polls its queue, and the dependency is stopped and
started again, or paused and resumed. Each test has a Redis (and the last a PostgreSQL cluster) of
its own. Before the outage, and again once the service has recovered, a burst of concurrent
requests uses many connections of the server's pools, as a busy server does.

Asserted: every message whose send answered success reaches the receiver, and no queue delivers
one twice; every 5xx is the JSON 503 SERVICE_UNAVAILABLE, none at all once the service has been
back for a short settle time (the second burst included); the service recovers (a send and a poll
sent after the dependency's return succeed) within 10 s, which is printed (a behaviour bound, not
a benchmark); and when Redis goes away, a poll that was waiting is answered before it comes back.

Redis runs without persistence, so a restart loses the queues: the receiver then does what Zulip's
clients do on BAD_EVENT_QUEUE_ID, registers again and fetches the messages sent since the newest
it has (GET /messages); delivery counts across its queues.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import psycopg
import pytest
import requests
from django.conf import settings

from tests.reliability.faults import PostgresCluster, RedisServer, manage, wait_until
from tests.reliability.population import populate
from tests.server import BASE_DIR, database_url_of_tests

# Production's topology, so they run once, in Redis mode (CI's PostgreSQL + Redis pass); the
# dependencies they break are still their own.
pytestmark = [
    pytest.mark.reliability,
    pytest.mark.e2e,
    pytest.mark.skipif(not settings.REDIS_URL, reason="the fault tests run in Redis mode (with REDIS_URL)"),
]

SETTLE_SECONDS = 2
RECOVERY_BOUND_SECONDS = 10
CONNECT_TIMEOUT = 2  # the servers' DEPENDENCY_CONNECT_TIMEOUT


@dataclass
class Answer:
    sent: float
    at: float
    who: str  # "send", "poll" or "burst"
    request: str  # method and path
    status: int | None  # None: no HTTP answer
    body: object  # the parsed JSON, or the text when it is not JSON

    @property
    def is_service_unavailable(self) -> bool:
        return self.status == 503 and isinstance(self.body, dict) and self.body.get("code") == "SERVICE_UNAVAILABLE"

    def __repr__(self) -> str:
        took = self.at - self.sent
        return f"<{self.who} {self.request} answered {self.status} after {took:.2f} s: {str(self.body)[:200]}>"


@dataclass
class Traffic:
    """The sender and the receiver, each a thread, and every answer they got."""

    url: str
    sender: tuple[str, str]
    receiver: tuple[str, str]
    answers: list[Answer] = field(default_factory=list)
    acknowledged: list[int] = field(default_factory=list)
    received: list[list[int]] = field(default_factory=list)  # message ids, per queue
    fetched: set[int] = field(default_factory=set)  # caught up with GET /messages after a lost queue
    errors: list[Exception] = field(default_factory=list)
    sending: threading.Event = field(default_factory=threading.Event)
    running: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        """The receiver first: a message sent before its queue exists is not for it."""
        self.running.set()
        threading.Thread(target=self._keep, args=(self._receive,), daemon=True).start()
        wait_until(lambda: self.received or self.errors, "the receiver's registration")
        self.sending.set()
        threading.Thread(target=self._keep, args=(self._send,), daemon=True).start()

    def stop(self) -> None:
        self.sending.clear()
        self.running.clear()

    def _keep(self, loop) -> None:
        """Run a thread's loop; what it raises fails the test (run_outage looks at `errors`)."""
        try:
            loop()
        except Exception as exc:
            self.errors.append(exc)
            self.running.clear()

    def call(self, who: str, method: str, path: str, auth, timeout: float = 30, **kwargs) -> Answer:
        sent = time.monotonic()
        try:
            response = requests.request(method, self.url + path, auth=auth, timeout=timeout, **kwargs)
        except requests.RequestException as exc:
            answer = Answer(sent, time.monotonic(), who, f"{method} {path}", None, repr(exc))
        else:
            is_json = response.headers.get("Content-Type") == "application/json"
            body = response.json() if is_json else response.text
            answer = Answer(sent, time.monotonic(), who, f"{method} {path}", response.status_code, body)
        self.answers.append(answer)
        return answer

    def _send(self) -> None:
        number = 0
        while self.running.is_set():
            if not self.sending.is_set():
                time.sleep(0.05)
                continue
            number += 1
            data = {"type": "stream", "to": "general", "topic": "faults", "content": f"message {number}"}
            answer = self.call("send", "POST", "/api/v1/messages", self.sender, data=data)
            if answer.status == 200:
                self.acknowledged.append(answer.body["id"])
            time.sleep(0.05)

    def _register(self) -> tuple[str, int] | None:
        answer = self.call("poll", "POST", "/api/v1/register", self.receiver, data={"event_types": '["message"]'})
        if answer.status != 200:
            return None
        self.received.append([])
        return answer.body["queue_id"], answer.body["last_event_id"]

    def _catch_up(self) -> bool:
        """The messages since the newest one received (what a client does with a new queue)."""
        newest = max([*self.fetched, *(i for queue in self.received for i in queue)], default=0)
        params = {"anchor": newest, "include_anchor": "false", "num_before": 0, "num_after": 5000}
        answer = self.call("poll", "GET", "/api/v1/messages", self.receiver, params=params)
        if answer.status == 200:
            self.fetched.update(m["id"] for m in answer.body["messages"])
        return answer.status == 200

    def _receive(self) -> None:
        queue = None
        while self.running.is_set():
            if queue is None:
                queue = self._register()
                if queue is not None and len(self.received) > 1 and not self._catch_up():
                    queue = None  # both again
                if queue is None:
                    time.sleep(0.2)
                continue
            queue_id, last_event_id = queue
            params = {"queue_id": queue_id, "last_event_id": last_event_id}
            answer = self.call("poll", "GET", "/api/v1/events", self.receiver, timeout=90, params=params)
            if answer.status == 200:
                events = answer.body["events"]
                self.received[-1].extend(e["message"]["id"] for e in events if e["type"] == "message")
                queue = (queue_id, max([last_event_id, *(e["id"] for e in events)]))
            elif isinstance(answer.body, dict) and answer.body.get("code") == "BAD_EVENT_QUEUE_ID":
                queue = None
            else:
                time.sleep(0.2)

    def delivered(self) -> set[int]:
        return self.fetched.union(*map(set, self.received))

    def recovered_at(self, since: float) -> float | None:
        """When a send and a poll sent after `since` had both succeeded."""
        answers = [a for a in list(self.answers) if a.sent >= since and a.status == 200]
        firsts = [next((a.at for a in answers if a.who == who), None) for who in ("send", "poll")]
        return None if None in firsts else max(firsts)

    def burst(self, connections: int = 24) -> None:
        """Concurrent registrations and polls, as a busy server has: they take (or leave idle) many
        connections in every pool of the server."""

        def burst(_):
            self.call("burst", "POST", "/api/v1/register", self.sender, data={"event_types": '["realm_user"]'})
            self.call("burst", "GET", "/api/v1/events", self.sender, params={"dont_block": "true"})

        with ThreadPoolExecutor(connections) as pool:
            list(pool.map(burst, range(connections)))


@dataclass
class Dependency:
    name: str
    stop: object  # callables
    start: object
    answers: object  # whether it answers now
    outage_seconds: float
    holds_polls: bool  # waiting polls wait on it (Redis's notifications): answered when it goes away


def run_outage(server, traffic: Traffic, dependency: Dependency) -> None:
    """Traffic, the outage, recovery and settling, then every assertion of this module."""
    traffic.start()
    traffic.burst()
    time.sleep(1)
    traffic.sending.clear()
    time.sleep(0.5)  # the receiver's poll now waits
    broken = time.monotonic()
    dependency.stop()
    assert not dependency.answers(), f"{dependency.name} still answers"
    traffic.sending.set()
    time.sleep(dependency.outage_seconds)
    dependency.start()
    back = time.monotonic()
    wait_until(lambda: traffic.recovered_at(back) or time.monotonic() > back + 30, "recovery", timeout=40)
    recovered = traffic.recovered_at(back)
    seconds = recovered - back if recovered is not None else float("inf")
    unavailable = sum(a.status == 503 for a in traffic.answers if a.sent >= back)
    print(f"\n{dependency.name}: service recovered {seconds:.2f} s after the dependency was back ({unavailable} 503s)")
    time.sleep(SETTLE_SECONDS)
    traffic.burst()  # busy again: every connection the pools kept through the outage is used
    time.sleep(1)
    traffic.sending.clear()
    acknowledged = set(traffic.acknowledged)
    wait_until(lambda: acknowledged <= traffic.delivered() or time.monotonic() > back + 60, "delivery", timeout=70)
    traffic.stop()

    assert not traffic.errors, traffic.errors
    answers = list(traffic.answers)
    assert any(a.at < broken and a.status == 200 for a in answers if a.who == "send"), "nothing was sent before"
    problems = []  # all of them, not only the first
    wrong = [a for a in answers if a.status is None or (a.status >= 500 and not a.is_service_unavailable)]
    if wrong:
        problems.append(f"answers other than the JSON 503: {wrong[:5]}")
    if dependency.holds_polls:
        waited = [a for a in answers if a.who == "poll" and a.sent < broken < a.at]
        if not waited:
            problems.append("no poll was waiting when it went away")
        if late := [a for a in waited if a.at > broken + CONNECT_TIMEOUT + 2]:
            problems.append(f"polls waiting when it went away were answered {late[0].at - broken:.1f} s later: {late}")
    if missing := sorted(acknowledged - traffic.delivered()):
        problems.append(f"{len(missing)} of {len(acknowledged)} acknowledged messages never arrived: {missing[:20]}")
    if twice := [
        sorted({i for i in queue if queue.count(i) > 1}) for queue in traffic.received if len(set(queue)) < len(queue)
    ]:
        problems.append(f"messages delivered twice by one queue: {twice}")
    if seconds >= RECOVERY_BOUND_SECONDS:
        problems.append(f"recovered {seconds:.1f} s after it was back")
    else:
        after = [a for a in answers if a.sent > recovered + SETTLE_SECONDS and (a.status is None or a.status >= 500)]
        if after:
            problems.append(
                f"{len(after)} 5xx after recovery (the last {after[-1].sent - back:.1f} s after): {after[:5]}"
            )
    if problems:  # what the server said about them
        problems += [line for line in server.log().splitlines() if " WARNING " in line or " ERROR " in line][-10:]
    assert not problems, f"{dependency.name}:\n" + "\n".join(problems)


@pytest.fixture
def redis_server(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


# The tests ask for the server last, so that it stops first: before the database is emptied or
# stopped and Redis is stopped.


@pytest.fixture
def people(transactional_db):
    """(sender, receiver): the owner and a member of the default organization, both in #general."""
    users = populate().users
    return [(users[role].delivery_email, users[role].api_key) for role in ("owner", "member")]


def serve(live_server_factory, **env):
    # Two workers as in production; no rate limits (the sender exceeds them on purpose).
    return live_server_factory(
        WEB_CONCURRENCY="2", RATE_LIMITING_ENABLED="false", DEPENDENCY_CONNECT_TIMEOUT=str(CONNECT_TIMEOUT), **env
    )


def test_redis_restarted(people, redis_server, live_server_factory):
    server = serve(live_server_factory, REDIS_URL=redis_server.url)
    redis = Dependency("a Redis restart", redis_server.stop, redis_server.start, redis_server.answers, 5, True)
    run_outage(server, Traffic(server.url, *people), redis)


def test_redis_paused(people, redis_server, live_server_factory):
    server = serve(live_server_factory, REDIS_URL=redis_server.url)
    redis = Dependency("a paused Redis", redis_server.pause, redis_server.resume, redis_server.answers, 4, False)
    run_outage(server, Traffic(server.url, *people), redis)


@pytest.fixture
def cluster():
    cluster = PostgresCluster()
    try:
        cluster.start()
        cluster.create_database()
        yield cluster
    finally:
        cluster.remove()


def test_postgresql_restarted(cluster, redis_server, live_server_factory):
    db = {"DATABASE_URL": cluster.url}
    owner = ["--owner-email", "sender@faults.example", "--owner-full-name", "Sam Sender"]
    sender = json.loads(manage("create_realm", "--string-id", "", "--name", "Faults", *owner, "--json", **db))
    member = ["--email", "receiver@faults.example", "--full-name", "Rae Receiver"]
    receiver = json.loads(manage("create_user", "--realm", "", *member, "--json", **db))
    # Both in #general, a new organization's default channel.
    server = serve(live_server_factory, REDIS_URL=redis_server.url, **db)

    def answers() -> bool:
        try:
            psycopg.connect(cluster.url, connect_timeout=1).close()
        except psycopg.OperationalError:
            return False
        return True

    postgresql = Dependency("a PostgreSQL restart", cluster.stop, cluster.start, answers, 4, False)
    traffic = Traffic(
        server.url, (sender["delivery_email"], sender["api_key"]), (receiver["delivery_email"], receiver["api_key"])
    )
    run_outage(server, traffic, postgresql)


def test_logins_the_database_could_not_answer_are_no_failed_logins(
    cluster, redis_server, live_server_factory, tmp_path
):
    """The fault QA pass: each login tried while PostgreSQL was down took a slot of the per-username
    limit of failures (5), and the outage's retries locked the person out for 30 minutes after it."""
    db = {"DATABASE_URL": cluster.url}
    manage("create_realm", "--string-id", "", "--name", "Faults", "--owner-email", "owner@faults.example",
           "--owner-full-name", "Olu Owner", **db)  # fmt: skip
    password = tmp_path / "password"
    password.write_text("a password long enough to pass\n")
    manage("create_user", "--realm", "", "--email", "mo@faults.example", "--full-name", "Mo Member",
           "--password-file", str(password), **db)  # fmt: skip
    # Rate limits on (serve() turns them off), this limit's default of 5 failures.
    server = live_server_factory(REDIS_URL=redis_server.url, DEPENDENCY_CONNECT_TIMEOUT=str(CONNECT_TIMEOUT), **db)

    def log_in(secret: str) -> requests.Response:
        form = {"username": "mo@faults.example", "password": secret}
        return requests.post(f"{server.url}/api/v1/fetch_api_key", data=form, timeout=30)

    assert log_in("wrong").status_code == 401  # a real failure counts
    cluster.stop()
    try:
        for _ in range(6):
            answer = log_in("a password long enough to pass")
            assert (answer.status_code, answer.json()["code"]) == (503, "SERVICE_UNAVAILABLE")
    finally:
        cluster.start()
    deadline = time.monotonic() + RECOVERY_BOUND_SECONDS
    while (answer := log_in("a password long enough to pass")).status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert answer.status_code == 200, answer.text


def test_a_key_rotated_while_redis_pauses_stops_working_everywhere(people, redis_server, live_server_factory):
    """The fault QA pass: a key rotated (by a command) during a pause of Redis shorter than the
    servers' check of it stayed valid in the processes that had it cached, for their cache's five
    minutes; the drop is now told again once Redis answers."""
    server = serve(live_server_factory, REDIS_URL=redis_server.url)
    email, key = people[1]

    def answers(times: int = 12) -> set[int]:
        return {requests.get(f"{server.url}/api/v1/users/me", auth=(email, key), timeout=30).status_code
                for _ in range(times)}  # fmt: skip

    assert answers(30) == {200}  # cached by both workers
    redis_server.pause()
    try:
        rotating = subprocess.Popen(
            [sys.executable, "manage.py", "rotate_api_key", email, "--realm", ""],
            cwd=BASE_DIR,
            env={**os.environ, "DATABASE_URL": database_url_of_tests(), "REDIS_URL": redis_server.url},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(4)  # its drop fails; the servers' check of Redis (every 5 s) sees nothing
    finally:
        redis_server.resume()
    assert rotating.wait(timeout=60) == 0, rotating.stderr.read()
    wait_until(lambda: answers() == {401}, "the old key refused by every worker", timeout=10)


def test_a_frozen_postgresql_is_reported_by_the_ready_probe_in_time(cluster, redis_server, live_server_factory):
    """The fault QA pass: with PostgreSQL's processes stopped (its host still acknowledging), the
    probe waited as long as the freeze, then said "ok"."""
    db = {"DATABASE_URL": cluster.url}
    server = serve(live_server_factory, REDIS_URL=redis_server.url, **db)

    def probe() -> tuple[int, dict, float]:
        began = time.monotonic()
        answer = requests.get(f"{server.url}/health/ready", timeout=60)
        return answer.status_code, answer.json(), time.monotonic() - began

    # Connections opened before the freeze (a new one is refused at once: its handshake times out).
    with ThreadPoolExecutor(8) as pool:
        assert {status for status, _, _ in pool.map(lambda _: probe(), range(40))} == {200}
    cluster.freeze()
    try:
        for _ in range(2):  # the first waits for the check; the next finds it still waiting
            status, body, took = probe()
            assert (status, body["checks"]["database"], body["checks"]["redis"]) == (503, "unavailable", "ok")
            assert took < 10
    finally:
        cluster.freeze(signal.SIGCONT)
    wait_until(lambda: probe()[0] == 200, "the probe saying ready again", timeout=10)


def test_requests_waiting_on_a_frozen_postgresql_are_answered_503(cluster, redis_server, live_server_factory):
    """The fault QA pass: with PostgreSQL's processes stopped (its host still acknowledging), a
    request whose query went out on a connection the server already held waited as long as the
    freeze (over 100 s), its client long gone. Now a 503 within seconds (apps/core/postgresql/
    watchdog.py), and requests are answered again as soon as it resumes."""
    db = {"DATABASE_URL": cluster.url}
    owner = ["--owner-email", "owner@faults.example", "--owner-full-name", "Olive Owner"]
    me = json.loads(manage("create_realm", "--string-id", "", "--name", "Faults", *owner, "--json", **db))
    server = serve(live_server_factory, REDIS_URL=redis_server.url, **db)

    def own_subscriptions(timeout: float) -> tuple[int | None, object, float]:
        """GET /users/me/subscriptions, which reads the database every time (GET /users/me may not:
        its newest message is cached with Redis)."""
        began = time.monotonic()
        try:
            answer = requests.get(
                f"{server.url}/api/v1/users/me/subscriptions",
                auth=(me["delivery_email"], me["api_key"]),
                timeout=timeout,
            )
        except requests.RequestException as exc:
            return None, repr(exc), time.monotonic() - began
        return answer.status_code, answer.json(), time.monotonic() - began

    # Every request thread of both workers keeps a connection (its first query reads the subscriptions).
    with ThreadPoolExecutor(16) as pool:
        assert {status for status, _, _ in pool.map(lambda _: own_subscriptions(10), range(64))} == {200}
    cluster.freeze()
    try:
        with ThreadPoolExecutor(16) as pool:
            frozen = list(pool.map(lambda _: own_subscriptions(40), range(16)))
    finally:
        cluster.freeze(signal.SIGCONT)
    assert [
        (status, body) for status, body, _ in frozen if status != 503 or body["code"] != "SERVICE_UNAVAILABLE"
    ] == []
    assert max(took for _, _, took in frozen) < 20  # the watch: 5 s, a handshake's 2 s, a thread's wait
    wait_until(lambda: own_subscriptions(10)[0] == 200, "requests answered again", timeout=10)
