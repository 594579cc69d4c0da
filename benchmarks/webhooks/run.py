"""Does a slow outgoing-webhook service slow down the request that sends the message? The latency of
POST /messages (a direct message) measured against a real server with its task worker, for a
message that triggers no bot and for messages to outgoing-webhook bots whose services answer at
once, answer after SLOW_SECONDS, or are down (connection refused).

    .venv/bin/python benchmarks/webhooks/run.py --rounds 5 --requests 40

Each round sends `--requests` messages of each kind, the kinds interleaved one by one (so that the
machine's load falls on all alike), one at a time on a keep-alive connection, after a warm-up.
Prints the median and 95th percentile per kind, how many deliveries each service had received by
the end, and writes them to var/bench/webhooks.json. Needs PostgreSQL and Redis like CI
(BENCH_DATABASE_URL, default parley_bench_webhooks, is dropped and made anew; BENCH_REDIS_URL).
"""

import argparse
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

from benchmarks.processes import free_port  # noqa: E402

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_bench_webhooks")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/5")
PREFIX = "parley-bench-webhooks"
HOST = "127.0.0.1"
SLOW_SECONDS = 5.0


def start_service(delay: float) -> tuple[ThreadingHTTPServer, list[float]]:
    """A bot's service that answers {"response_not_required": true} after `delay` seconds."""
    received: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.append(time.monotonic())
            time.sleep(delay)
            body = b'{"response_not_required": true}'
            try:
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer((HOST, 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received


def prepare(urls: dict[str, str]) -> dict[str, object]:
    """A fresh database: one organization, a sender, a person, and one bot per service URL."""
    name = DATABASE_URL.rsplit("/", 1)[1]
    admin_url = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name}"], check=True)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.base", DATABASE_URL=DATABASE_URL, REDIS_URL=REDIS_URL,
        REDIS_KEY_PREFIX=PREFIX, DATABASE_POOL="false", LOG_LEVEL="WARNING",
    )  # fmt: skip
    import django

    django.setup()
    from django.core.management import call_command

    from apps.realms.actions import do_create_realm
    from apps.users.actions.create_user import do_create_user
    from apps.users.models import BotType, Role

    call_command("migrate", verbosity=0)
    realm = do_create_realm("", "Bench", acting_user=None)
    sender = do_create_user(realm, "sender@bench.example", "Sender", role=Role.OWNER, acting_user=None)
    person = do_create_user(realm, "person@bench.example", "Person", acting_user=None)
    bots = {
        kind: do_create_user(
            realm, f"{kind}-bot@bench.example", f"{kind} bot", bot_type=BotType.OUTGOING_WEBHOOK, bot_owner=sender,
            service_url=url, acting_user=None,
        ).id
        for kind, url in urls.items()
    }  # fmt: skip
    return {"sender": (sender.delivery_email, sender.api_key), "person": person.id, "bots": bots}


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port), "EXTERNAL_HOST": f"{HOST}:{port}", "WEB_CONCURRENCY": "1", "TASK_WORKER": "1",
        "OUTGOING_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32", "RATE_LIMIT_API_BY_USER": "1000000",
        "LOG_LEVEL": "WARNING", "SECRET_KEY": secrets.token_urlsafe(50),
    }  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.asgi:application"], cwd=BASE_DIR,
        env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://{HOST}:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/health/live", timeout=1).status_code == 200:
                return process, url
        except requests.RequestException:
            time.sleep(0.2)
    os.killpg(process.pid, signal.SIGTERM)
    raise RuntimeError(f"the server did not start; see {log_path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=40)
    options = parser.parse_args()

    fast, fast_received = start_service(0.0)
    slow, slow_received = start_service(SLOW_SECONDS)
    down = free_port()  # nothing listens there
    urls = {
        "fast": f"http://{HOST}:{fast.server_address[1]}/",
        "slow": f"http://{HOST}:{slow.server_address[1]}/",
        "down": f"http://{HOST}:{down}/",
    }
    data = prepare(urls)
    log_dir = BASE_DIR / "var" / "bench"
    log_dir.mkdir(parents=True, exist_ok=True)
    process, url = start_server(log_dir / "server-webhooks.log")
    targets = {"no bot": data["person"], **{f"bot, service {kind}": bot for kind, bot in data["bots"].items()}}
    samples: dict[str, list[float]] = {kind: [] for kind in targets}
    session = requests.Session()
    session.auth = data["sender"]
    try:

        def send(to: int) -> float:
            started = time.perf_counter()
            response = session.post(f"{url}/api/v1/messages", data={"type": "direct", "to": f"[{to}]", "content": "hi"})
            elapsed = time.perf_counter() - started
            response.raise_for_status()
            return elapsed

        for to in targets.values():  # warm-up
            for _ in range(5):
                send(to)
        for _ in range(options.rounds):
            for _ in range(options.requests):
                for kind, to in targets.items():
                    samples[kind].append(send(to))
        time.sleep(2)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    results = {
        kind: {
            "requests": len(values),
            "median_ms": round(statistics.median(values) * 1000, 2),
            "p95_ms": round(sorted(values)[int(0.95 * len(values)) - 1] * 1000, 2),
        }
        for kind, values in samples.items()
    }
    results["deliveries received"] = {"fast": len(fast_received), "slow": len(slow_received)}
    print(json.dumps(results, indent=2))
    (log_dir / "webhooks.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
