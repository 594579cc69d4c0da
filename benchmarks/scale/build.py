"""Builds the scale benchmark's organizations on PostgreSQL (issue 21):

- S: 1,000 people, 20,000 messages in a channel everyone is in;
- L: 10,000 people, 200,000 messages in it.

    .venv/bin/python benchmarks/scale/build.py S          # 6 minutes on a loaded 2-core machine
    .venv/bin/python benchmarks/scale/build.py L          # not timed yet: over an hour there (README)

The database parley_bench_scale_<size> (BENCH_SCALE_DATABASE_URL_<SIZE> overrides) is dropped and
migrated with this checkout's code. People, channels and subscriptions are made through the
project's own actions (`do_create_user`, `create_streams`, `bulk_add_subscriptions`), as they would
be in a real organization; the history is inserted in bulk, in SQL (sending 200,000 messages one by
one is not what is measured). What the runner needs (credentials, channel names) is written to
var/bench/scale-<size>.json.

The organization: one owner and `people - 1` members; `busy`, a channel everyone is in; `small`, a
channel of 5 people; 100 more channels of 5% of the people each (seeded, so every build is the
same). The history: `messages` messages in `busy` from its first 100 members, on 50 topics. The
measured user (a member) has every message of it, the older half read (so 10,000 unread at S,
100,000 at L); everyone else has the newest 1,000, the newest 50 of them unread (people join a busy
channel over time; about 1.2 million per-user rows at S, 10.2 million at L).
"""

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))

SIZES = {"S": (1_000, 20_000), "L": (10_000, 200_000)}
OTHER_CHANNELS = 100
HISTORY_PER_PERSON = 1_000
UNREAD_PER_PERSON = 50
SENDERS = 100
READ = 1  # UserMessage.READ
TOPICS = 50


def database_url(size: str) -> str:
    default = f"postgres://postgres@127.0.0.1:5432/parley_bench_scale_{size.lower()}"
    return os.environ.get(f"BENCH_SCALE_DATABASE_URL_{size}", default)


def manifest_path(size: str) -> Path:
    return BASE_DIR / "var" / "bench" / f"scale-{size}.json"


def configure_django(url: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.base", DATABASE_URL=url, DATABASE_POOL="false", LOG_LEVEL="WARNING"
    )
    os.environ.pop("REDIS_URL", None)  # events of the build go nowhere: no server is running yet
    import django

    django.setup()


def build(size: str) -> dict:
    people, messages = SIZES[size]
    url = database_url(size)
    admin_url, name = url.rsplit("/", 1)[0] + "/postgres", url.rsplit("/", 1)[1]
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name}"], check=True)
    configure_django(url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    timings: dict[str, float] = {}
    started = time.monotonic()
    realm, users = _people(people)
    timings["people"] = time.monotonic() - started
    started = time.monotonic()
    busy, small = _channels(realm, users)
    timings["channels"] = time.monotonic() - started
    started = time.monotonic()
    measured = users[1]
    _history(realm, busy, users, measured, messages)
    timings["history"] = time.monotonic() - started
    # The build's events reached no queue (no server ran): a server started on this database would
    # otherwise publish all of them (tens of thousands at L, each to everyone) before anything else.
    from apps.events.models import OutboxEvent

    OutboxEvent.objects.all().delete()
    manifest = {
        "size": size,
        "database_url": url,
        "people": people,
        "messages": messages,
        "busy": busy.name,
        "small": small.name,
        "owner": _credentials(users[0]),
        "measured": _credentials(measured),
        "build_seconds": {key: round(value, 1) for key, value in timings.items()},
    }
    manifest_path(size).parent.mkdir(parents=True, exist_ok=True)
    manifest_path(size).write_text(json.dumps(manifest, indent=2))
    from django.db import connections

    connections.close_all()  # a template must have no connection
    copy_database(admin_url, name, pristine_name(name))
    return manifest


def pristine_name(name: str) -> str:
    """The database the build keeps as built, which run.py copies before each run (a run's sends,
    reads and new people would otherwise stay for the next)."""
    return f"{name}_built"


def copy_database(admin_url: str, source: str, name: str) -> None:
    """`name` afresh as a copy of `source` (PostgreSQL copies its files: seconds even at L)."""
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name} TEMPLATE {source}"], check=True)


def _credentials(user) -> dict:
    from apps.users.selectors import api_email

    return {"id": user.id, "email": api_email(user), "api_key": user.api_key}


def _people(count: int):
    from django.db import transaction

    from apps.realms.models import EmailVisibility, Realm
    from apps.users.actions.create_realm import do_create_realm_with_owner
    from apps.users.actions.create_user import do_create_user

    realm, owner = do_create_realm_with_owner(
        Realm.DEFAULT_STRING_ID,
        "Scale",
        owner_email="owner@scale.example",
        owner_full_name="Olivia Owner",
        default_email_address_visibility=EmailVisibility.EVERYONE,
        acting_user=None,
    )
    users = [owner]
    for start in range(1, count, 500):
        with transaction.atomic():
            users += [
                do_create_user(realm, f"person{i}@scale.example", f"Person {i}", acting_user=None)
                for i in range(start, min(start + 500, count))
            ]
        print(f"  {len(users)} people", flush=True)
    return realm, users


def _channels(realm, users):
    from apps.subscriptions.actions.channels import NewChannel, create_streams
    from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions

    rng = random.Random(21)
    names = [NewChannel("busy", "Everyone"), NewChannel("small", "Five people")]
    names += [NewChannel(f"channel {k}", f"Channel {k}") for k in range(OTHER_CHANNELS)]
    streams = create_streams(realm, names, acting_user=users[0])
    busy, small, *others = streams
    bulk_add_subscriptions(realm, [busy], users, created=streams, acting_user=None)
    bulk_add_subscriptions(realm, [small], users[:5], acting_user=None)
    share = max(len(users) // 20, 5)
    for stream in others:
        bulk_add_subscriptions(realm, [stream], [users[0], *rng.sample(users[1:], share)], acting_user=None)
    return busy, small


def _history(realm, busy, users, measured, count: int) -> None:
    from django.db import connection

    from apps.messages.models import Recipient, UserMessage
    from apps.messages.recipients import get_recipient
    from apps.subscriptions.models import Stream

    recipient_id = get_recipient(Recipient.Type.STREAM, busy.id).id
    senders = [user.id for user in users[1 : SENDERS + 1]]
    read, unread = UserMessage.READ, 0
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO chat_messages_message (realm_id, sender_id, recipient_id, stream_id, topic, content,
                rendered_content, date_sent, sending_client, has_link, has_image, has_attachment)
            SELECT %s, (%s::bigint[])[1 + g %% %s], %s, %s, 'topic ' || (g %% %s), 'message ' || g,
                '<p>message ' || g || '</p>', now() - make_interval(secs => %s - g), 'API', false, false, false
            FROM generate_series(1, %s) g ORDER BY g
            """,
            [realm.id, senders, len(senders), recipient_id, busy.id, TOPICS, count, count],
        )
        cursor.execute("SELECT min(id), max(id) FROM chat_messages_message WHERE stream_id = %s", [busy.id])
        first, last = cursor.fetchone()
        Stream.objects.filter(id=busy.id).update(first_message_id=first)
        # The measured user: everything, the older half read.
        cursor.execute(
            "INSERT INTO chat_messages_usermessage (user_id, message_id, flags)"
            " SELECT %s, id, CASE WHEN id < %s THEN %s ELSE %s END FROM chat_messages_message WHERE stream_id = %s",
            [measured.id, first + count // 2, read, unread, busy.id],
        )
        # Everyone else: the newest HISTORY_PER_PERSON, the newest UNREAD_PER_PERSON of them unread.
        others = [user.id for user in users if user.id != measured.id]
        for start in range(0, len(others), 1000):
            cursor.execute(
                "INSERT INTO chat_messages_usermessage (user_id, message_id, flags)"
                " SELECT u, m, CASE WHEN m > %s THEN %s ELSE %s END"
                " FROM unnest(%s::bigint[]) u CROSS JOIN generate_series(%s::bigint, %s::bigint) m",
                [last - UNREAD_PER_PERSON, unread, read, others[start : start + 1000],
                 last - HISTORY_PER_PERSON + 1, last],
            )  # fmt: skip
        # Every table, not only the history's: the planner would otherwise guess the sizes of the
        # tables the actions filled (subscriptions, group memberships) until autovacuum came by.
        cursor.execute("ANALYZE")


def reset_unread(size: str, cursor) -> None:
    """The measured user's flags as built (POST /mark_all_as_read reads them all). Plain SQL on a
    psycopg cursor: the runner does not set Django up."""
    manifest = json.loads(manifest_path(size).read_text())
    measured = manifest["measured"]["id"]
    cursor.execute(
        "UPDATE chat_messages_usermessage SET flags = flags & ~%s WHERE user_id = %s AND flags & %s <> 0"
        " AND message_id >= (SELECT min(message_id) + %s FROM chat_messages_usermessage WHERE user_id = %s)",
        [READ, measured, READ, manifest["messages"] // 2, measured],
    )


if __name__ == "__main__":
    for size in sys.argv[1:] or ["S"]:
        started = time.monotonic()
        result = build(size)
        print(json.dumps(result["build_seconds"]), f"total {time.monotonic() - started:.0f} s", flush=True)
