"""On SQLite, the indexes on UPPER(...) rebuilt: the backend's UPPER now folds every letter, as
PostgreSQL's does (apps/core/sqlite/base.py), where SQLite's own folded ASCII letters only, and an
index keeps the values of the function it was built with. Every such index of the database is
rebuilt here (the topics' of this app, and the unique names and addresses of users, groups,
channels and folders), whichever app it belongs to. Nothing to do on PostgreSQL.

A unique index that cannot be rebuilt, because two names that differ only in the case of a
non-ASCII letter were both allowed before, is left as it was, with a warning naming it: once one of
the two is renamed, `REINDEX "<name>"` in `manage.py dbshell` rebuilds it.
"""

import logging
import sqlite3

from django.db import IntegrityError, migrations

logger = logging.getLogger(__name__)


def rebuild_upper_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND upper(sql) LIKE '%UPPER(%'")
        for (name,) in cursor.fetchall():
            try:
                cursor.execute(f'REINDEX "{name}"')
            except (IntegrityError, sqlite3.IntegrityError):
                logger.warning("The index %s was not rebuilt: two of its names differ only in case", name)


class Migration(migrations.Migration):
    dependencies = [
        ("chat_messages", "0010_is_private_flag"),
        ("folders", "0001_initial"),
        ("groups", "0002_system_groups_of_existing_realms"),
        ("subscriptions", "0005_subscription_indexes_in_composites"),
        ("users", "0005_user_can_create_users"),
    ]

    operations = [migrations.RunPython(rebuild_upper_indexes, migrations.RunPython.noop)]
