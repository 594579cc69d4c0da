"""Moving a 10,000-message topic (PATCH /messages/{id} with propagate_mode=change_all: the action
check_update_message, as the view calls it), on PostgreSQL.

    .venv/bin/python benchmarks/moves/run.py

Uses (drops and refills) the database parley_bench_moves (BENCH_MOVES_DATABASE_URL overrides);
events go to the in-process backend. For each case a fresh topic of MESSAGES messages is written
(in bulk, with a row for each of the channel's SUBSCRIBERS subscribers), then moved once, timed
from the call to its commit, with its query count.
"""

import cProfile
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))
URL = os.environ.get("BENCH_MOVES_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_bench_moves")
MESSAGES = 10_000
SUBSCRIBERS = 50


def main() -> None:
    admin_url, name = URL.rsplit("/", 1)[0] + "/postgres", URL.rsplit("/", 1)[1]
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name}"], check=True)
    os.environ.update(DJANGO_SETTINGS_MODULE="config.settings.base", DATABASE_URL=URL, LOG_LEVEL="WARNING")
    os.environ["REDIS_URL"] = ""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.messages.actions.edit import check_update_message
    from apps.messages.models import Message, Recipient, UserMessage
    from apps.messages.recipients import get_recipient
    from apps.subscriptions.actions.channels import NewChannel, create_streams
    from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
    from apps.users.actions.create_realm import do_create_realm_with_owner
    from apps.users.actions.create_user import do_create_user

    call_command("migrate", verbosity=0)
    realm, owner = do_create_realm_with_owner(
        "", "Bench", owner_email="owner@bench.example", owner_full_name="Owner", acting_user=None
    )
    people = [owner] + [
        do_create_user(realm, f"user{n}@bench.example", f"User {n}", acting_user=None) for n in range(SUBSCRIBERS - 1)
    ]
    half = people[: SUBSCRIBERS // 2]

    def channel(channel_name: str, members, **options):
        [stream] = create_streams(realm, [NewChannel(channel_name)], acting_user=None, **options)
        bulk_add_subscriptions(realm, [stream], members, acting_user=None)
        return stream

    design, kitchen = channel("design", people), channel("kitchen", people)
    secret = channel("secret", half, invite_only=True, history_public_to_subscribers=False)

    def topic(topic_name: str) -> int:
        """MESSAGES messages from the owner in design > topic_name; the first one's id."""
        recipient = get_recipient(Recipient.Type.STREAM, design.id)
        messages = Message.objects.bulk_create(
            [
                Message(realm=realm, sender=owner, recipient=recipient, stream=design, topic=topic_name,
                        content=f"message {n}", rendered_content=f"<p>message {n}</p>")
                for n in range(MESSAGES)
            ],
            batch_size=5000,
        )  # fmt: skip
        UserMessage.objects.bulk_create(
            [UserMessage(user=person, message=m, flags=1) for m in messages for person in people], batch_size=10000
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        return messages[0].id

    cases = [
        ("to another public channel (everyone subscribed to both)", {"stream_id": kitchen.id, "topic": None}),
        ("to another public channel, with a new topic", {"stream_id": kitchen.id, "topic": "renamed"}),
        (f"to a private channel, protected history ({len(half)} of {SUBSCRIBERS} subscribed)",
         {"stream_id": secret.id, "topic": None}),
        ("to another topic of the same channel", {"stream_id": None, "topic": "elsewhere"}),
    ]  # fmt: skip
    print(f"{MESSAGES:,} messages, {SUBSCRIBERS} subscribers ({MESSAGES * SUBSCRIBERS:,} rows); change_all")
    only = os.environ.get("BENCH_CASE")
    for n, (label, params) in enumerate(cases):
        if only is not None and str(n) != only:
            continue
        first = topic(f"topic {n}")
        message = Message.objects.get(id=first)
        profile = cProfile.Profile() if os.environ.get("BENCH_PROFILE") else None
        with CaptureQueriesContext(connection) as queries:
            if profile:
                profile.enable()
            start = time.perf_counter()
            moved = check_update_message(
                message, content=None, propagate_mode="change_all", prev_content_sha256=None,
                send_notification_to_old_thread=True, acting_user=owner, **params,
            )  # fmt: skip
            seconds = time.perf_counter() - start
            if profile:
                profile.disable()
                pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        slowest = sorted(queries.captured_queries, key=lambda q: -float(q["time"]))[:3]
        if os.environ.get("BENCH_PROFILE"):
            print([(q["time"], q["sql"][:200]) for q in slowest])
        assert moved == MESSAGES, moved
        print(f"{label}: {seconds * 1000:,.0f} ms, {len(queries)} queries")


if __name__ == "__main__":
    main()
