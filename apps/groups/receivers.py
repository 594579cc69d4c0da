"""What the groups app does when the apps below it change (registered in GroupsConfig.ready).

The hooks of apps.realms and apps.users do not say who made the change: the audit entries written
here (system groups created, memberships a role brings) have no acting user.
"""

from collections.abc import Callable, Sequence

from apps.core.tasks import periodic
from apps.groups.actions.system_groups import (
    do_add_user_to_system_groups,
    do_create_system_groups,
    do_update_full_members,
    do_update_system_groups_for_role,
    send_membership_events_for_reactivation,
    send_setting_updates_for_user,
)
from apps.groups.selectors import member_ids_of_named_groups
from apps.realms.hooks import realm_created, realm_settings_changed
from apps.realms.models import Realm
from apps.users.hooks import (
    settings_target_members,
    user_created,
    user_reactivated,
    user_role_changing,
    users_deactivated,
)
from apps.users.models import User


@realm_created.register
def create_system_groups(realm: Realm) -> None:
    do_create_system_groups(realm, acting_user=None)


@realm_settings_changed.register
def update_full_members(realm: Realm, changes: dict) -> None:
    if "waiting_period_threshold" in changes:
        do_update_full_members(realm, acting_user=None)


@periodic(3600)
def promote_new_full_members() -> None:
    """Members whose waiting period ended since the last run become full members (Zulip's daily
    promote_new_full_members; here hourly, in the task worker)."""
    for realm in Realm.objects.filter(deactivated=False, waiting_period_threshold__gt=0).order_by("id"):
        do_update_full_members(realm, acting_user=None)


@user_created.register
def join_system_groups(user: User) -> None:
    """The user joins their role's system groups; the server's own bots (the Welcome Bot, the
    Notification Bot) none: they are no members of the organization's (Zulip's are of its internal
    realm; POST /register lists them in cross_realm_bots, not in realm_users)."""
    if not user.is_system_bot:
        do_add_user_to_system_groups(user, acting_user=None)


user_reactivated.register(send_membership_events_for_reactivation)


@user_role_changing.register
def move_between_system_groups(user: User, old_role: int, new_role: int) -> Callable[[], None]:
    return lambda: do_update_system_groups_for_role(user, old_role, new_role, acting_user=None)


@users_deactivated.register
def update_settings_that_listed(users: Sequence[User]) -> None:
    for user in users:
        send_setting_updates_for_user(user)


# PATCH /settings with target_users: group_ids name the groups' active members.
settings_target_members.register(member_ids_of_named_groups)
