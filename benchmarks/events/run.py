"""Event delivery benchmarks: idle polls per worker, wake-all and re-poll, delivery latency, fan-out,
and message send -> receive (POST /messages by one user, a parked GET /events of another).

Every Parley row is measured against reference rows taken in the same run on the same machine: a
bare ASGI long-poll app served the same way (raw_app.py) and Redis's own round trip.

    .venv/bin/python benchmarks/events/run.py                       # everything (about 10 minutes)
    .venv/bin/python benchmarks/events/run.py --polls 1000 --modes raw,thin-route

Needs PostgreSQL and Redis like CI (BENCH_DATABASE_URL, BENCH_REDIS_URL override the defaults);
the database parley_bench is created and filled with users.
"""

import argparse
import asyncio
import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

from benchmarks.events.client import HttpConnection, Poller, open_in_batches  # noqa: E402
from benchmarks.processes import free_port, stop_process_group  # noqa: E402

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_bench")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/5")
PREFIX = "parley-bench"
MODES = ("raw", "thin-route", "pooled-django", "stock-django")
HOST = "127.0.0.1"


def configure_django() -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DATABASE_URL=DATABASE_URL,
        REDIS_URL=REDIS_URL,
        REDIS_KEY_PREFIX=PREFIX,
        DATABASE_POOL="false",
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()


# --- data -----------------------------------------------------------------------------------------


@dataclass
class BenchUser:
    id: int
    email: str
    api_key: str

    def auth_header(self) -> dict[str, str]:
        token = base64.b64encode(f"{self.email}:{self.api_key}".encode()).decode()
        return {"Authorization": f"Basic {token}"}


def prepare_users(count: int) -> list[BenchUser]:
    """`count` members of one organization in a fresh parley_bench database."""
    name = DATABASE_URL.rsplit("/", 1)[1]
    admin_url = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name}"], check=True)
    configure_django()
    from django.core.management import call_command

    from apps.realms.models import Realm
    from apps.users.actions.create_user import generate_api_key
    from apps.users.models import User

    call_command("migrate", verbosity=0)
    realm = Realm.objects.create(string_id="", name="Bench")
    _realm_id[:] = [realm.id]
    User.objects.bulk_create(
        [
            User(realm=realm, delivery_email=f"u{i}@bench.example", full_name=f"User {i}", api_key=generate_api_key())
            for i in range(count)
        ],
        batch_size=2000,
    )
    return [BenchUser(u.id, u.delivery_email, u.api_key) for u in User.objects.order_by("id")]


def create_queues(users: list[BenchUser]) -> list[str]:
    from apps.events.backends import get_backend
    from apps.events.registry import QueueOptions

    backend = get_backend()
    options = QueueOptions(event_types=frozenset({"bench", "message"}))
    return [backend.create_queue(user.id, realm_id(), options) for user in users]


_realm_id: list[int] = []


def realm_id() -> int:
    """The benchmark organization's id (set by prepare_users)."""
    return _realm_id[0]


def publish_to(user_ids: list[int]) -> float:
    """Commit one event for these users; returns the monotonic time just before the commit."""
    from django.db import transaction

    from apps.events.publish import send_event_on_commit

    with transaction.atomic():
        send_event_on_commit(realm_id(), {"type": "bench", "sent": time.time()}, user_ids)
        started = time.monotonic()
    return started


def clear_redis() -> None:
    from apps.core.redis_client import get_redis

    client = get_redis()
    keys = list(client.scan_iter(f"{PREFIX}:*", count=5000))
    for start in range(0, len(keys), 5000):
        client.delete(*keys[start : start + 5000])


# --- servers ---------------------------------------------------------------------------------------


@dataclass
class Server:
    mode: str
    port: int
    process: subprocess.Popen

    @property
    def worker_pid(self) -> int:
        with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as handle:
            return int(handle.read().split()[0])

    def status(self) -> dict[str, int]:
        fields = {}
        with open(f"/proc/{self.worker_pid}/status") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name in ("VmRSS", "Threads"):
                    fields[name] = int(value.split()[0])
        return fields

    def cpu_seconds(self) -> float:
        """User + system CPU time the worker has used."""
        with open(f"/proc/{self.worker_pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """Stop the server and its worker (the whole process group, whatever their state)."""
        stop_process_group(self.process)


def start_server(mode: str, log_dir: Path) -> Server:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "EXTERNAL_HOST": f"{HOST}:{port}",
        "WEB_CONCURRENCY": "1",
        "ASGI_MODE": mode if mode != "raw" else "thin-route",
        "EVENTS_HEARTBEAT_SECONDS": "600,600",
        "RATE_LIMIT_API_BY_USER": "1000000",
        "RATE_LIMIT_API_BY_IP": "1000000",
        "LOG_LEVEL": "INFO",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_POOL": "false",
    }
    if mode == "raw":
        command = ["-m", "gunicorn", "-k", "config.workers.ParleyUvicornWorker", "-w", "1", "-b", f"{HOST}:{port}"]
        command += ["--timeout", "120", "benchmarks.events.raw_app:app"]
    else:
        command = ["-m", "gunicorn", "-c", "config/gunicorn.py", "config.asgi:application"]
    log = (log_dir / f"server-{mode}-{port}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, *command], cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    server = Server(mode, port, process)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((HOST, port), timeout=1):
                time.sleep(1.5)  # let the worker finish booting
                return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"{mode} server did not start; see {log.name}")


# --- scenarios -------------------------------------------------------------------------------------


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


class Target:
    """How to poll, wake and count on one server (Parley or the raw app)."""

    def __init__(self, server: Server, users: list[BenchUser]) -> None:
        self.server, self.users = server, users
        self.queue_ids = create_queues(users) if server.mode != "raw" else [str(u.id) for u in users]

    def poller(self, index: int) -> Poller:
        user, queue_id = self.users[index], self.queue_ids[index]
        if self.server.mode == "raw":
            return Poller(HOST, self.server.port, lambda last: f"/poll?id={queue_id}", {})
        return Poller(
            HOST,
            self.server.port,
            lambda last: f"/api/v1/events?queue_id={queue_id}&last_event_id={last}",
            user.auth_header(),
        )

    async def parked(self, indexes: range) -> int:
        if self.server.mode == "raw":
            connection = HttpConnection(HOST, self.server.port)
            _, body = await connection.request("GET", "/stats")
            connection.close()
            return body["parked"]
        connection = HttpConnection(HOST, self.server.port)
        _, body = await connection.request("GET", "/health/ready")
        connection.close()
        return body["event_polls_waiting"]

    async def wake(self, indexes: list[int]) -> float:
        """Send one event to these pollers; the time it was committed (Parley) or triggered (raw)."""
        if self.server.mode == "raw":
            connection = HttpConnection(HOST, self.server.port)
            await connection.open()
            path = "/wake" if len(indexes) > 1 else f"/wake?id={self.queue_ids[indexes[0]]}"
            started = time.monotonic()
            await connection.request("POST", path)
            connection.close()
            return started
        user_ids = [self.users[i].id for i in indexes]
        return await asyncio.get_running_loop().run_in_executor(None, publish_to, user_ids)

    def cheap_path(self) -> str:
        return "/cheap" if self.server.mode == "raw" else "/api/v1/server_settings"


async def wait_for(condition, timeout: float, step: float = 0.05) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if await condition():
            return time.monotonic()
        await asyncio.sleep(step)
    return None


async def cheap_latency(target: Target, count: int = 300) -> list[float]:
    connection = HttpConnection(HOST, target.server.port)
    await connection.open()
    samples = []
    for _ in range(count):
        started = time.monotonic()
        await connection.request("GET", target.cheap_path())
        samples.append(time.monotonic() - started)
    connection.close()
    return samples


async def idle_scenario(target: Target, count: int) -> dict:
    server = target.server
    await cheap_latency(target, 50)  # warm up
    cpu_started = server.cpu_seconds()
    idle_cheap = await cheap_latency(target, 1000)
    cpu_per_request_us = (server.cpu_seconds() - cpu_started) / 1000 * 1e6
    before = server.status()
    pid = server.worker_pid
    pollers = [target.poller(i) for i in range(count)]
    tasks = await open_in_batches(pollers)
    indexes = range(count)

    async def all_parked() -> bool:
        return await target.parked(indexes) >= count

    result: dict = {
        "mode": server.mode,
        "polls": count,
        "idle_cheap_p50_ms": round(percentile(idle_cheap, 0.5) * 1000, 2),
        "cpu_per_cheap_request_us": round(cpu_per_request_us),
    }
    if await wait_for(all_parked, timeout=180, step=0.5) is None:
        result["error"] = f"only {await target.parked(indexes)} of {count} polls parked"
        return await finish(result, tasks, pollers)
    await asyncio.sleep(2)
    parked = server.status()
    cheap = await cheap_latency(target)
    result |= {
        "rss_before_kb": before["VmRSS"],
        "rss_parked_kb": parked["VmRSS"],
        "bytes_per_poll": round((parked["VmRSS"] - before["VmRSS"]) * 1024 / count),
        "threads_before": before["Threads"],
        "threads_parked": parked["Threads"],
        "cheap_p50_ms": round(percentile(cheap, 0.5) * 1000, 2),
        "cheap_p99_ms": round(percentile(cheap, 0.99) * 1000, 2),
    }
    woken_at = await target.wake(list(indexes))

    async def all_received() -> bool:
        return all(p.received for p in pollers)

    done = await wait_for(all_received, timeout=180)
    if done is None:
        result["error"] = f"{sum(1 for p in pollers if p.received)} of {count} polls received the event"
        return await finish(result, tasks, pollers)
    result["wake_all_s"] = round(max(p.received[0][0] for p in pollers) - woken_at, 3)
    reparked = await wait_for(all_parked, timeout=180, step=0.05)
    result["repark_s"] = round(reparked - woken_at, 3) if reparked else None
    result["worker_restarted"] = server.process.poll() is not None or server.worker_pid != pid
    result["threads_after"] = server.status()["Threads"]
    return await finish(result, tasks, pollers)


async def finish(result: dict, tasks: list[asyncio.Task], pollers: list[Poller]) -> dict:
    result["client_errors"] = sum(p.errors for p in pollers)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for poller in pollers:
        poller.connection.close()
    return result


async def delivery_scenarios(target: Target, idle: int, rounds: int = 9) -> tuple[dict, dict]:
    """With `idle` + 1 polls parked: delivery latency to one client, then fan-out to the `idle` others."""
    pollers = [target.poller(i) for i in range(idle + 1)]
    tasks = await open_in_batches(pollers)

    async def all_parked() -> bool:
        return await target.parked(range(idle + 1)) >= idle + 1

    latency: dict = {"mode": target.server.mode, "parked": idle}
    fanout: dict = {"mode": target.server.mode, "users": idle}
    if await wait_for(all_parked, timeout=120, step=0.5) is None:
        latency["error"] = fanout["error"] = "polls did not park"
        await finish(latency, tasks, pollers)
        return latency, fanout
    latency |= await latency_rounds(target, pollers[idle], idle)
    if target.server.mode != "raw":
        latency["message"] = await message_rounds(target, pollers[idle], target.users[0])
    # Fan-out: one event to `idle` users' queues, until the last of them has it; then let every
    # client poll again before the next round. The median of several rounds.
    durations = []
    for _ in range(rounds):
        woken = pollers[:idle]
        counts = [len(p.received) for p in woken]
        woken_at = await target.wake(list(range(idle)))

        async def all_received(counts: list[int] = counts, woken: list[Poller] = woken) -> bool:
            return all(len(p.received) > n for p, n in zip(woken, counts, strict=True))

        if await wait_for(all_received, timeout=60, step=0.001) is None:
            fanout["error"] = "not every client received the event"
            break
        durations.append(max(p.received[-1][0] for p in woken) - woken_at)
        await wait_for(all_parked, timeout=60, step=0.05)
        await asyncio.sleep(0.2)
    if durations:
        fanout |= {
            "median_s": round(percentile(durations, 0.5), 3),
            "min_s": round(min(durations), 3),
            "max_s": round(max(durations), 3),
            "rounds": len(durations),
        }
    await finish(latency, tasks, pollers)
    fanout["client_errors"] = latency["client_errors"]
    return latency, fanout


async def latency_rounds(target: Target, measured: Poller, index: int, samples: int = 200) -> dict:
    """Commit-to-client time of `samples` events sent to one client, one at a time."""
    latencies = []
    for i in range(samples):
        woken_at = await target.wake([index])

        async def arrived(n: int = i) -> bool:
            return len(measured.received) > n

        await wait_for(arrived, timeout=10, step=0.0005)
        latencies.append(measured.received[i][0] - woken_at)
        await asyncio.sleep(0.01)
    return {
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "max_ms": round(max(latencies) * 1000, 2),
    }


async def message_rounds(target: Target, measured: Poller, sender: BenchUser, samples: int = 200) -> dict:
    """POST /messages (a direct message from `sender`) -> the measured client's parked poll has it:
    `samples` messages, one at a time; also how long the POST itself took."""
    recipient_id = target.users[-1].id  # the measured poller's user
    connection = HttpConnection(HOST, target.server.port)
    await connection.open()
    body = f"type=private&to=%5B{recipient_id}%5D&content=hello".encode()
    latencies, posts = [], []
    for _ in range(samples):
        count = len(measured.received)
        started = time.monotonic()
        status, _ = await connection.request("POST", "/api/v1/messages", sender.auth_header(), body)
        posts.append(time.monotonic() - started)
        if status != 200:
            connection.close()
            return {"error": f"POST /messages answered {status}"}

        async def arrived(n: int = count) -> bool:
            return any(event["type"] == "message" for _, event in measured.received[n:])

        if await wait_for(arrived, timeout=10, step=0.0005) is None:
            connection.close()
            return {"error": "a message did not arrive"}
        latencies.append(next(t for t, e in measured.received[count:] if e["type"] == "message") - started)
        await asyncio.sleep(0.01)
    connection.close()
    return {
        "send_to_receive_p50_ms": round(percentile(latencies, 0.5) * 1000, 2),
        "send_to_receive_p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "post_p50_ms": round(percentile(posts, 0.5) * 1000, 2),
        "post_p99_ms": round(percentile(posts, 0.99) * 1000, 2),
    }


def redis_round_trip() -> dict:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    samples = []
    for _ in range(2000):
        started = time.monotonic()
        client.ping()
        samples.append(time.monotonic() - started)
    return {"p50_ms": round(percentile(samples, 0.5) * 1000, 3), "p99_ms": round(percentile(samples, 0.99) * 1000, 3)}


# --- main ----------------------------------------------------------------------------------------------


async def run(args, users: list[BenchUser]) -> dict:
    polls = [int(n) for n in args.polls.split(",")]
    modes = args.modes.split(",")
    log_dir = Path(args.logs)
    log_dir.mkdir(parents=True, exist_ok=True)
    results: dict = {"idle": [], "latency": [], "fanout": [], "redis": await asyncio.to_thread(redis_round_trip)}
    for mode in modes:
        for count in polls:
            if mode == "stock-django" and count > args.stock_max:
                results["idle"].append({"mode": mode, "polls": count, "error": f"not attempted above {args.stock_max}"})
                continue
            clear_redis()
            server = start_server(mode, log_dir)
            try:
                target = Target(server, users[:count])
                result = await idle_scenario(target, count)
            finally:
                server.stop()
            print(json.dumps(result), flush=True)
            results["idle"].append(result)
        clear_redis()
        server = start_server(mode, log_dir)
        try:
            target = Target(server, users[: args.latency_parked + 1])
            latency, fanout = await delivery_scenarios(target, args.latency_parked)
        finally:
            server.stop()
        for name, result in (("latency", latency), ("fanout", fanout)):
            print(json.dumps(result), flush=True)
            results[name].append(result)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--polls", default="1000,5000,10000")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--latency-parked", type=int, default=1000)
    parser.add_argument("--stock-max", type=int, default=10000)
    parser.add_argument("--logs", default=str(BASE_DIR / "var" / "bench"))
    parser.add_argument("--out", default=str(BASE_DIR / "var" / "bench" / "results.json"))
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    polls = [int(n) for n in args.polls.split(",")]
    users = prepare_users(max([*polls, args.latency_parked]) + 1)
    results = asyncio.run(run(args, users))
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps(results["redis"]))
    print(f"results in {args.out}")


if __name__ == "__main__":
    main()
