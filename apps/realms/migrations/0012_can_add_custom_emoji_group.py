"""Who may add custom emoji: Zulip's can_add_custom_emoji_group, set for existing organizations to
Zulip's default (role:members, who could add them before this setting existed).

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULT_GROUP = "role:members"


def set_default(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.filter(can_add_custom_emoji_group__isnull=True).order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is not None:
            realm.can_add_custom_emoji_group = group
            realm.save(update_fields=["can_add_custom_emoji_group"])


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0011_enable_read_receipts"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_add_custom_emoji_group",
            field=models.ForeignKey(
                help_text="Who may add custom emoji.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.RunPython(set_default, migrations.RunPython.noop),
    ]
