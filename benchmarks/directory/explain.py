"""GET /users of the directory API on PostgreSQL: the query plan of a 10,000-user page and its timings.

    .venv/bin/python benchmarks/directory/explain.py                  # 20,000 users, about a minute
    .venv/bin/python benchmarks/directory/explain.py --users 100000

The database BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/parley_dir_bench) is
dropped and refilled: one organization with --users active users and a tenth as many deactivated
ones, and a second organization as large. Requests go through the whole Django stack in this process
(django.test.Client: middleware, authentication, the view); the SQL that the page request ran is
captured and run again under EXPLAIN (ANALYZE, BUFFERS).
"""

import argparse
import base64
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

DATABASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_dir_bench")


def configure_django() -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DATABASE_URL=DATABASE_URL,
        REDIS_URL="",
        RATE_LIMITING_ENABLED="false",
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()


def recreate_database() -> None:
    name = DATABASE_URL.rsplit("/", 1)[1]
    admin_url = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name}"], check=True)


def seed(users: int):
    """Fill the database; returns the reader, an active user of the default organization."""
    from django.core.management import call_command
    from django.db import connection

    from apps.realms.models import Realm
    from apps.users.actions.create_user import generate_api_key
    from apps.users.models import User

    call_command("migrate", verbosity=0)
    realm = Realm.objects.create(string_id="", name="Bench")
    other = Realm.objects.create(string_id="other", name="Other")
    for organization, prefix in ((realm, "u"), (other, "o")):
        User.objects.bulk_create(
            (
                User(
                    realm=organization,
                    delivery_email=f"{prefix}{i}@bench.example",
                    full_name=f"User {i}",
                    api_key=generate_api_key(),
                    is_active=i % 11 != 10,  # one in eleven deactivated
                )
                for i in range(users + users // 10)
            ),
            batch_size=5000,
        )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE users_user")
    return User.objects.filter(realm=realm, is_active=True).order_by("id").first()


def timed_get(client, path: str, headers: dict, runs: int) -> tuple[dict, list[float]]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(path, **headers)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:500]
    return response.json(), times


def page_query(client, path: str, headers: dict) -> str:
    """The SQL of the page itself, as the view ran it."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(path, **headers)
    (sql,) = [q["sql"] for q in captured.captured_queries if "ORDER BY" in q["sql"] and '"uuid"' in q["sql"]]
    return sql


def explain(sql: str) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=20_000, help="active users in the organization")
    parser.add_argument("--runs", type=int, default=20, help="requests timed per case")
    args = parser.parse_args()

    recreate_database()
    configure_django()
    from django.db import connection
    from django.test import Client

    reader = seed(args.users)
    token = base64.b64encode(f"{reader.delivery_email}:{reader.api_key}".encode()).decode()
    headers = {"HTTP_HOST": "localhost", "HTTP_AUTHORIZATION": f"Basic {token}"}
    client = Client()

    first, _ = timed_get(client, "/users?limit=10000", headers, 1)
    middle = f"/users?limit=10000&page_token={first['next_page']}"
    cases = {
        "first page, limit=10000": "/users?limit=10000",
        "second page, limit=10000": middle,
        "first page, limit=100": "/users?limit=100",
        "first page, limit=10000, name=99": "/users?limit=10000&name=99",
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        print(f"# {cursor.fetchone()[0]}")
    print(f"# {args.users} active users (+{args.users // 10} deactivated) in the organization, as many in another\n")
    for title, path in cases.items():
        page, times = timed_get(client, path, headers, args.runs)
        print(f"## {title}: {len(page['items'])} users")
        print(
            f"whole request (Django test client, {args.runs} runs): median {statistics.median(times):.1f} ms, "
            f"min {min(times):.1f} ms, max {max(times):.1f} ms\n"
        )
        sql = page_query(client, path, headers)
        print(sql, "\n")
        print(explain(sql), "\n")


if __name__ == "__main__":
    main()
