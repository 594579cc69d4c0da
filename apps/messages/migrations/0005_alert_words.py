"""Alert words, and Zulip's partial index for the messages they flag (`is:alerted`), written as
0004's flag indexes are (the ORM's own flag filter)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat_messages", "0004_flag_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="AlertWord",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("word", models.CharField(max_length=100)),
                ("key", models.CharField(max_length=200)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("user", "key"), name="messages_alert_word_once")],
            },
        ),
        migrations.RunSQL(
            "CREATE INDEX chat_messages_usermessage_alerted ON chat_messages_usermessage (user_id, message_id)"
            " WHERE (flags & 64) > 0",
            "DROP INDEX chat_messages_usermessage_alerted",
        ),
    ]
