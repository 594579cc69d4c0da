"""Who may create bots: Zulip's can_create_bots_group (every kind) and can_create_write_only_bots_group
(incoming webhook bots), set for existing organizations to Zulip's default (role:members for both).

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULT_GROUP = "role:members"
SETTINGS = ("can_create_bots_group", "can_create_write_only_bots_group")


def set_defaults(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is not None:
            for name in SETTINGS:
                setattr(realm, name, group)
            realm.save(update_fields=list(SETTINGS))


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0014_audit_channel_unarchived"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_create_bots_group",
            field=models.ForeignKey(
                help_text="Who may create bots of every kind.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.AddField(
            model_name="realm",
            name="can_create_write_only_bots_group",
            field=models.ForeignKey(
                help_text="Who may create incoming webhook bots (bots that only post).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.RunPython(set_defaults, migrations.RunPython.noop),
    ]
