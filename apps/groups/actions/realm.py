"""PATCH /realm: the organization's own settings (apps.realms) and its group-valued settings
(here), changed together or not at all."""

from typing import Any

from django.db import transaction

from apps.core.errors import OrganizationOwnerRequiredError
from apps.groups.actions.settings import check_realm_group_setting_change, do_change_realm_permission_group_setting
from apps.groups.selectors import setting_values_for_api
from apps.groups.serializers import GroupSettingChange
from apps.realms.actions import do_change_realm_settings
from apps.realms.models import Realm
from apps.realms.selectors import lock_realm
from apps.realms.serializers import setting_for_api
from apps.users.models import User

# What only owners change, as Zulip's update_realm: who may join (since feature level 143), when
# members become full members, who may invite, create and manage groups.
OWNER_SETTINGS = {"emails_restricted_to_domains", "disallow_disposable_email_addresses", "waiting_period_threshold"}
OWNER_GROUP_SETTINGS = {
    "create_multiuse_invite_group",
    "can_invite_users_group",
    "can_create_groups",
    "can_manage_all_groups",
}


@transaction.atomic
def check_update_realm(
    realm: Realm, settings: dict[str, Any], group_changes: dict[str, GroupSettingChange], *, acting_user: User
) -> dict[str, Any]:
    """Change these settings (checked first: nothing changes when one is refused); returns those
    whose value changed, with their new value as the API shows it (Zulip's answer to PATCH /realm).
    Emits and audits what do_change_realm_settings and do_change_realm_permission_group_setting do."""
    if (OWNER_SETTINGS & set(settings) or OWNER_GROUP_SETTINGS & set(group_changes)) and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    # One change at a time, each from the values the one before left (the fuzzing QA pass: two
    # requests read the same anonymous group, the first deleted it, the second answered 500).
    lock_realm(realm.id)
    realm.refresh_from_db()
    checked = {name: check_realm_group_setting_change(realm, name, change) for name, change in group_changes.items()}
    before = {name: getattr(realm, name) for name in settings}
    do_change_realm_settings(realm, settings, acting_user=acting_user)
    after = {name: getattr(realm, name) for name in settings}
    answer = dict(setting_for_api(name, value) for name, value in after.items() if value != before[name])
    for name, value in checked.items():
        if value is None:
            continue
        do_change_realm_permission_group_setting(realm, name, value, acting_user=acting_user)
        group_id = getattr(realm, f"{name}_id")
        answer[name] = setting_values_for_api(realm.id, [group_id])[group_id]
    return answer
