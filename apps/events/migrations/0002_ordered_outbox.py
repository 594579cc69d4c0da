"""The outbox carries the event and its commit order (see OutboxEvent).

Outbox rows only live a few minutes, so the table is simply recreated.
"""

from django.db import migrations, models

ASSIGN_SEQ_AT_COMMIT = """
CREATE FUNCTION events_assign_commit_seq() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE next_seq bigint;
BEGIN
  INSERT INTO events_realmeventsequence AS s (realm_id, seq) VALUES (NEW.realm_id, 1)
    ON CONFLICT (realm_id) DO UPDATE SET seq = s.seq + 1
    RETURNING s.seq INTO next_seq;
  UPDATE events_outboxevent SET seq = next_seq WHERE id = NEW.id;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER events_outbox_commit_seq AFTER INSERT ON events_outboxevent
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_assign_commit_seq();
"""
DROP_ASSIGN_SEQ = """
DROP TRIGGER IF EXISTS events_outbox_commit_seq ON events_outboxevent;
DROP FUNCTION IF EXISTS events_assign_commit_seq();
"""


def create_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(ASSIGN_SEQ_AT_COMMIT)


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_ASSIGN_SEQ)


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0001_initial"),
        ("realms", "0001_initial"),
    ]

    operations = [
        migrations.DeleteModel(name="OutboxEvent"),
        migrations.CreateModel(
            name="OutboxEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("seq", models.BigIntegerField(null=True)),
                ("created", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("event_type", models.CharField(max_length=64)),
                ("payload", models.TextField()),
                ("user_ids", models.JSONField()),
                (
                    "realm",
                    models.ForeignKey(
                        on_delete=models.deletion.CASCADE, related_name="+", to="realms.realm"
                    ),
                ),
            ],
            options={"indexes": [models.Index(fields=["realm", "seq"], name="events_outbox_realm_seq")]},
        ),
        migrations.CreateModel(
            name="RealmEventSequence",
            fields=[
                (
                    "realm",
                    models.OneToOneField(
                        on_delete=models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="realms.realm",
                    ),
                ),
                ("seq", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(create_trigger, drop_trigger),
    ]
