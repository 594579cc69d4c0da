"""Presence pings: what one server process (one uvicorn worker, PostgreSQL and Redis as in CI)
sustains, against the load of 10,000 users whose clients ping every 60 s (~167 pings a second).

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> BENCH_REDIS_URL=redis://127.0.0.1:6379/<n> \\
        .venv/bin/python benchmarks/presence/run.py --users 10000

The database is dropped and filled with one organization of --users members (with more than 100
active users no presence events are sent, as in Zulip). Phases, each on --connections keep-alive
connections sending `POST /users/me/presence status=active ping_only=true`, users in turn:

1. first: every user's first ping (creates their presence);
2. writing: every user's next ping, 56 s later (each moves their times and numbers the change:
   the steady state, where a client pinging every 60 s writes every time);
3. reading: every user's ping again at once (within 55 s: the store is read, nothing written);
4. paced: --rate pings a second (default 167) for --seconds, writing (56 s after phase 2), one
   connection per ping in flight: the latency at the target load;
5. modern: --modern pings one at a time with `last_update_id` 0, each answered with every user
   (the answer a modern client gets after a minute in an organization where everyone is online).

Printed (and written to var/bench/presence.json): pings per second, p50 and p99 latency, and the
worker's CPU time per ping.
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_bench_presence")

from benchmarks.events import run as events_bench  # noqa: E402
from benchmarks.events.client import HttpConnection  # noqa: E402
from benchmarks.requests.run import start  # noqa: E402

PING = b"status=active&ping_only=true"
MODERN = b"status=active&last_update_id=0"


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def figures(latencies: list[float], elapsed: float, cpu: float) -> dict:
    return {
        "pings": len(latencies),
        "pings_per_second": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "cpu_us_per_ping": round(cpu / len(latencies) * 1e6, 1),
    }


async def saturate(server, users, connections: int, body: bytes = PING) -> dict:
    """Every user pings once, `connections` at a time, as fast as the server answers."""
    headers = [user.auth_header() for user in users]
    latencies: list[float] = []
    next_user = iter(range(len(users)))

    async def worker() -> None:
        connection = HttpConnection(events_bench.HOST, server.port)
        for index in next_user:
            started = time.perf_counter()
            status, answer = await connection.request("POST", "/api/v1/users/me/presence", headers[index], body)
            latencies.append(time.perf_counter() - started)
            assert status == 200, answer
        connection.close()

    cpu_before, started = server.cpu_seconds(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return figures(latencies, time.perf_counter() - started, server.cpu_seconds() - cpu_before)


async def paced(server, users, rate: float, seconds: float) -> dict:
    """`rate` pings a second for `seconds`, each on a connection of a pool, whatever the answers."""
    count = min(len(users), int(rate * seconds))
    pool: asyncio.Queue = asyncio.Queue()
    for _ in range(64):
        pool.put_nowait(HttpConnection(events_bench.HOST, server.port))
    latencies: list[float] = []

    async def one(user) -> None:
        connection = await pool.get()
        started = time.perf_counter()
        status, answer = await connection.request("POST", "/api/v1/users/me/presence", user.auth_header(), PING)
        latencies.append(time.perf_counter() - started)
        pool.put_nowait(connection)
        assert status == 200, answer

    cpu_before, began = server.cpu_seconds(), time.perf_counter()
    tasks = []
    for n, user in enumerate(users[:count]):
        delay = began + n / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(user)))
    await asyncio.gather(*tasks)
    result = figures(latencies, time.perf_counter() - began, server.cpu_seconds() - cpu_before)
    while not pool.empty():
        pool.get_nowait().close()
    return {**result, "target_per_second": rate}


async def modern(server, users, count: int) -> dict:
    connection = HttpConnection(events_bench.HOST, server.port)
    latencies = []
    cpu_before, began = server.cpu_seconds(), time.perf_counter()
    for n in range(count):
        started = time.perf_counter()
        status, answer = await connection.request("POST", "/api/v1/users/me/presence", users[n].auth_header(), MODERN)
        latencies.append(time.perf_counter() - started)
        assert status == 200, answer
    connection.close()
    return {
        **figures(latencies, time.perf_counter() - began, server.cpu_seconds() - cpu_before),
        "users_in_answer": len(answer["presences"]),
    }


def wait_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rate", type=float, default=167.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--modern", type=int, default=50)
    parser.add_argument("--out", default=str(BASE_DIR / "var" / "bench" / "presence.json"))
    args = parser.parse_args()
    log_dir = Path(args.out).parent
    log_dir.mkdir(parents=True, exist_ok=True)
    users = events_bench.prepare_users(args.users)
    events_bench.clear_redis()
    server = start(BASE_DIR, log_dir)
    results = {}
    try:
        results["first"] = asyncio.run(saturate(server, users, args.connections))
        print("first", results["first"], flush=True)
        wait_until(time.monotonic() + 56)
        results["writing"] = asyncio.run(saturate(server, users, args.connections))
        second_done = time.monotonic()
        print("writing", results["writing"], flush=True)
        results["reading"] = asyncio.run(saturate(server, users, args.connections))
        print("reading", results["reading"], flush=True)
        results["modern"] = asyncio.run(modern(server, users, args.modern))
        print("modern", results["modern"], flush=True)
        wait_until(second_done + 56)
        results["paced"] = asyncio.run(paced(server, users, args.rate, args.seconds))
        print("paced", results["paced"], flush=True)
    finally:
        server.stop()
    report = {"users": args.users, "connections": args.connections, **results}
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
