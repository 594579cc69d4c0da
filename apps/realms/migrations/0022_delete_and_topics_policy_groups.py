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
    # One UPDATE an organization: a second UPDATE of a row this transaction wrote makes PostgreSQL
    # queue the checks of the table's deferred foreign keys, and it then refuses this migration's
    # CREATE INDEX ("pending trigger events": upgrading a database with organizations failed so).
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    system = UserGroup.objects.filter(is_system_group=True, name__in=DEFAULTS.values())
    groups = {(realm_id, name): group_id for realm_id, name, group_id in system.values_list("realm_id", "name", "id")}
    for realm in Realm.objects.order_by("id"):
        changes = {
            f"{setting}_id": groups[realm.id, group_name]
            for setting, group_name in DEFAULTS.items()
            if getattr(realm, f"{setting}_id") is None and (realm.id, group_name) in groups
        }
        if changes:
            Realm.objects.filter(id=realm.id).update(**changes)


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
