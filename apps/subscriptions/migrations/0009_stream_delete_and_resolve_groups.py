"""Per-channel can_delete_any_message_group, can_delete_own_message_group (Zulip's feature level
407) and can_resolve_topics_group (feature level 402): existing channels get their organization's
role:nobody group, the default of a new channel, so nothing changes for them (the organization's
settings of the same names still decide)."""

import django.db.models.deletion
from django.db import migrations, models

NAMES = ("can_delete_any_message_group", "can_delete_own_message_group", "can_resolve_topics_group")


def set_nobody(apps, schema_editor):
    Stream = apps.get_model("subscriptions", "Stream")
    UserGroup = apps.get_model("groups", "UserGroup")
    nobody = dict(UserGroup.objects.filter(is_system_group=True, name="role:nobody").values_list("realm_id", "id"))
    for realm_id, group_id in nobody.items():
        Stream.objects.filter(realm_id=realm_id).update(**{f"{name}_id": group_id for name in NAMES})


def field(null: bool):
    return models.ForeignKey(
        null=null, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="groups.usergroup"
    )


class Migration(migrations.Migration):
    # Rows updated, then the columns altered: in one transaction PostgreSQL would refuse the ALTER
    # ("pending trigger events" of the deferred foreign keys).
    atomic = False

    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("subscriptions", "0008_channel_email_index"),
    ]

    operations = [
        *(migrations.AddField(model_name="stream", name=name, field=field(True)) for name in NAMES),
        migrations.RunPython(set_nobody, migrations.RunPython.noop),
        *(migrations.AlterField(model_name="stream", name=name, field=field(False)) for name in NAMES),
    ]
