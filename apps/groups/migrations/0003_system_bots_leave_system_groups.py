"""The server's own bots (owned by nobody: the Welcome Bot, the Notification Bot) are members of no
system group of their organization (apps.groups.receivers.join_system_groups); those created before
leave them (clients see it when they register again)."""

from django.db import migrations


def leave_system_groups(apps, schema_editor):
    UserGroupMembership = apps.get_model("groups", "UserGroupMembership")
    UserGroupMembership.objects.filter(
        user__bot_type__isnull=False, user__bot_owner__isnull=True, user_group__is_system_group=True
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
    ]

    operations = [migrations.RunPython(leave_system_groups, migrations.RunPython.noop)]
