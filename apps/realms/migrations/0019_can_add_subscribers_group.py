"""Who may subscribe others to channels: Zulip's realm-level can_add_subscribers_group, set for
existing organizations to Zulip's default (role:members, who could do it until now).

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULT_GROUP = "role:members"


def set_default(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is not None:
            realm.can_add_subscribers_group = group
            realm.save(update_fields=["can_add_subscribers_group"])


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0018_playground_audit_events"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_add_subscribers_group",
            field=models.ForeignKey(
                help_text="Who may subscribe others to any channel they may see (each channel's own setting adds others).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.RunPython(set_default, migrations.RunPython.noop),
    ]
