"""UserMessage.user loses its own index: the unique (user, message) index serves every lookup by
user, and each recipient of a message is an insert into every index of the table. Written as SQL
so that SQLite does not rebuild the table (which would drop 0004's and 0005's partial indexes)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

INDEX = "chat_messages_usermessage_user_id_f1df6a0e"


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
                )
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="usermessage",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        )
    ]
