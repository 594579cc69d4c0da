"""POST /register tells the user what they may do, as Zulip's does from the organization's group
settings (the permissions QA pass: the six booleans were missing; clients show or hide buttons by
them)."""

import pytest

from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import SystemGroups
from apps.groups.selectors import get_system_group
from tests.api import api_for, assert_success

KEYS = (
    "can_create_public_streams",
    "can_create_private_streams",
    "can_create_web_public_streams",
    "can_create_streams",
    "can_subscribe_other_users",
    "can_invite_others_to_realm",
)


def permissions(user) -> dict[str, bool]:
    state = assert_success(api_for(user).post("/register", {"fetch_event_types": '["realm_user"]'}))
    return {key: state[key] for key in KEYS}


@pytest.mark.parametrize(
    ("role", "expected"),
    [("member", (True, True, False, True, True, True)), ("guest", (False, False, False, False, False, False))],
)
def test_by_role_with_the_defaults(request, role, expected):
    assert permissions(request.getfixturevalue(role)) == dict(zip(KEYS, expected, strict=True))


def test_as_the_settings_say(realm, member, admin):
    admins = get_system_group(realm.id, SystemGroups.ADMINISTRATORS)
    for setting in ("can_create_private_channel_group", "can_add_subscribers_group", "can_invite_users_group"):
        do_change_realm_permission_group_setting(realm, setting, admins, acting_user=None)
    assert permissions(member) == {
        "can_create_public_streams": True,
        "can_create_private_streams": False,
        "can_create_web_public_streams": False,
        "can_create_streams": True,
        "can_subscribe_other_users": False,
        "can_invite_others_to_realm": False,
    }
    do_change_realm_permission_group_setting(realm, "can_create_public_channel_group", admins, acting_user=None)
    assert permissions(member)["can_create_streams"] is False
    assert permissions(admin) == dict.fromkeys(KEYS, True) | {"can_create_web_public_streams": False}
