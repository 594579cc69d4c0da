"""Who may create user groups and who may manage them all: Zulip's realm-level can_create_groups
(role:members, who could create them until now) and can_manage_all_groups (role:owners, Zulip's
default; administrators managed every group until now), set for existing organizations.

The defaults are frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULTS = {"can_create_groups": "role:members", "can_manage_all_groups": "role:owners"}


def set_defaults(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        for field, group_name in DEFAULTS.items():
            group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=group_name).first()
            if group is not None:
                setattr(realm, field, group)
        realm.save(update_fields=list(DEFAULTS))


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0022_delete_and_topics_policy_groups"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_create_groups",
            field=models.ForeignKey(
                help_text="Who may create user groups.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.AddField(
            model_name="realm",
            name="can_manage_all_groups",
            field=models.ForeignKey(
                help_text="Who may manage every user group (its name, members and settings), besides those each group names.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.RunPython(set_defaults, migrations.RunPython.noop),
    ]
