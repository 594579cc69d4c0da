"""The scale benchmark's runner (issue 21): the table of benchmarks/scale/README.md, for checkouts of
Parley compared in one run on one machine.

    .venv/bin/python benchmarks/scale/build.py S                          # once (build.py's docstring)
    .venv/bin/python benchmarks/scale/run.py --sizes S --repos /path/to/before,.

For each round, size and checkout (each round measures every size, so that the machine's drift over
the run weighs on the sizes alike; rounds alternate the checkouts' order) one gunicorn process with
one uvicorn worker serves the built organization, PostgreSQL and Redis as in production (rate limits
on, high enough never to refuse); the task worker is off. The database is vacuumed first (see
vacuum()), its Redis database (the benchmark's own) emptied, then one member of the busy channel in
ten registers an event queue for messages, as people with the app open would (their queues fill as
the channel's messages are sent; nobody polls them during the measurement). Each request of the
table is sent twice to warm up, then `--requests` times one at a time on a keep-alive connection:
its latency (client side), the answer's size and its queries (counted by the benchmark's own
settings module, stack/scale_bench_settings.py, which also serves the bare view) are kept. The
measured user's register and mark-all-as-read find their unread messages as built (reset before
each: 10,000 at S, 100,000 at L); a second register is a typical member's (1,000 messages, 50
unread; one of those with an event queue). `create_user` is timed in the checkout's own Python
(stack/scale_bench_create_user.py), rolled back each time. Then `wrk` measures throughput of the
bare view, the bare view making GET /users/me's two round trips, GET /users/me and GET
/server_settings (`--wrk-seconds` each, 32 keep-alive connections, 2 threads). Medians over every
round are printed per checkout, and everything lands in var/bench/scale.json.

Every checkout needs its own .venv. A checkout runs on the built database, or on a copy of it named
by a suffix (`--repos ../before@_before,.`: parley_bench_scale_s_before), so that one older than a
migration runs on the schema it knows. Each is made afresh from the build's own copy
(parley_bench_scale_s_built) before the size is measured, unless `--keep-databases` is given (a
copy migrated back by hand, say).
"""

import argparse
import base64
import http.client
import json
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import redis

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

from benchmarks.processes import free_port, stop_process_group  # noqa: E402
from benchmarks.scale import build  # noqa: E402

STACK = Path(__file__).resolve().parent / "stack"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
HOST = "127.0.0.1"
HUGE_LIMIT = "100000000"
# One member of the busy channel in LISTENER_SHARE has an event queue while the requests are
# measured (issue 21: the marginal cost of a recipient is measured with queues for a tenth).
LISTENER_SHARE = 10
# The register of a typical member (the first of those with a queue), beside the measured user's.
MEMBER_REGISTER = "POST /register (a member with 50 unread)"


def requests_of(manifest: dict) -> dict[str, tuple[str, str, dict | None]]:
    """name -> (method, path, form) of each row of the table."""
    narrow = json.dumps([{"operator": "channel", "operand": manifest["busy"]}])
    query = urllib.parse.urlencode({"anchor": "first_unread", "num_before": 50, "num_after": 50, "narrow": narrow})

    def send(channel: str) -> dict:
        return {"type": "stream", "to": channel, "topic": "bench", "content": "Hello from the benchmark"}

    return {
        "POST /register": ("POST", "/api/v1/register", {}),
        MEMBER_REGISTER: ("POST", "/api/v1/register", {}),
        "GET /users": ("GET", "/api/v1/users", None),
        "GET /streams": ("GET", "/api/v1/streams", None),
        "POST /messages (busy channel)": ("POST", "/api/v1/messages", send(manifest["busy"])),
        "POST /messages (5 people)": ("POST", "/api/v1/messages", send(manifest["small"])),
        "GET /messages first_unread (busy channel)": ("GET", f"/api/v1/messages?{query}", None),
        "POST /mark_all_as_read": ("POST", "/api/v1/mark_all_as_read", {}),
    }


class Server:
    def __init__(self, repo: Path, database_url: str, log_dir: Path, **settings: str) -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "scale_bench_settings",
            "PYTHONPATH": str(STACK),
            "DATABASE_URL": database_url,
            "DATABASE_POOL": "false",
            "REDIS_URL": REDIS_URL,
            "REDIS_KEY_PREFIX": "parley-bench-scale",
            "PORT": str(self.port),
            "EXTERNAL_HOST": f"{HOST}:{self.port}",
            "WEB_CONCURRENCY": "1",
            "TASK_WORKER": "0",
            "RATE_LIMIT_API_BY_USER": HUGE_LIMIT,
            "RATE_LIMIT_API_BY_IP": HUGE_LIMIT,
            "LOG_LEVEL": "WARNING",
            "SECRET_KEY": secrets.token_urlsafe(50),
            **settings,
        }
        self.log = log_dir / f"server-scale-{self.port}.log"
        command = [str(repo / ".venv" / "bin" / "python"), "-m", "gunicorn", "-c", "config/gunicorn.py"]
        self.process = subprocess.Popen(
            [*command, "config.asgi:application"], cwd=repo, env=env, stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server of {repo} exited; see {self.log}")
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                time.sleep(1.5)  # let the worker finish booting
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the server of {repo} did not start; see {self.log}")

    def stop(self) -> None:
        stop_process_group(self.process)


def auth_header(credentials: dict) -> str:
    return "Basic " + base64.b64encode(f"{credentials['email']}:{credentials['api_key']}".encode()).decode()


def send(connection: http.client.HTTPConnection, method: str, path: str, form: dict | None, auth: str):
    headers = {"Authorization": auth, "X-Bench-Count": "1"}
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    started = time.perf_counter()
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    payload = response.read()
    elapsed = time.perf_counter() - started
    if response.status != 200:
        raise RuntimeError(f"{method} {path}: {response.status} {payload[:300]!r}")
    return elapsed, len(payload), int(response.getheader("X-Bench-Queries", "-1"))


def reset_unread(database_url: str, size: str) -> None:
    import psycopg

    url = database_url.replace("postgres://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cursor:
        build.reset_unread(size, cursor)


def vacuum(database_url: str) -> None:
    """VACUUM (ANALYZE) the database, as autovacuum would have by then: each round rewrites hundreds
    of thousands of per-user rows (the unread messages reset before each register, then marked
    read), and a PostgreSQL without autovacuum (this machine kind's CI configuration) would have
    every round wade through all the dead rows of the rounds before. Then a CHECKPOINT, so that
    writing out the pages the vacuum changed does not slow the round that follows."""
    import psycopg

    url = database_url.replace("postgres://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")


# PostgreSQL's settings that decide what a big channel's message costs, recorded with the results:
# one message to 10,000 people writes a row into 20,000 index pages (each person's newest entries),
# about 160 MB, more than PostgreSQL's default shared_buffers (128 MB) holds.
POSTGRESQL_SETTINGS = ("shared_buffers", "max_wal_size", "synchronous_commit", "server_version")


def postgresql_settings(database_url: str) -> dict[str, str]:
    import psycopg

    with psycopg.connect(database_url.replace("postgres://", "postgresql://")) as conn:
        return {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in POSTGRESQL_SETTINGS}


def restore_databases(database_url: str, suffixes: set[str]) -> None:
    """Each checkout's database (the built one's name plus its suffix) afresh from the copy the build
    kept, so that every run measures the organization as built: a run sends thousands of messages
    to everyone and creates people, and a second run on the same database measured an older,
    bigger organization (a recipient cost 17 µs instead of 10 at L)."""
    admin_url, name = database_url.rsplit("/", 1)[0] + "/postgres", database_url.rsplit("/", 1)[1]
    pristine = build.pristine_name(name)
    import psycopg

    with psycopg.connect(admin_url.replace("postgres://", "postgresql://"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [pristine]).fetchone()
    if not exists:
        raise SystemExit(f"{pristine} is missing: build the organization again (build.py), or pass --keep-databases")
    for suffix in sorted(suffixes):
        build.copy_database(admin_url, pristine, name + suffix)


def listener_credentials(database_url: str, manifest: dict) -> list[dict]:
    """Every LISTENER_SHARE-th member of the busy channel (the measured user aside), by id."""
    import psycopg

    url = database_url.replace("postgres://", "postgresql://")
    with psycopg.connect(url) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT u.delivery_email, u.api_key FROM users_user u"
            " JOIN subscriptions_subscription s ON s.user_id = u.id AND s.active"
            " JOIN subscriptions_stream c ON c.id = s.stream_id"
            " WHERE c.name = %s AND u.is_active AND u.delivery_email <> %s ORDER BY u.id",
            [manifest["busy"], manifest["measured"]["email"]],
        )
        rows = cursor.fetchall()
    return [{"email": email, "api_key": key} for email, key in rows[LISTENER_SHARE - 1 :: LISTENER_SHARE]]


def register_listeners(server: Server, credentials: list[dict]) -> None:
    """An event queue for each of `credentials` (POST /register for messages, no initial state), so
    that a send to the busy channel has queues to fill, as in an organization at work."""
    connection = http.client.HTTPConnection(HOST, server.port, timeout=120)
    form = {"event_types": '["message"]', "fetch_event_types": "[]"}
    for person in credentials:
        send(connection, "POST", "/api/v1/register", form, auth_header(person))
    connection.close()


# Requests measured with the measured user's unread messages as built (10,000 at S, 100,000 at L),
# whatever the rows before them read.
UNREAD_AS_BUILT = ("POST /register", "POST /mark_all_as_read")


def measure_requests(
    server: Server, manifest: dict, database_url: str, count: int, member: dict
) -> dict[str, list[tuple[float, int, int]]]:
    auth = auth_header(manifest["measured"])
    connection = http.client.HTTPConnection(HOST, server.port, timeout=120)
    samples: dict[str, list[tuple[float, int, int]]] = {}
    for name, (method, path, form) in requests_of(manifest).items():
        for index in range(count + 2):
            if name in UNREAD_AS_BUILT:
                reset_unread(database_url, manifest["size"])
            who = auth_header(member) if name == MEMBER_REGISTER else auth
            sample = send(connection, method, path, form, who)
            if index >= 2:  # two to warm up
                samples.setdefault(name, []).append(sample)
    connection.close()
    return samples


def measure_create_user(repo: Path, database_url: str, count: int) -> list[float]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "scale_bench_settings",
        "PYTHONPATH": f"{STACK}:{repo}",
        "DATABASE_URL": database_url,
        "DATABASE_POOL": "false",
        "REDIS_URL": "",
        "LOG_LEVEL": "WARNING",
    }
    command = [str(repo / ".venv" / "bin" / "python"), str(STACK / "scale_bench_create_user.py"), str(count + 2)]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"create_user timing failed in {repo}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])[2:]


WRK_PATHS = {
    "bare view": "/bench/bare",
    "bare view + /users/me's round trips": "/bench/round-trips?user={measured}",
    "GET /users/me": "/api/v1/users/me",
    "GET /server_settings": "/api/v1/server_settings",
}
WRK_UNLIMITED = {"GET /users/me, rate limiting off": "/api/v1/users/me"}


def measure_throughput(
    server: Server, manifest: dict, seconds: int, paths: dict[str, str] = WRK_PATHS
) -> dict[str, float]:
    results = {}
    auth = auth_header(manifest["measured"])
    for name, path in paths.items():
        command = ["wrk", "-t2", "-c32", f"-d{seconds}s", "-H", f"Authorization: {auth}"]
        url = f"http://{HOST}:{server.port}{path.format(measured=manifest['measured']['id'])}"
        output = subprocess.run([*command, url], check=True, capture_output=True,
                                text=True).stdout  # fmt: skip
        if "Non-2xx" in output:
            raise RuntimeError(f"wrk {path}: errors\n{output}")
        results[name] = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--repos", default=str(BASE_DIR), help="comma-separated checkouts to compare, each PATH or PATH@DATABASE_SUFFIX"
    )
    parser.add_argument("--sizes", default="S", help="S, L or S,L (built beforehand with build.py)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=8, help="measured requests of each kind per round")
    parser.add_argument("--wrk-seconds", type=int, default=10)
    parser.add_argument("--out", default=str(BASE_DIR / "var" / "bench" / "scale.json"))
    parser.add_argument(
        "--keep-databases", action="store_true", help="measure the databases as they are, not fresh copies of the build"
    )
    args = parser.parse_args()
    suffixes = {}
    for entry in args.repos.split(","):
        path, _, suffix = entry.partition("@")
        suffixes[Path(path).resolve()] = suffix
    repos = list(suffixes)
    log_dir = Path(args.out).parent
    log_dir.mkdir(parents=True, exist_ok=True)
    raw: dict = {}
    sizes = args.sizes.split(",")
    manifests = {size: json.loads(build.manifest_path(size).read_text()) for size in sizes}
    listeners = {}
    for size, manifest in manifests.items():
        if not args.keep_databases:
            restore_databases(manifest["database_url"], set(suffixes.values()))
        listeners[size] = listener_credentials(manifest["database_url"], manifest)
    # Each round measures every size, so that what the machine does over the run (it drifts by
    # tens of percent) weighs on the sizes alike: a ratio of L to S compares the same minutes.
    for round_number in range(args.rounds):
        for size in sizes:
            for repo in repos if round_number % 2 == 0 else reversed(repos):
                into = raw.setdefault(size, {}).setdefault(str(repo), {"requests": {}, "wrk": {}})
                database_url = manifests[size]["database_url"] + suffixes[repo]
                measure_round(repo, database_url, manifests[size], listeners[size], args, into, log_dir)
                print(json.dumps({"size": size, "round": round_number, "repo": str(repo)}), flush=True)
    summary = summarize(raw)
    postgresql = postgresql_settings(next(iter(manifests.values()))["database_url"])
    result = {"args": vars(args), "postgresql": postgresql, "summary": summary, "raw": raw}
    Path(args.out).write_text(json.dumps(result, indent=2))
    print("PostgreSQL:", ", ".join(f"{name} {value}" for name, value in postgresql.items()))
    print_table(summary)


def measure_round(repo: Path, database_url: str, manifest: dict, listeners: list, args, into: dict, log_dir: Path):
    """One round of one checkout on one size: its samples added to `into`."""
    redis.Redis.from_url(REDIS_URL).flushdb()  # the benchmark's own: no queues of a round before
    vacuum(database_url)
    server = Server(repo, database_url, log_dir)
    try:
        register_listeners(server, listeners)
        for name, samples in measure_requests(server, manifest, database_url, args.requests, listeners[0]).items():
            into["requests"].setdefault(name, []).extend(samples)
        for name, rate in measure_throughput(server, manifest, args.wrk_seconds).items():
            into["wrk"].setdefault(name, []).append(rate)
    finally:
        server.stop()
    # What the rate limit's Redis round trip costs an ordinary request: a server like the one
    # above, without rate limits.
    server = Server(repo, database_url, log_dir, RATE_LIMITING_ENABLED="false")
    try:
        for name, rate in measure_throughput(server, manifest, args.wrk_seconds, WRK_UNLIMITED).items():
            into["wrk"].setdefault(name, []).append(rate)
    finally:
        server.stop()
    created = measure_create_user(repo, database_url, args.requests)
    into["requests"].setdefault("create_user", []).extend((t, 0, -1) for t in created)


def summarize(raw: dict) -> dict:
    summary: dict = {}
    for size, by_repo in raw.items():
        for repo, data in by_repo.items():
            rows = summary.setdefault(repo, {}).setdefault(size, {})
            for name, samples in data["requests"].items():
                rows[name] = {
                    "median_ms": round(statistics.median(s[0] for s in samples) * 1000, 1),
                    "bytes": int(statistics.median(s[1] for s in samples)),
                    "queries": int(statistics.median(s[2] for s in samples)),
                    "n": len(samples),
                }
            for name, rates in data["wrk"].items():
                rows[f"wrk {name}"] = {"requests_per_s": [round(r) for r in rates]}
    return summary


def print_table(summary: dict) -> None:
    for repo, by_size in summary.items():
        print(f"\n== {repo}")
        for size, rows in by_size.items():
            print(f"-- {size}")
            for name, row in rows.items():
                if "requests_per_s" in row:
                    print(f"  {name:<45} {row['requests_per_s']} requests/s")
                else:
                    print(f"  {name:<45} {row['median_ms']:>8} ms {row['bytes']:>9} B {row['queries']:>4} queries")


if __name__ == "__main__":
    main()
