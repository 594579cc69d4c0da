"""The load scenario (issue 22): simulated people doing what a working day's clients do, against a
real server on PostgreSQL and Redis with N workers, in steps of more and more people.

    .venv/bin/python benchmarks/scale/build.py S           # the organization (1,000 people)
    .venv/bin/python benchmarks/load/run.py --steps 100,250,500 --step-seconds 60 --workers 2

Each simulated person, as the Zulip apps do: registers an event queue (everything, as a client
starting up), long-polls it without a pause, pings presence every 60 s, reads a channel's newest
messages now and then, sends to one of their channels now and then, and marks what arrives read.
People join at the start of a step, spread over --join-seconds (their registering is reported
apart), and stay for the next steps; then the step is measured for --step-seconds. The ratio that
comes out is the one Zulip reports for its own servers: event polls first, then presence, then
messages and everything else.

Per step it prints the requests by kind (count, errors, p50/p99 latency), send -> receive (the
time from a POST /messages to the message's event reaching each recipient's poll, p50/p99/max),
and the CPU used by the server's processes, PostgreSQL, Redis and this load generator (all on
the same machine: their sum is what the machine gave), with the server's memory. A step is
"sustained" when send -> receive p99 is under 1 s and nothing failed. Results also go to
var/bench/load.json.

The organization is benchmarks/scale's (its people, their channels and API keys are read from
the database); the server is started by this script on a copy of that database made afresh for each run
(parley_bench_load), with the product's settings, rate limits included, the task worker running.
"""

import argparse
import asyncio
import base64
import json
import os
import random
import secrets
import subprocess
import sys
import time
import urllib.parse
from collections import defaultdict
from pathlib import Path

import psycopg

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

from benchmarks.events.client import HttpConnection  # noqa: E402
from benchmarks.processes import HOST, free_port, stop_process_group  # noqa: E402

SUSTAINED_P99_SECONDS = 1.0
MARKER = "load-test"
TOPICS = [f"topic {n}" for n in range(5)]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def fresh_database(options) -> None:
    """The measured database, copied again from the built organization (each run starts the same)."""
    admin = options.database_url.rsplit("/", 1)[0] + "/postgres"
    name, template = options.database_url.rsplit("/", 1)[1], options.organization.rsplit("/", 1)[1]
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')


def people(database_url: str, count: int) -> list[dict]:
    """Active people of the organization with their keys and the channels they are in besides the
    one everyone is in (`busy`)."""
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT u.id, u.delivery_email, u.api_key,"
            " array_agg(s.name ORDER BY s.name) FILTER (WHERE s.name IS NOT NULL)"
            " FROM users_user u LEFT JOIN subscriptions_subscription sub ON sub.user_id = u.id AND sub.active"
            " LEFT JOIN subscriptions_stream s ON s.id = sub.stream_id AND NOT s.deactivated"
            " WHERE u.is_active AND u.bot_type IS NULL GROUP BY u.id ORDER BY u.id LIMIT %s",
            [count],
        ).fetchall()
    smaller = [[c for c in channels or [] if c != "busy"] for *_, channels in rows]
    return [
        {"id": uid, "email": email, "api_key": key, "channels": small or ["busy"]}
        for (uid, email, key, _), small in zip(rows, smaller, strict=True)
    ]


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.delivery: list[float] = []
        self.event_types: dict[str, int] = defaultdict(int)

    def snapshot_and_reset(self) -> "Stats":
        done = Stats()
        done.latency, done.errors, done.delivery = self.latency, self.errors, self.delivery
        done.event_types = self.event_types
        self.__init__()
        return done


class Person:
    """One simulated person: a poll connection and one for everything else."""

    def __init__(self, row: dict, port: int, stats: Stats, options) -> None:
        self.row, self.stats, self.options = row, stats, options
        token = f"{row['email']}:{row['api_key']}".encode()
        self.headers = {"Authorization": "Basic " + base64.b64encode(token).decode()}
        self.poll = HttpConnection(HOST, port)
        self.other = HttpConnection(HOST, port)
        self.lock = asyncio.Lock()
        self.queue_id: str | None = None
        self.last_event_id = -1
        self.pending: set[asyncio.Task] = set()

    async def call(self, kind: str, method: str, path: str, form: dict | None = None) -> dict | None:
        body = urllib.parse.urlencode(form or {}).encode() if method != "GET" else b""
        async with self.lock:
            started = time.monotonic()
            try:
                status, answer = await self.other.request(method, "/api/v1" + path, self.headers, body)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.other.close()
                self.stats.errors[kind] += 1
                return None
            self.stats.latency[kind].append(time.monotonic() - started)
        if status != 200:
            self.stats.errors[kind] += 1
            return None
        return answer

    async def register(self) -> bool:
        answer = await self.call("register", "POST", "/register", {"apply_markdown": "true"})
        if answer is None:
            return False
        self.queue_id, self.last_event_id = answer["queue_id"], answer["last_event_id"]
        return True

    async def run(self) -> None:
        while not await self.register():
            await asyncio.sleep(5)
        tasks = [self.polling(), self.every(60, self.presence), self.every(self.options.read_every, self.read)]
        tasks.append(self.every(self.options.send_every, self.send, random_interval=True))
        await asyncio.gather(*tasks)

    async def every(self, seconds: float, action, random_interval: bool = False) -> None:
        await asyncio.sleep(random.uniform(0, seconds))
        while True:
            await action()
            await asyncio.sleep(random.expovariate(1 / seconds) if random_interval else seconds)

    async def presence(self) -> None:
        await self.call("presence", "POST", "/users/me/presence", {"status": "active", "new_user_input": "true"})

    async def read(self) -> None:
        narrow = json.dumps([{"operator": "channel", "operand": random.choice(self.row["channels"])}])
        query = urllib.parse.urlencode({"anchor": "newest", "num_before": 20, "num_after": 0, "narrow": narrow})
        await self.call("messages (read)", "GET", f"/messages?{query}")

    async def send(self) -> None:
        # Most messages go to smaller channels; a share to the one everyone is in (#general).
        busy = random.random() < self.options.busy_share
        channel = "busy" if busy else random.choice(self.row["channels"])
        content = f"{MARKER} {time.time():.6f} from {self.row['id']}"
        form = {"type": "stream", "to": channel, "topic": random.choice(TOPICS), "content": content}
        await self.call("messages (send)", "POST", "/messages", form)

    async def polling(self) -> None:
        while True:
            query = urllib.parse.urlencode({"queue_id": self.queue_id, "last_event_id": self.last_event_id})
            started = time.monotonic()
            try:
                status, answer = await self.poll.request("GET", f"/api/v1/events?{query}", self.headers)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.poll.close()
                self.stats.errors["events"] += 1
                await asyncio.sleep(1)
                continue
            self.stats.latency["events"].append(time.monotonic() - started)
            if status != 200:
                self.stats.errors["events"] += 1
                if answer.get("code") == "BAD_EVENT_QUEUE_ID":
                    await self.register()
                else:
                    await asyncio.sleep(1)
                continue
            read = []
            for event in answer["events"]:
                self.stats.event_types[event["type"]] += 1
                self.last_event_id = max(self.last_event_id, event["id"])
                if event["type"] == "message":
                    self.received(event["message"], read)
            if read:
                form = {"messages": json.dumps(read), "op": "add", "flag": "read"}
                # As a client does, without holding up the next poll.
                task = asyncio.create_task(self.call("flags (read)", "POST", "/messages/flags", form))
                self.pending.add(task)
                task.add_done_callback(self.pending.discard)

    def received(self, message: dict, read: list[int]) -> None:
        words = message["content"].replace("<p>", " ").replace("</p>", " ").split()
        if len(words) >= 2 and words[0] == MARKER and message["sender_id"] != self.row["id"]:
            self.stats.delivery.append(time.time() - float(words[1]))
            read.append(message["id"])


async def first_messages(rows: list[dict], port: int, options) -> None:
    """A message in each channel before anyone connects: a channel's first message tells everyone
    who can see the channel its first_message_id (a stream event to the whole organization), which
    would otherwise flood the first steps of a run on benchmarks/scale's organization (whose smaller
    channels have no history) with events a running organization does not produce."""
    senders = {}
    for row in rows:
        for channel in row["channels"]:
            senders.setdefault(channel, row)
    stats = Stats()
    for channel, row in senders.items():
        person = Person(row, port, stats, options)
        form = {"type": "stream", "to": channel, "topic": "hello", "content": "The first message here"}
        await person.call("messages (send)", "POST", "/messages", form)
        person.other.close()
    if stats.errors:
        raise RuntimeError(f"the channels' first messages failed: {dict(stats.errors)}")


def process_usage(names: tuple[str, ...], pids: set[int] = frozenset()) -> tuple[float, int]:
    """CPU seconds and resident bytes of the processes named `names` or in `pids` (from /proc)."""
    cpu, rss = 0.0, 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name in names or int(entry) in pids:
            fields = stat[stat.rindex(")") + 2 :].split()
            cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
            rss += int(fields[21]) * PAGE_SIZE
    return cpu, rss


def server_pids(root: int) -> set[int]:
    """The server's master and every process under it (workers, the task worker)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children[int(stat[stat.rindex(")") + 2 :].split()[1])].append(int(entry))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo += children.get(pid, [])
    return found


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (every core), from /proc/stat."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def usage(server: subprocess.Popen) -> dict[str, tuple[float, int]]:
    # PostgreSQL's figure misses backends that exited during the step; the machine's does not.
    return {
        "server": process_usage((), server_pids(server.pid)),
        "postgresql": process_usage(("postgres",)),
        "redis": process_usage(("redis-server",)),
        "load generator": (sum(os.times()[:2]), 0),
        "machine": (machine_busy_seconds(), 0),
    }


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def start_server(options, log_path: Path) -> subprocess.Popen:
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": options.database_url,
        "REDIS_URL": options.redis_url,
        "REDIS_KEY_PREFIX": "parley-bench-load",
        "PORT": str(port),
        "EXTERNAL_HOST": f"{HOST}:{port}",
        "WEB_CONCURRENCY": str(options.workers),
        "LOG_LEVEL": "WARNING",
        "SECRET_KEY": secrets.token_urlsafe(50),
    }
    command = [str(BASE_DIR / ".venv" / "bin" / "python"), "-m", "gunicorn", "-c", "config/gunicorn.py"]
    process = subprocess.Popen(
        [*command, "config.asgi:application"], cwd=BASE_DIR, env=env, stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    process.port = port
    return process


async def wait_until_serving(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status, _ = await HttpConnection(HOST, port).request("GET", "/health/ready")
            if status == 200:
                return
        except OSError:
            pass
        await asyncio.sleep(0.5)
    raise RuntimeError("the server did not start")


def report(step: int, seconds: float, stats: Stats, joined: Stats, before: dict, after: dict) -> dict:
    requests = {
        kind: {
            "count": len(samples),
            "errors": stats.errors.get(kind, 0),
            "p50_ms": round(percentile(samples, 0.5) * 1000, 1),
            "p99_ms": round(percentile(samples, 0.99) * 1000, 1),
        }
        for kind, samples in sorted(stats.latency.items())
    }
    for kind, errors in stats.errors.items():
        requests.setdefault(kind, {"count": 0, "errors": errors})
    delivery = {
        "count": len(stats.delivery),
        "p50_ms": round(percentile(stats.delivery, 0.5) * 1000, 1),
        "p99_ms": round(percentile(stats.delivery, 0.99) * 1000, 1),
        "max_ms": round(max(stats.delivery, default=float("nan")) * 1000, 1),
    }
    cpu = {name: round((after[name][0] - before[name][0]) / seconds * 100, 1) for name in after}
    errors = sum(entry["errors"] for entry in requests.values())
    result = {
        "people": step,
        "seconds": round(seconds, 1),
        "requests": requests,
        "send_to_receive": delivery,
        "events_received": dict(stats.event_types),
        "cpu_percent_of_one_core": cpu,
        "server_rss_mb": round(after["server"][1] / 2**20, 1),
        "sustained": errors == 0 and delivery["count"] > 0 and delivery["p99_ms"] < SUSTAINED_P99_SECONDS * 1000,
    }
    total = sum(entry["count"] for entry in requests.values()) or 1
    registers = joined.latency.get("register", [])
    result["joining"] = {
        "registers": len(registers),
        "errors": sum(joined.errors.values()),
        "register_p50_ms": round(percentile(registers, 0.5) * 1000, 1),
        "register_p99_ms": round(percentile(registers, 0.99) * 1000, 1),
    }
    print(f"\n== {step} people, {seconds:.0f} s: {'sustained' if result['sustained'] else 'NOT sustained'}")
    print(f"  joining: {len(registers)} registered (p50 {result['joining']['register_p50_ms']} ms, p99"
          f" {result['joining']['register_p99_ms']} ms), {result['joining']['errors']} errors")  # fmt: skip
    for kind, entry in requests.items():
        share = 100 * entry["count"] / total
        print(f"  {kind:18} {entry['count']:7} ({share:4.1f}%) errors {entry['errors']:4}"
              f"  p50 {entry.get('p50_ms', '-'):>7} ms  p99 {entry.get('p99_ms', '-'):>7} ms")  # fmt: skip
    print(f"  send -> receive    {delivery['count']:7} deliveries  p50 {delivery['p50_ms']} ms"
          f"  p99 {delivery['p99_ms']} ms  max {delivery['max_ms']} ms")  # fmt: skip
    kinds = sorted(stats.event_types.items(), key=lambda item: -item[1])
    print("  events received: " + ", ".join(f"{kind} {count}" for kind, count in kinds))
    print("  CPU (% of one core): " + ", ".join(f"{name} {value}" for name, value in cpu.items()))
    print(f"  server memory (all its processes): {result['server_rss_mb']} MB")
    return result


async def scenario(options) -> list[dict]:
    fresh_database(options)
    rows = people(options.database_url, max(options.steps))
    if len(rows) < max(options.steps):
        raise SystemExit(f"the organization has {len(rows)} people; the steps need {max(options.steps)}")
    log_path = BASE_DIR / "var" / "bench" / "load-server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    server = start_server(options, log_path)
    stats, results, tasks = Stats(), [], []
    try:
        await wait_until_serving(server.port)
        await first_messages(rows, server.port, options)
        for step in options.steps:
            joining = [Person(row, server.port, stats, options) for row in rows[len(tasks) : step]]
            for person in joining:
                tasks.append(asyncio.create_task(person.run()))
                await asyncio.sleep(options.join_seconds / max(len(joining), 1))
            await asyncio.sleep(5)  # the last to join register and start polling
            joined = stats.snapshot_and_reset()
            before, started = usage(server), time.monotonic()
            await asyncio.sleep(options.step_seconds)
            measured = stats.snapshot_and_reset()
            results.append(report(step, time.monotonic() - started, measured, joined, before, usage(server)))
    finally:
        for task in tasks:
            task.cancel()
        stop_process_group(server)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--organization",
        default="postgres://postgres@127.0.0.1:5432/parley_bench_scale_s",
        help="the database benchmarks/scale/build.py built (copied, never changed)",
    )
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/parley_bench_load")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", default="100,250,500", help="people at each step, comma-separated")
    parser.add_argument("--step-seconds", type=float, default=60, help="measured seconds of each step")
    parser.add_argument("--join-seconds", type=float, default=20, help="over which a step's new people join")
    parser.add_argument("--send-every", type=float, default=600, help="mean seconds between one person's sends")
    parser.add_argument("--busy-share", type=float, default=0.1, help="share of messages to the channel of all")
    parser.add_argument("--read-every", type=float, default=90, help="seconds between one person's reads")
    options = parser.parse_args()
    options.steps = sorted(int(n) for n in options.steps.split(","))
    results = asyncio.run(scenario(options))
    out = BASE_DIR / "var" / "bench" / "load.json"
    out.write_text(json.dumps({"options": vars(options), "steps": results}, indent=1))
    print(f"\nwritten to {out}")


if __name__ == "__main__":
    main()
