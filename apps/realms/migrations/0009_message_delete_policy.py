"""Who may delete messages: Zulip's can_delete_any_message_group and can_delete_own_message_group,
set for existing organizations to Zulip's defaults (role:administrators, role:everyone), and
message_content_delete_limit_seconds (Zulip's default: 600).

The defaults are frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULTS = {
    "can_delete_any_message_group": "role:administrators",
    "can_delete_own_message_group": "role:everyone",
}


def set_defaults(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        for setting, group_name in DEFAULTS.items():
            group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=group_name).first()
            if group is not None and getattr(realm, f"{setting}_id") is None:
                setattr(realm, setting, group)
        realm.save(update_fields=list(DEFAULTS))


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
        ("realms", "0008_channel_folder_audit_events"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_delete_any_message_group",
            field=group_setting("Who may delete any message, at any time."),
        ),
        migrations.AddField(
            model_name="realm",
            name="can_delete_own_message_group",
            field=group_setting("Who may delete their own messages (and their bots'), within the time limit below."),
        ),
        migrations.AddField(
            model_name="realm",
            name="message_content_delete_limit_seconds",
            field=models.PositiveIntegerField(
                blank=True,
                db_default=600,
                default=600,
                help_text="How long after sending people may delete their own messages, in seconds; empty: any time.",
                null=True,
            ),
        ),
        migrations.RunPython(set_defaults, migrations.RunPython.noop),
    ]
