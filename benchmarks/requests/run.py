"""CPU per cheap request: what one server process spends on an ordinary API request, compared
between checkouts of Parley (e.g. before and after a change) in one run on one machine.

    .venv/bin/python benchmarks/requests/run.py                          # this checkout
    .venv/bin/python benchmarks/requests/run.py --repos /path/to/old,.   # old against this one

Each checkout serves in turn (one gunicorn process, one uvicorn worker, PostgreSQL and Redis as in
CI), rounds alternating between checkouts; a round sends `--requests` requests of each kind one at a
time on a keep-alive connection after a warm-up, and reads the worker's user+system CPU time before
and after. Medians over the rounds are printed, and written to var/bench/requests.json.

Every checkout must have its own .venv (`make install` there). The database (BENCH_DATABASE_URL,
default parley_bench_requests) is dropped, migrated with this checkout's code and filled with one
organization of --users members.
"""

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

os.environ.setdefault("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_bench_requests")

from benchmarks.events import run as events_bench  # noqa: E402
from benchmarks.events.client import HttpConnection  # noqa: E402

REQUESTS = {
    "GET /server_settings (anonymous)": ("GET", "/api/v1/server_settings", False),
    "GET /users/me": ("GET", "/api/v1/users/me", True),
    "GET /users/{id}": ("GET", "/api/v1/users/{user_id}", True),
}


def start(repo: Path, log_dir: Path) -> events_bench.Server:
    """One server process of the checkout at `repo`, on the benchmark's database and Redis."""
    port = events_bench.free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": events_bench.DATABASE_URL,
        "REDIS_URL": events_bench.REDIS_URL,
        "REDIS_KEY_PREFIX": events_bench.PREFIX,
        "PORT": str(port),
        "EXTERNAL_HOST": f"{events_bench.HOST}:{port}",
        "WEB_CONCURRENCY": "1",
        "RATE_LIMIT_API_BY_USER": "1000000",
        "RATE_LIMIT_API_BY_IP": "1000000",
        "LOG_LEVEL": "WARNING",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_POOL": "false",
    }
    log = (log_dir / f"server-requests-{port}.log").open("wb")
    command = [str(repo / ".venv" / "bin" / "python"), "-m", "gunicorn", "-c", "config/gunicorn.py"]
    process = subprocess.Popen(
        [*command, "config.asgi:application"], cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    server = events_bench.Server("thin-route", port, process)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server of {repo} exited; see {log.name}")
        try:
            events_bench.socket.create_connection((events_bench.HOST, port), timeout=1).close()
            time.sleep(1.5)  # let the worker finish booting
            return server
        except OSError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"the server of {repo} did not start; see {log.name}")


async def measure(server: events_bench.Server, user: events_bench.BenchUser, count: int) -> dict[str, dict]:
    connection = HttpConnection(events_bench.HOST, server.port)
    results = {}
    for name, (method, path, authenticated) in REQUESTS.items():
        path = path.format(user_id=user.id)
        headers = user.auth_header() if authenticated else {}
        for _ in range(200):  # warm-up: imports, caches, the connection
            status, _ = await connection.request(method, path, headers)
            assert status == 200, (name, status)
        latencies = []
        cpu_before = server.cpu_seconds()
        for _ in range(count):
            started = time.perf_counter()
            status, _ = await connection.request(method, path, headers)
            latencies.append(time.perf_counter() - started)
            assert status == 200, (name, status)
        cpu = server.cpu_seconds() - cpu_before
        results[name] = {
            "cpu_us_per_request": round(cpu / count * 1e6, 1),
            "p50_ms": round(statistics.median(latencies) * 1000, 3),
        }
    connection.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", default=str(BASE_DIR), help="comma-separated checkouts to compare")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--out", default=str(BASE_DIR / "var" / "bench" / "requests.json"))
    args = parser.parse_args()
    repos = [Path(repo).resolve() for repo in args.repos.split(",")]
    log_dir = Path(args.out).parent
    log_dir.mkdir(parents=True, exist_ok=True)
    users = events_bench.prepare_users(args.users)
    events_bench.clear_redis()
    samples: dict[str, dict[str, list[dict]]] = {str(repo): {} for repo in repos}
    for round_number in range(args.rounds):
        for repo in repos if round_number % 2 == 0 else reversed(repos):
            server = start(repo, log_dir)
            try:
                result = asyncio.run(measure(server, users[0], args.requests))
            finally:
                server.stop()
            print(json.dumps({"round": round_number, "repo": str(repo), **result}), flush=True)
            for name, figures in result.items():
                samples[str(repo)].setdefault(name, []).append(figures)
    summary = {
        repo: {
            name: {key: statistics.median(s[key] for s in rounds) for key in rounds[0]}
            for name, rounds in by_request.items()
        }
        for repo, by_request in samples.items()
    }
    report = {"rounds": args.rounds, "requests": args.requests, "median": summary}
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
