"""Register, user lists, channels, big sends, first_unread and user creation at two organization
sizes, on PostgreSQL and Redis, in this process (Django's test client: the view, its queries and its
JSON, without the HTTP server).

    .venv/bin/python benchmarks/register/run.py --size S            # build (once) and measure
    .venv/bin/python benchmarks/register/run.py --size L --rebuild
    .venv/bin/python benchmarks/register/run.py --size S --only register,users

The organization is written in bulk into parley_benchb_<tag>_<size> (BENCH_TAG, default "this"):
USERS people (a tenth of them with an event queue), a busy public channel everyone is in, 20
public channels of a tenth to a half of the people, 5 private ones of a twentieth, and a 5-person
channel; MESSAGES messages in the busy channel, with a row for the measured member (its second
half unread) and for 4 others. Each figure is the median of ROUNDS x REQUESTS requests (queries
and bytes of the last one). Prints one JSON line per row.
"""

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(os.environ.get("BENCH_CHECKOUT", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(BASE_DIR))
SIZES = {"S": (1_000, 20_000), "L": (10_000, 200_000)}
HOST = "testserver"


def setup(db: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.base",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{db}",
        REDIS_URL=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"),
        REDIS_KEY_PREFIX=f"bench-{db}",
        EXTERNAL_HOST=HOST,
        ALLOWED_HOSTS=HOST,
        LOG_LEVEL="WARNING",
        RATE_LIMIT_API_BY_USER="100000000",
        RATE_LIMIT_API_BY_IP="100000000",
        DATABASE_POOL="false",
    )
    import django

    django.setup()


def recreate(db: str) -> None:
    admin = "postgres://postgres@127.0.0.1:5432/postgres"
    subprocess.run(["psql", admin, "-qc", f"DROP DATABASE IF EXISTS {db} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {db}"], check=True)


def build(users: int, messages: int) -> None:
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import connection

    from apps.groups.models import SystemGroups, UserGroupMembership
    from apps.groups.selectors import system_groups
    from apps.messages.models import Message, Recipient, UserMessage
    from apps.messages.recipients import get_recipient
    from apps.subscriptions.actions.channels import NewChannel, create_streams
    from apps.subscriptions.models import Stream, Subscription
    from apps.users.actions.create_realm import do_create_realm_with_owner
    from apps.users.actions.create_user import generate_api_key
    from apps.users.actions.realm_defaults import new_user_settings
    from apps.users.models import Role, User

    call_command("migrate", verbosity=0)
    rng = random.Random(21)
    realm, owner = do_create_realm_with_owner(
        "", "Bench", owner_email="owner@bench.example", owner_full_name="Owner", acting_user=None
    )
    settings = new_user_settings(realm)
    password = make_password(None)
    people = User.objects.bulk_create(
        [
            User(realm=realm, delivery_email=f"user{n}@bench.example", full_name=f"User {n}", role=Role.MEMBER,
                 api_key=generate_api_key(), password=password, **settings)
            for n in range(users - 1)
        ],
        batch_size=2000,
    )  # fmt: skip
    groups = system_groups(realm.id)
    UserGroupMembership.objects.bulk_create(
        [
            UserGroupMembership(user_group=groups[name], user=u)
            for u in people
            for name in SystemGroups.FOR_ROLE[Role.MEMBER]
        ],
        batch_size=5000,
    )  # fmt: skip
    everyone = [owner, *people]
    me = people[0]

    def channel(name: str, members: list, **options) -> Stream:
        [stream] = create_streams(realm, [NewChannel(name)], acting_user=None, **options)
        Subscription.objects.bulk_create(
            [Subscription(user=u, stream=stream, color="#76ce90") for u in members],
            batch_size=5000,
            ignore_conflicts=True,
        )
        return stream

    busy = channel("busy", everyone)
    for n in range(20):
        channel(f"public {n}", [me, *rng.sample(everyone[1:], rng.randint(users // 10, users // 2))])
    for n in range(5):
        channel(f"private {n}", [me, *rng.sample(everyone[1:], users // 20)], invite_only=True)
    channel("small", everyone[:5])
    if any(f.name == "subscriber_count" for f in Stream._meta.fields):
        from django.db.models import Count, OuterRef, Subquery

        counts = (
            Subscription.objects.filter(stream=OuterRef("pk"), active=True, user__is_active=True)
            .values("stream").annotate(n=Count("*")).values("n")
        )  # fmt: skip
        from django.db.models.functions import Coalesce

        Stream.objects.filter(realm=realm).update(subscriber_count=Coalesce(Subquery(counts), 0))
    recipient = get_recipient(Recipient.Type.STREAM, busy.id)
    readers = [me, owner, *people[1:4]]
    for start in range(0, messages, 10_000):
        batch = Message.objects.bulk_create(
            [
                Message(realm=realm, sender=everyone[n % 50], recipient=recipient, stream=busy, topic=f"t{n % 100}",
                        content=f"message {n}", rendered_content=f"<p>message {n}</p>")
                for n in range(start, min(start + 10_000, messages))
            ],
        )  # fmt: skip
        UserMessage.objects.bulk_create(
            [
                UserMessage(user=u, message=m, flags=0 if (u is me and n + start >= messages // 2) else 1)
                for n, m in enumerate(batch)
                for u in readers
            ],
            batch_size=20_000,
        )
    Stream.objects.filter(id=busy.id).update(first_message_id=batch[0].id - messages + len(batch))
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def measure(rounds: int, requests: int, only: set[str] | None) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from apps.events.actions import do_register_queue_only
    from apps.events.registry import QueueOptions
    from apps.messages.models import UserMessage
    from apps.subscriptions.models import Stream
    from apps.users.actions.create_user import do_create_user
    from apps.users.models import User

    users = list(User.objects.filter(bot_type__isnull=True).order_by("id"))
    me = next(u for u in users if u.delivery_email == "user0@bench.example")
    realm = me.realm
    # Event queues for a tenth of the people (each registers one, as a client would).
    for u in users[::10]:
        do_register_queue_only(u, QueueOptions())
    client = Client(raise_request_exception=True)
    token = base64.b64encode(f"{me.delivery_email}:{me.api_key}".encode()).decode()
    headers = {"HTTP_HOST": HOST, "HTTP_AUTHORIZATION": f"Basic {token}"}
    busy = Stream.objects.get(realm=realm, name="busy")
    small = Stream.objects.get(realm=realm, name="small")
    created = iter(range(10**6))

    def post(path: str, data: dict):
        return client.post(path, data, **headers)

    def restore_unread():
        half = UserMessage.objects.filter(user=me).order_by("message_id").values_list("message_id", flat=True)
        ids = list(half)
        UserMessage.objects.filter(user=me, message_id__in=ids[len(ids) // 2 :]).update(flags=0)

    cases = {
        "register": lambda: post("/api/v1/register", {}),
        "register_slim": lambda: post(
            "/api/v1/register",
            {
                "client_capabilities": json.dumps({"user_avatar_url_field_optional": True}),
                "include_subscribers": "false",
            },
        ),
        "users": lambda: client.get("/api/v1/users", **headers),
        "streams": lambda: client.get("/api/v1/streams", **headers),
        "send_busy": lambda: post(
            "/api/v1/messages", {"type": "stream", "to": busy.id, "topic": "bench", "content": "hello"}
        ),
        "send_small": lambda: post(
            "/api/v1/messages", {"type": "stream", "to": small.id, "topic": "bench", "content": "hello"}
        ),
        "first_unread": lambda: client.get(
            "/api/v1/messages",
            {
                "anchor": "first_unread",
                "num_before": 0,
                "num_after": 100,
                "narrow": json.dumps([{"operator": "channel", "operand": busy.id}]),
            },
            **headers,
        ),
        "mark_all_as_read": lambda: post("/api/v1/mark_all_as_read", {}),
        "create_user": lambda: do_create_user(
            realm, f"new{next(created)}-{time.time_ns()}@bench.example", "New person", acting_user=None
        ),
    }
    for name, call in cases.items():
        if only and name not in only:
            continue
        times, queries, size = [], 0, 0
        for _ in range(rounds):
            for _ in range(requests):
                if name == "mark_all_as_read":
                    restore_unread()
                with CaptureQueriesContext(connection) as captured:
                    started = time.perf_counter()
                    response = call()
                    times.append(time.perf_counter() - started)
                if hasattr(response, "status_code"):
                    assert response.status_code == 200, (name, response.content[:300])
                    size = len(response.content)
                queries = len(captured)
        row = {"case": name, "ms": round(statistics.median(times) * 1000, 1), "queries": queries, "bytes": size}
        print(json.dumps(row), flush=True)
    if only is None or "mark_all_as_read" in only:
        restore_unread()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=SIZES, default="S")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    db = f"parley_benchb_{os.environ.get('BENCH_TAG', 'this')}_{args.size.lower()}"
    exists = subprocess.run(
        ["psql", "postgres://postgres@127.0.0.1:5432/postgres", "-tAc", "SELECT datname FROM pg_database"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    if args.rebuild or db not in exists:
        recreate(db)
        setup(db)
        started = time.perf_counter()
        build(*SIZES[args.size])
        print(json.dumps({"built": db, "seconds": round(time.perf_counter() - started)}), flush=True)
    else:
        setup(db)
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
    measure(args.rounds, args.requests, set(args.only.split(",")) if args.only else None)


if __name__ == "__main__":
    main()
