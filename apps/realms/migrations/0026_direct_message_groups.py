"""Who may authorize direct messages and who may start them: Zulip's direct_message_permission_group
and direct_message_initiator_group, set for existing organizations to Zulip's default (role:everyone:
anyone could send any direct message before these settings existed).

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULT_GROUP = "role:everyone"
SETTINGS = ("direct_message_initiator_group", "direct_message_permission_group")


def set_default(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        unset = [name for name in SETTINGS if getattr(realm, f"{name}_id") is None]
        if group is not None and unset:
            for name in unset:
                setattr(realm, name, group)
            realm.save(update_fields=unset)


class Migration(migrations.Migration):

    dependencies = [
        ('groups', '0003_system_bots_leave_system_groups'),
        ('realms', '0025_realm_presence_disabled'),
    ]

    operations = [
        migrations.AddField(
            model_name='realm',
            name='direct_message_initiator_group',
            field=models.ForeignKey(help_text='Who may start direct message conversations (anyone may answer one that exists).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='groups.usergroup'),
        ),
        migrations.AddField(
            model_name='realm',
            name='direct_message_permission_group',
            field=models.ForeignKey(help_text='Who may authorize a direct message: each one must include one of them (as sender or recipient).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='groups.usergroup'),
        ),
        migrations.RunPython(set_default, migrations.RunPython.noop),
    ]
