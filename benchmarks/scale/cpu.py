"""CPU per request in one process, without a server: Django's test client sends a request to the
built organization (benchmarks/scale/build.py) as its measured user, 200 times to warm up, then
`--rounds` x `--requests` times, printing the process's CPU time per request for each round. Run it
with each checkout's Python, from that checkout, to compare them:

    ../before/.venv/bin/python benchmarks/scale/cpu.py /api/v1/users/me     # from ../before
    .venv/bin/python benchmarks/scale/cpu.py /api/v1/users/me

(`--profile` prints a pyinstrument profile of the last round instead; `pip install pyinstrument`.)
"""

import argparse
import base64
import json
import os
import sys
import time
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[2] / "var" / "bench" / "scale-S.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    parser.add_argument("--manifest", default=str(MANIFEST))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    manifest = json.loads(Path(args.manifest).read_text())
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.base", DATABASE_URL=manifest["database_url"], LOG_LEVEL="WARNING",
        REDIS_URL=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12"), EXTERNAL_HOST="127.0.0.1:8000",
        RATE_LIMIT_API_BY_USER="100000000", DATABASE_POOL="false",
    )  # fmt: skip
    sys.path.insert(0, os.getcwd())
    import django

    django.setup()
    from django.test import Client

    measured = manifest["measured"]
    auth = "Basic " + base64.b64encode(f"{measured['email']}:{measured['api_key']}".encode()).decode()
    client = Client()

    def send() -> None:
        response = client.get(args.path, HTTP_HOST="127.0.0.1:8000", HTTP_AUTHORIZATION=auth)
        assert response.status_code == 200, response.content[:300]

    for _ in range(200):
        send()
    profiler = None
    for round_number in range(args.rounds):
        if args.profile and round_number == args.rounds - 1:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0002)
            profiler.start()
        started = time.process_time()
        for _ in range(args.requests):
            send()
        print(f"{(time.process_time() - started) / args.requests * 1e6:.0f} µs CPU per request", flush=True)
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(color=False))


if __name__ == "__main__":
    main()
