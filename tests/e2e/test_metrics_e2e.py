"""GET /metrics from a real server with two worker processes (gunicorn -w 2, PostgreSQL or SQLite,
Redis): requests served by both workers add up in every scrape, a long-poll woken by a message is
counted and timed, and its access log line carries the request's fields."""

import json
import os
import queue
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from django.conf import settings
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from tests.server import wait_for

pytestmark = pytest.mark.e2e

USER_ROUTE = "/api/v1/users/<id:user_id>"


def scrape(url: str) -> list:
    """Every sample of a scrape (Prometheus's own text parser)."""
    response = requests.get(f"{url}/metrics", timeout=10)
    assert response.status_code == 200, response.text
    return [sample for family in text_string_to_metric_families(response.text) for sample in family.samples]


def value(samples: list, name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels` (0 when none)."""
    return sum(s.value for s in samples if s.name == name and labels.items() <= s.labels.items())


def requests_by_process(directory: Path, route: str) -> dict[int, float]:
    """What each process wrote to its own counter file for `route`: the values a scrape adds up."""
    counts: dict[int, float] = {}
    for path in directory.glob("counter_*.db"):
        pid = int(path.stem.rsplit("_", 1)[1])
        for key, count, *_ in MmapedDict.read_all_values_from_file(str(path)):
            _, sample, labels, _ = json.loads(key)
            if sample == "parley_http_requests_total" and labels["route"] == route:
                counts[pid] = counts.get(pid, 0.0) + count
    return counts


def worker_pids(master_pid: int) -> list[int]:
    """The gunicorn workers (the master's other children are the task workers)."""
    with open(f"/proc/{master_pid}/task/{master_pid}/children") as handle:
        children = [int(pid) for pid in handle.read().split()]
    workers = []
    for pid in children:
        try:
            if b"run_tasks" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                workers.append(pid)
        except FileNotFoundError:  # it has just exited
            continue
    return sorted(workers)


def access_lines(log: str) -> list[dict]:
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("logger") == "parley.access"]


def test_the_server_makes_its_own_metrics_directory_and_removes_it(live_server_factory, people):
    server = live_server_factory()
    [worker] = worker_pids(server.process.pid)
    # Where the worker's metrics files are: the files it maps.
    mapped = {line.split()[-1] for line in Path(f"/proc/{worker}/maps").read_text().splitlines() if ".db" in line}
    [directory] = {Path(path).parent for path in mapped if Path(path).name.startswith("counter_")}
    assert directory.name.startswith("parley-metrics-")
    before = value(scrape(server.url), "parley_http_requests_total", route="/health/live")
    assert requests.get(f"{server.url}/health/live", timeout=10).status_code == 200
    assert value(scrape(server.url), "parley_http_requests_total", route="/health/live") == before + 1
    assert list(directory.glob("counter_*.db"))
    server.stop()
    assert not directory.exists()


@pytest.mark.skipif(not settings.REDIS_URL, reason="two server processes need REDIS_URL (a real Redis)")
def test_two_workers_metrics_add_up_and_a_woken_poll_is_counted_and_logged(live_server_factory, people, tmp_path):
    realm, owner, member = people
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    (metrics_dir / "counter_1.db").write_bytes(b"left by an earlier server")
    server = live_server_factory(
        WEB_CONCURRENCY="2",
        LOG_FORMAT="json",
        PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
        RATE_LIMIT_API_BY_USER="100000",
        TASK_WORKER="1",
    )
    assert not (metrics_dir / "counter_1.db").exists(), "the directory is emptied at start"
    workers = worker_pids(server.process.pid)
    assert len(workers) == 2
    auth = (owner.delivery_email, owner.api_key)

    # Each request on a connection of its own: the kernel hands them to either worker. Until both
    # have served some (each counts in its own file).
    def get_user(_: int) -> int:
        return requests.get(f"{server.url}/api/v1/users/{member.id}", auth=auth, timeout=10).status_code

    sent = 0
    with ThreadPoolExecutor(8) as pool:
        for _ in range(30):
            assert set(pool.map(get_user, range(16))) == {200}
            sent += 16
            by_process = requests_by_process(metrics_dir, USER_ROUTE)
            if len(by_process) == 2:
                break
    assert sorted(by_process) == workers, by_process
    assert sum(by_process.values()) == sent
    # Whichever worker answers a scrape reports the sum over both.
    for _ in range(6):
        samples = scrape(server.url)
        assert value(samples, "parley_http_requests_total", route=USER_ROUTE, method="GET", status="200") == sent
        assert value(samples, "parley_http_request_duration_seconds_count", route=USER_ROUTE) == sent

    # A long-poll (the thin route) woken by a message sent through the other requests' path.
    registered = requests.post(
        f"{server.url}/api/v1/register", auth=auth, data={"event_types": '["message"]'}, timeout=10
    ).json()
    answers: queue.Queue = queue.Queue()

    def poll() -> None:
        params = {"queue_id": registered["queue_id"], "last_event_id": registered["last_event_id"]}
        answers.put(requests.get(f"{server.url}/api/v1/events", auth=auth, params=params, timeout=60))

    threading.Thread(target=poll, daemon=True).start()
    wait_for(lambda: value(scrape(server.url), "parley_event_polls_waiting") == 1, "the poll waiting", log=server.log)
    sent_message = requests.post(
        f"{server.url}/api/v1/messages",
        auth=(member.delivery_email, member.api_key),
        data={"type": "direct", "to": json.dumps([owner.id]), "content": "are you there?"},
        timeout=10,
    )
    assert sent_message.json()["result"] == "success", sent_message.text
    answer = answers.get(timeout=15)
    assert [event["type"] for event in answer.json()["events"]] == ["message"]

    # The poll's request is counted once the event loop's pass that answered it is over: a scrape
    # the other worker answers at once may come first (the CI run of e255b6d).
    def poll_counted() -> bool:
        counted = scrape(server.url)
        return value(counted, "parley_http_requests_total", route="/api/v1/events", method="GET", status="200") == 1

    wait_for(poll_counted, "the poll counted", log=server.log)
    samples = scrape(server.url)
    assert value(samples, "parley_event_polls_waiting") == 0
    assert value(samples, "parley_event_wake_latency_seconds_count") == 1
    assert 0 < value(samples, "parley_event_wake_latency_seconds_sum") < 3
    assert value(samples, "parley_http_requests_total", route="/api/v1/events", method="GET", status="200") == 1
    assert value(samples, "parley_http_request_duration_seconds_count", route="/api/v1/events") == 1
    assert value(samples, "parley_events_published_total", type="message") >= 1
    assert value(samples, "parley_event_queues") >= 1
    assert value(samples, "parley_event_queue_length_max") >= 1  # the message, not acknowledged yet

    # The poll's access log line, as JSON, with the request's fields.
    lines = wait_for(
        lambda: [line for line in access_lines(server.log()) if line["route"] == "/api/v1/events"],
        "the poll's access log line",
        log=server.log,
    )
    [line] = lines
    assert line["request_id"] == answer.headers["X-Request-Id"]
    assert (line["method"], line["path"], line["status"]) == ("GET", "/api/v1/events", 200)
    assert (line["user_id"], line["realm_id"]) == (owner.id, realm.id)
    assert line["duration_ms"] > 0
    assert [line["route"] for line in access_lines(server.log()) if line["path"] == f"/api/v1/users/{member.id}"] == [
        USER_ROUTE
    ] * sent

    # Background tasks: counted queued by the web worker, run by a task worker the server started
    # (a push notification to a phone, through the log backend).
    member_auth = (member.delivery_email, member.api_key)
    phone = requests.post(
        f"{server.url}/api/v1/users/me/android_gcm_reg_id", auth=member_auth, data={"token": "fcm-m"}, timeout=10
    )
    assert phone.json()["result"] == "success"
    pushed = requests.post(
        f"{server.url}/api/v1/messages",
        auth=auth,
        data={"type": "direct", "to": json.dumps([member.id]), "content": "lunch?"},
        timeout=10,
    )
    assert pushed.json()["result"] == "success"
    wait_for(
        lambda: value(scrape(server.url), "parley_tasks_total", outcome="succeeded") >= 1,
        "a task run by the task worker",
        log=server.log,
    )
    samples = scrape(server.url)
    assert value(samples, "parley_tasks_total", outcome="queued") >= 1
    assert value(samples, "parley_tasks_total", outcome="failed") == 0

    # A worker that exits leaves the live sum of waiting polls (gunicorn's child_exit).
    gone = workers[0]
    assert (metrics_dir / f"gauge_livesum_{gone}.db").exists()
    os.kill(gone, signal.SIGTERM)
    wait_for(
        lambda: not (metrics_dir / f"gauge_livesum_{gone}.db").exists(), "the worker's live gauge gone", log=server.log
    )
    # Its counts stay in the sums, and so they do when gunicorn reloads (SIGHUP: new workers, the
    # configuration read again by the same master).
    samples = scrape(server.url)
    assert value(samples, "parley_http_requests_total", route=USER_ROUTE, method="GET", status="200") == sent
    before_reload = set(worker_pids(server.process.pid))
    os.kill(server.process.pid, signal.SIGHUP)
    wait_for(lambda: len(set(worker_pids(server.process.pid)) - before_reload) == 2, "two new workers", log=server.log)
    samples = scrape(server.url)
    assert value(samples, "parley_http_requests_total", route=USER_ROUTE, method="GET", status="200") == sent
