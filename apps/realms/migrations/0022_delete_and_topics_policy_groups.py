"""Who may change channels' message-deletion settings and topics policy: Zulip's
can_set_delete_message_policy_group (feature level 407) and can_set_topics_policy_group (feature
level 392), set for existing organizations to Zulip's defaults (role:moderators, role:members).

The defaults are frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULTS = {
    "can_set_delete_message_policy_group": "role:moderators",
    "can_set_topics_policy_group": "role:members",
}


def set_defaults(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for setting, group_name in DEFAULTS.items():
        groups = dict(UserGroup.objects.filter(is_system_group=True, name=group_name).values_list("realm_id", "id"))
        for realm_id, group_id in groups.items():
            Realm.objects.filter(id=realm_id, **{f"{setting}__isnull": True}).update(**{f"{setting}_id": group_id})


def group_setting(help_text: str) -> models.ForeignKey:
    return models.ForeignKey(
        help_text=help_text,
        null=True,
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to="groups.usergroup",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0021_avatar_changes_disabled"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_set_delete_message_policy_group",
            field=group_setting("Who may change who may delete messages in a channel they administer."),
        ),
        migrations.AddField(
            model_name="realm",
            name="can_set_topics_policy_group",
            field=group_setting("Who may change whether a channel they administer takes messages without a topic."),
        ),
        migrations.RunPython(set_defaults, migrations.RunPython.noop),
    ]
