from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("realms", "0010_message_editing_policy")]

    operations = [
        # Organizations that existed before read receipts keep them off (their people were never
        # told that others could see what they read); new organizations have them on, as in Zulip.
        migrations.AddField(
            model_name="realm",
            name="enable_read_receipts",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name="realm",
            name="enable_read_receipts",
            field=models.BooleanField(
                default=True,
                help_text="Whether people may see who read a message (each may still keep their own reads to themselves).",
            ),
        ),
    ]
