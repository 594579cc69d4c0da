"""System groups for organizations created before user groups existed, and their users' memberships.

A frozen copy of apps.groups.actions.create_system_groups and add_user_to_system_groups: migrations
must not change when the app's code does.
"""

from django.db import migrations

NOBODY = "role:nobody"
DESCRIPTIONS = {
    NOBODY: "Nobody",
    "role:owners": "Owners of this organization",
    "role:administrators": "Administrators of this organization, including owners",
    "role:moderators": "Moderators of this organization, including administrators",
    "role:fullmembers": "Members of this organization, not including new accounts and guests",
    "role:members": "Members of this organization, not including guests",
    "role:everyone": "Everyone in this organization, including guests",
    "role:internet": "Everyone on the Internet",
}
NESTED = [name for name in DESCRIPTIONS if name != NOBODY]
FOR_ROLE = {
    100: ["role:owners"],
    200: ["role:administrators"],
    300: ["role:moderators"],
    400: ["role:members", "role:fullmembers"],
    600: ["role:everyone"],
}
SETTINGS = [
    "can_add_members_group",
    "can_join_group",
    "can_leave_group",
    "can_manage_group",
    "can_mention_group",
    "can_remove_members_group",
]


def create_system_groups(apps, schema_editor):
    Realm = apps.get_model("realms", "Realm")
    User = apps.get_model("users", "User")
    UserGroup = apps.get_model("groups", "UserGroup")
    UserGroupMembership = apps.get_model("groups", "UserGroupMembership")
    GroupGroupMembership = apps.get_model("groups", "GroupGroupMembership")

    for realm in Realm.objects.exclude(user_groups__is_system_group=True).order_by("id"):
        groups = {
            name: UserGroup.objects.create(
                realm=realm, name=name, description=description, is_system_group=True, date_created=realm.date_created
            )
            for name, description in DESCRIPTIONS.items()
        }
        for group in groups.values():
            for setting in SETTINGS:
                setattr(group, setting, groups[NOBODY])
            group.save(update_fields=SETTINGS)
        GroupGroupMembership.objects.bulk_create(
            GroupGroupMembership(subgroup=groups[smaller], supergroup=groups[larger])
            for smaller, larger in zip(NESTED, NESTED[1:], strict=False)
        )
        UserGroupMembership.objects.bulk_create(
            UserGroupMembership(user_group=groups[name], user_id=user_id)
            for user_id, role in User.objects.filter(realm=realm).values_list("id", "role")
            for name in FOR_ROLE[role]
        )


class Migration(migrations.Migration):
    dependencies = [
        ("groups", "0001_initial"),
        ("users", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_system_groups, migrations.RunPython.noop)]
