"""Partial indexes for the flags the API reads by user: unread (first_unread anchors, unread counts,
`is:unread`), starred and mentioned, as Zulip has. Both PostgreSQL and SQLite have partial indexes;
the predicates are written as the ORM writes the flag filters (`flags & bit`)."""

from django.db import migrations

INDEXES = {
    "chat_messages_usermessage_unread": "(flags & 1) = 0",
    "chat_messages_usermessage_starred": "(flags & 2) > 0",
    "chat_messages_usermessage_mentioned": "(flags & 56) > 0",
}


class Migration(migrations.Migration):
    dependencies = [("chat_messages", "0003_public_channel_listeners")]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX {name} ON chat_messages_usermessage (user_id, message_id) WHERE {predicate}",
            f"DROP INDEX {name}",
        )
        for name, predicate in INDEXES.items()
    ]
