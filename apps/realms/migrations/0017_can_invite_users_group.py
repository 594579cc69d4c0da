"""Who may invite people by email: Zulip's can_invite_users_group, set for existing organizations to
Zulip's default (role:members); and the audit entry of an invitation email sent.

The default is frozen here: migrations must not change when the app's code does.
"""

import django.db.models.deletion
from django.db import migrations, models

DEFAULT_GROUP = "role:members"


def set_default(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    UserGroup = apps.get_model("groups", "UserGroup")
    for realm in Realm.objects.order_by("id"):
        group = UserGroup.objects.filter(realm=realm, is_system_group=True, name=DEFAULT_GROUP).first()
        if group is not None:
            realm.can_invite_users_group = group
            realm.save(update_fields=["can_invite_users_group"])


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0002_system_groups_of_existing_realms"),
        ("realms", "0016_allowed_domains"),
    ]

    operations = [
        migrations.AddField(
            model_name="realm",
            name="can_invite_users_group",
            field=models.ForeignKey(
                help_text="Who may invite people by email.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="groups.usergroup",
            ),
        ),
        migrations.AlterField(
            model_name="realmauditlog",
            name="event_type",
            field=models.PositiveSmallIntegerField(
                choices=[
                    (101, "user created"),
                    (103, "user deactivated"),
                    (104, "user reactivated"),
                    (105, "role changed"),
                    (122, "password changed"),
                    (124, "name changed"),
                    (125, "email changed"),
                    (127, "API key rotated"),
                    (128, "bot owner changed"),
                    (132, "setting changed"),
                    (134, "special permission changed"),
                    (201, "organization deactivated"),
                    (202, "organization reactivated"),
                    (207, "organization setting changed"),
                    (215, "organization created"),
                    (216, "default for new users changed"),
                    (218, "allowed domain added"),
                    (219, "allowed domain changed"),
                    (220, "allowed domain removed"),
                    (223, "linkifier added"),
                    (224, "linkifier changed"),
                    (225, "linkifier removed"),
                    (228, "linkifiers reordered"),
                    (240, "profile field created"),
                    (241, "profile field changed"),
                    (242, "profile field removed"),
                    (243, "profile fields reordered"),
                    (250, "invitation created"),
                    (251, "invitation revoked"),
                    (252, "invitation email sent"),
                    (601, "channel created"),
                    (602, "channel archived"),
                    (604, "channel unarchived"),
                    (603, "channel renamed"),
                    (607, "channel setting changed"),
                    (608, "channel permission changed"),
                    (620, "topic deleted"),
                    (701, "group created"),
                    (703, "group member added"),
                    (704, "group member removed"),
                    (705, "subgroup added"),
                    (706, "subgroup removed"),
                    (720, "group renamed"),
                    (721, "group description changed"),
                    (722, "group permission changed"),
                    (730, "group deactivated"),
                    (731, "group reactivated"),
                    (901, "channel folder created"),
                    (902, "channel folder renamed"),
                    (903, "channel folder description changed"),
                    (904, "channel folder archived"),
                    (905, "channel folder unarchived"),
                    (920, "channel folders reordered"),
                ]
            ),
        ),
        migrations.RunPython(set_default, migrations.RunPython.noop),
    ]
