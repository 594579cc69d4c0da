"""Who may create reusable invitation links is Zulip's create_multiuse_invite_group (no "can_"),
the name the API gives it (the wire-conformance QA pass: it was can_create_multiuse_invite_group)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("realms", "0023_group_creation_and_management"),
    ]

    operations = [
        migrations.RenameField(
            model_name="realm",
            old_name="can_create_multiuse_invite_group",
            new_name="create_multiuse_invite_group",
        ),
    ]
