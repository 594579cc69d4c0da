"""EXPLAIN ANALYZE of the first-unread lookup (GET /messages?anchor=first_unread, unread counts) for
a user with 200,000 messages, 200 of them unread, on PostgreSQL.

    .venv/bin/python benchmarks/messages/explain_unread.py

Uses (drops and refills) the database parley_explain (BENCH_EXPLAIN_DATABASE_URL overrides).
"""

import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))
URL = os.environ.get("BENCH_EXPLAIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley_explain")


def main() -> None:
    admin_url, name = URL.rsplit("/", 1)[0] + "/postgres", URL.rsplit("/", 1)[1]
    subprocess.run(["psql", admin_url, "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=True)
    subprocess.run(["psql", admin_url, "-qc", f"CREATE DATABASE {name}"], check=True)
    os.environ.update(DJANGO_SETTINGS_MODULE="config.settings.base", DATABASE_URL=URL, LOG_LEVEL="WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from apps.messages.models import UserMessage
    from apps.messages.narrow import NarrowBuilder, with_flag_columns

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        # Rows only (no users or messages): foreign keys are not checked for this measurement.
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            "INSERT INTO chat_messages_usermessage (user_id, message_id, flags) "
            "SELECT 1, g, CASE WHEN g % 1000 = 0 THEN 0 ELSE 1 END FROM generate_series(1, 200000) g"
        )
        cursor.execute("ANALYZE chat_messages_usermessage")
    unread = with_flag_columns(UserMessage.objects.filter(user_id=1)).filter(**{f"flag_{UserMessage.READ}": 0})
    first = unread.order_by("message_id").values_list("message_id", flat=True)[:1]
    every = unread.values_list("message_id", "flags")
    # The `is:unread` narrow term as GET /messages builds it (apps/messages/narrow.py), and the form
    # it had before 2026-11-26 (NOT (flags & 1 > 0)), which the partial index cannot serve.
    term = NarrowBuilder(None, on_user_messages=True).by_is("unread")  # no user needed for flag terms
    narrow = with_flag_columns(UserMessage.objects.filter(user_id=1)).filter(term)
    narrow_first = narrow.order_by("-message_id").values_list("message_id", flat=True)[:100]
    old_form = with_flag_columns(UserMessage.objects.filter(user_id=1)).exclude(**{f"flag_{UserMessage.READ}__gt": 0})
    old_first = old_form.order_by("-message_id").values_list("message_id", flat=True)[:100]
    for label in ("with the partial index (migration 0004)", "without it (the same run, index dropped)"):
        print(f"== {label}\nfirst unread:\n{first.explain(analyze=True)}\nall unread:\n{every.explain(analyze=True)}\n")
        print(f"is:unread narrow, newest 100:\n{narrow_first.explain(analyze=True)}\n")
        print(f"is:unread narrow as written before, newest 100:\n{old_first.explain(analyze=True)}\n")
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX IF EXISTS chat_messages_usermessage_unread")


if __name__ == "__main__":
    main()
