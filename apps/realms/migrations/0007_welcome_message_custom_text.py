from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("realms", "0006_multiuse_invite_policy"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="welcome_message_custom_text",
            field=models.TextField(
                blank=True,
                db_default="",
                default="",
                help_text="Markdown the Welcome Bot adds to its message to each new member (an invitation may replace it).",
            ),
        ),
    ]
