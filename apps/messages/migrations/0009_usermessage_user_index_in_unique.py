"""UserMessage, the table a channel message adds a row to per recipient, loses what each row cost
without serving a read (benchmarks/scale/README.md, "A recipient's row"):

- the user's own index: the unique (user, message) index serves every lookup by user;
- on PostgreSQL, the foreign key constraints: each row's checks locked the recipient's user row
  (FOR KEY SHARE: a heap write per recipient, and multixacts when two sends overlap) and looked the
  message up again. The relations stay (Django's cascades delete the rows with a message or user,
  and the actions delete them before their messages). SQLite keeps its constraints: dropping them
  means rebuilding the table, which would also drop 0004's and 0005's partial indexes.

Written as SQL for the same reason: SQLite must not rebuild the table."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

INDEX = "chat_messages_usermessage_user_id_f1df6a0e"
COLUMNS = ("user", "message")


def drop_foreign_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    model = apps.get_model("chat_messages", "UserMessage")
    for name in COLUMNS:
        column = model._meta.get_field(name).column
        for constraint in schema_editor._constraint_names(model, [column], foreign_key=True):
            schema_editor.execute(schema_editor._delete_fk_sql(model, constraint))


def add_foreign_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    model = apps.get_model("chat_messages", "UserMessage")
    for name in COLUMNS:
        field = model._meta.get_field(name)
        schema_editor.execute(schema_editor._create_fk_sql(model, field, "_fk_%(to_table)s_%(to_column)s"))


class Migration(migrations.Migration):
    dependencies = [
        ("chat_messages", "0008_notification_bot"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"DROP INDEX IF EXISTS {INDEX}", f"CREATE INDEX {INDEX} ON chat_messages_usermessage (user_id)"
                ),
                migrations.RunPython(drop_foreign_keys, add_foreign_keys),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="usermessage",
                    name="user",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="usermessage",
                    name="message",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="user_messages",
                        to="chat_messages.message",
                    ),
                ),
            ],
        )
    ]
