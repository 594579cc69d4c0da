"""Who may create channels: Zulip's can_create_public_channel_group and
can_create_private_channel_group, set for existing organizations to Zulip's default (role:members,
which every member had been allowed until now).

The defaults are frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

SETTINGS = ["can_create_private_channel_group", "can_create_public_channel_group"]
DEFAULT_GROUP = "role:members"


def set_defaults(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is None:
            continue  # an organization without system groups has no users to create channels
        for setting in SETTINGS:
            if getattr(realm, f"{setting}_id") is None:
                setattr(realm, setting, group)
        realm.save(update_fields=SETTINGS)


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_create_private_channel_group",
            field=models.ForeignKey(
                help_text="Who may create private channels.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.AddField(
            model_name="realm",
            name="can_create_public_channel_group",
            field=models.ForeignKey(
                help_text="Who may create public channels.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.RunPython(set_defaults, migrations.RunPython.noop),
    ]
