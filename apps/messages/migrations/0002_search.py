"""Full-text search on PostgreSQL: a generated tsvector of each message's topic and content
(English stemming), GIN-indexed. SQLite searches with a simpler matcher (apps/messages/narrow.py)."""

from django.db import migrations

ADD_SEARCH = """
ALTER TABLE chat_messages_message ADD COLUMN search_tsvector tsvector
  GENERATED ALWAYS AS (to_tsvector('english', coalesce(topic, '') || ' ' || coalesce(content, ''))) STORED;
CREATE INDEX chat_messages_message_search ON chat_messages_message USING GIN (search_tsvector);
"""
DROP_SEARCH = """
DROP INDEX IF EXISTS chat_messages_message_search;
ALTER TABLE chat_messages_message DROP COLUMN IF EXISTS search_tsvector;
"""


def add_search(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(ADD_SEARCH)


def drop_search(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_SEARCH)


class Migration(migrations.Migration):
    dependencies = [("chat_messages", "0001_initial")]

    operations = [migrations.RunPython(add_search, drop_search)]
