"""UserMessage's IS_PRIVATE bit (Zulip's `is_private`): set on every row of a direct message, with a
partial index of them by user, so that POST /register's `recent_private_conversations` reads a
user's latest direct messages without walking past their channel messages (at 200,000 channel
messages and no direct message it walked them all: benchmarks/scale/README.md).

Existing rows get the bit here, a batch of messages at a time, each batch its own transaction (the
migration is not atomic; running it again after a failure sets what is left). The index's predicate is written as the ORM writes the
filter (`flags & bit`), as in 0004."""

from django.db import migrations

INDEX = "chat_messages_usermessage_private"
BIT = 2048
BATCH = 10_000


def mark_direct_messages(apps, schema_editor, *, bit_set: bool = True):
    Message = apps.get_model("chat_messages", "Message")
    table = apps.get_model("chat_messages", "UserMessage")._meta.db_table
    change = f"flags | {BIT}" if bit_set else f"flags & ~{BIT}"
    ids = Message.objects.filter(stream__isnull=True).order_by("id").values_list("id", flat=True)
    after = 0
    with schema_editor.connection.cursor() as cursor:
        while batch := list(ids.filter(id__gt=after)[:BATCH]):
            cursor.execute(
                f"UPDATE {table} SET flags = {change} WHERE message_id IN ({','.join(map(str, batch))})"  # noqa: S608
            )
            after = batch[-1]


def unmark_direct_messages(apps, schema_editor):
    mark_direct_messages(apps, schema_editor, bit_set=False)


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("chat_messages", "0009_usermessage_user_index_in_unique")]

    operations = [
        migrations.RunPython(mark_direct_messages, unmark_direct_messages),
        migrations.RunSQL(
            f"CREATE INDEX {INDEX} ON chat_messages_usermessage (user_id, message_id) WHERE (flags & {BIT}) > 0",
            f"DROP INDEX {INDEX}",
        ),
    ]
