"""Who may create reusable invitation links: Zulip's can_create_multiuse_invite_group, set for
existing organizations to Zulip's default (role:administrators).

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

SETTING = "can_create_multiuse_invite_group"
DEFAULT_GROUP = "role:administrators"


def set_default(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.filter(**{f"{SETTING}__isnull": True}).order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is None:
            continue  # an organization without system groups has no users to invite anyone
        setattr(realm, SETTING, group)
        realm.save(update_fields=[SETTING])


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0005_remove_realm_default_email_address_visibility"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name=SETTING,
            field=models.ForeignKey(
                help_text="Who may create reusable invitation links.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.RunPython(set_default, migrations.RunPython.noop),
    ]
