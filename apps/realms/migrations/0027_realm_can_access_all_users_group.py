"""Whether guests see everyone: Zulip's can_access_all_users_group, set for existing organizations to
Zulip's default (role:everyone: guests saw everyone before this setting existed).

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULT_GROUP = "role:everyone"


def set_default(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.filter(can_access_all_users_group__isnull=True).order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is not None:
            realm.can_access_all_users_group = group
            realm.save(update_fields=["can_access_all_users_group"])


class Migration(migrations.Migration):

    dependencies = [
        ('groups', '0003_system_bots_leave_system_groups'),
        ('realms', '0026_direct_message_groups'),
    ]

    operations = [
        migrations.AddField(
            model_name='realm',
            name='can_access_all_users_group',
            field=models.ForeignKey(help_text='Whether guests see everyone (role:everyone) or only the people they share a channel or a direct message conversation with (role:members); the others appear to them as an unknown user.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='groups.usergroup'),
        ),
        migrations.RunPython(set_default, migrations.RunPython.noop),
    ]
