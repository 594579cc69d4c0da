"""Per-channel can_create_topic_group, as Zulip's: who may start a topic. Existing
channels get their organization's role:everyone group, the default of a new channel, so anyone who
may post in them still starts topics.

The group is frozen here: migrations must not change when the app's code does."""

import django.db.models.deletion
from django.db import migrations, models

NAME = "can_create_topic_group"


def set_everyone(apps, schema_editor):
    Stream = apps.get_model("subscriptions", "Stream")
    UserGroup = apps.get_model("groups", "UserGroup")
    everyone = dict(UserGroup.objects.filter(is_system_group=True, name="role:everyone").values_list("realm_id", "id"))
    for realm_id, group_id in everyone.items():
        Stream.objects.filter(realm_id=realm_id).update(**{f"{NAME}_id": group_id})


def field(null: bool):
    return models.ForeignKey(
        null=null, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="groups.usergroup"
    )


class Migration(migrations.Migration):
    # Rows updated, then the column altered: in one transaction PostgreSQL would refuse the ALTER
    # ("pending trigger events" of the deferred foreign keys).
    atomic = False

    dependencies = [
        ("groups", "0003_system_bots_leave_system_groups"),
        ("subscriptions", "0010_stream_verbose_name"),
    ]

    operations = [
        migrations.AddField(model_name="stream", name=NAME, field=field(True)),
        migrations.RunPython(set_everyone, migrations.RunPython.noop),
        migrations.AlterField(model_name="stream", name=NAME, field=field(False)),
    ]
