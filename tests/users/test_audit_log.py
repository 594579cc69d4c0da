"""What the users actions write to the audit log: who changed which user or profile field, with
the old and new value; nothing for a refused change or one that changes nothing."""

from io import StringIO

import pytest
from django.core.management import call_command

from apps.core.errors import JsonableError
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user, do_reactivate_user
from apps.users.actions.bot_owner import do_change_bot_owner
from apps.users.actions.create_user import do_create_user
from apps.users.actions.profile_fields import (
    check_add_realm_custom_profile_field,
    check_reorder_realm_custom_profile_fields,
    check_update_realm_custom_profile_field,
    do_remove_realm_custom_profile_field,
)
from apps.users.actions.roles import check_change_user_role, do_change_user_role
from apps.users.actions.user_settings import (
    do_change_full_name,
    do_change_user_delivery_email,
    do_regenerate_api_key,
    do_set_can_change_user_emails,
    do_set_user_staff,
)
from apps.users.models import BotType, CustomProfileField, Role
from tests.factories import BotFactory

E = AuditLogEventType


def value(prop: str, old, new, **more) -> dict:
    """The extra_data of a changed value."""
    return {"property": prop, "old_value": old, "new_value": new, **more}


GROUP_EVENTS = [t for t in AuditLogEventType if t.name.startswith("USER_GROUP_")]


def entries(realm, *types) -> list[tuple]:
    """(event type, acting user id, modified user id, extra_data) of the organization's entries, but
    for the groups app's (system-group memberships follow users: tests/groups/test_audit_log.py)."""
    rows = RealmAuditLog.objects.filter(realm=realm).exclude(event_type__in=GROUP_EVENTS).order_by("id")
    if types:
        rows = rows.filter(event_type__in=types)
    return [(row.event_type, row.acting_user_id, row.modified_user_id, row.extra_data) for row in rows]


def test_creating_users_and_bots_is_recorded_with_their_role(realm, admin):
    user = do_create_user(realm, "new@example.com", "New One", role=Role.MODERATOR, acting_user=admin)
    bot = do_create_user(realm, "b-bot@example.com", "Bo", bot_type=BotType.GENERIC, bot_owner=user, acting_user=user)
    assert entries(realm, E.USER_CREATED) == [
        (E.USER_CREATED, admin.id, user.id, {"role": Role.MODERATOR}),
        (E.USER_CREATED, user.id, bot.id, {"role": Role.MEMBER}),
    ]


def test_a_refused_creation_records_nothing(realm, member):
    with pytest.raises(JsonableError, match="already in use"):
        do_create_user(realm, "MEMBER@example.com", "Twin", acting_user=None)
    assert entries(realm, E.USER_CREATED) == []


def test_deactivation_records_each_user_and_bot_and_reactivation_the_user(realm, admin, member, bot):
    do_deactivate_user(member, acting_user=admin)
    do_reactivate_user(member, acting_user=None)
    do_reactivate_user(member, acting_user=None)  # already active: nothing
    assert entries(realm, E.USER_DEACTIVATED, E.USER_REACTIVATED) == [
        (E.USER_DEACTIVATED, admin.id, bot.id, {}),
        (E.USER_DEACTIVATED, admin.id, member.id, {}),
        (E.USER_REACTIVATED, None, member.id, {}),
    ]


def test_role_changes_record_old_and_new_role_and_refusals_nothing(realm, owner, admin, member):
    check_change_user_role(member, Role.MODERATOR, acting_user=admin)
    check_change_user_role(member, Role.MODERATOR, acting_user=admin)  # the same role
    with pytest.raises(JsonableError):
        check_change_user_role(member, Role.OWNER, acting_user=admin)  # only owners
    with pytest.raises(JsonableError):
        do_change_user_role(owner, Role.MEMBER, acting_user=None)  # the last owner
    assert entries(realm, E.USER_ROLE_CHANGED) == [(E.USER_ROLE_CHANGED, admin.id, member.id, value("role", 400, 300))]


def test_name_email_and_bot_owner_changes_record_old_and_new_values(realm, owner, member, bot):
    do_change_full_name(member, "Mel M", acting_user=owner)
    do_change_full_name(member, "Mel M", acting_user=owner)  # unchanged
    do_change_user_delivery_email(member, "mel@example.com", acting_user=owner)
    with pytest.raises(JsonableError):
        do_change_user_delivery_email(member, "owner@example.com", acting_user=owner)  # taken
    do_change_bot_owner(bot, owner, acting_user=owner)
    assert entries(realm, E.USER_FULL_NAME_CHANGED, E.USER_EMAIL_CHANGED, E.USER_BOT_OWNER_CHANGED) == [
        (E.USER_FULL_NAME_CHANGED, owner.id, member.id, value("full_name", "Mel Member", "Mel M")),
        (E.USER_EMAIL_CHANGED, owner.id, member.id, value("delivery_email", "member@example.com", "mel@example.com")),
        (E.USER_BOT_OWNER_CHANGED, owner.id, bot.id, value("bot_owner_id", member.id, owner.id)),
    ]


def test_a_new_api_key_is_recorded_without_the_key(realm, member):
    old_key = member.api_key
    new_key = do_regenerate_api_key(member, acting_user=member)
    assert entries(realm, E.USER_API_KEY_CHANGED) == [(E.USER_API_KEY_CHANGED, member.id, member.id, {})]
    assert not any(key in str(entries(realm)) for key in (old_key, new_key))


def test_special_permissions_are_recorded_when_they_change(realm, owner, member):
    do_set_user_staff(member, True, acting_user=owner)
    do_set_user_staff(member, True, acting_user=owner)  # already
    do_set_can_change_user_emails(owner, True, acting_user=None)
    do_set_can_change_user_emails(owner, False, acting_user=None)
    assert entries(realm, E.USER_SPECIAL_PERMISSION_CHANGED) == [
        (E.USER_SPECIAL_PERMISSION_CHANGED, owner.id, member.id, value("is_staff", False, True)),
        (E.USER_SPECIAL_PERMISSION_CHANGED, None, owner.id, value("can_change_user_emails", False, True)),
        (E.USER_SPECIAL_PERMISSION_CHANGED, None, owner.id, value("can_change_user_emails", True, False)),
    ]


def test_operators_commands_record_no_acting_user(realm, owner, member):
    call_command("change_user_role", member.delivery_email, "moderator", stdout=StringIO())
    call_command("rotate_api_key", member.delivery_email, stdout=StringIO())
    call_command("deactivate_user", member.delivery_email, "--for-real", stdout=StringIO())
    assert [(event, acting) for event, acting, _, _ in entries(realm)] == [
        (E.USER_ROLE_CHANGED, None),
        (E.USER_API_KEY_CHANGED, None),
        (E.USER_DEACTIVATED, None),
    ]


SELECT_DATA = {"vim": {"text": "Vim", "order": "1"}, "emacs": {"text": "Emacs", "order": "2"}}


def test_profile_field_definitions_are_recorded(realm, admin):
    options = {"hint": "", "display_in_profile_summary": False, "required": False, "editable_by_user": True}
    team = check_add_realm_custom_profile_field(
        realm,
        name="Team",
        field_type=CustomProfileField.FieldType.SHORT_TEXT,
        field_data={},
        **options,
        acting_user=admin,
    )
    editor = check_add_realm_custom_profile_field(
        realm,
        name="Editor",
        field_type=CustomProfileField.FieldType.SELECT,
        field_data=SELECT_DATA,
        **options,
        acting_user=admin,
    )
    check_update_realm_custom_profile_field(team, name="Squad", required=True, acting_user=admin)
    check_update_realm_custom_profile_field(team, name="Squad", acting_user=admin)  # nothing changes
    check_update_realm_custom_profile_field(editor, field_data={"vim": SELECT_DATA["vim"]}, acting_user=admin)
    check_reorder_realm_custom_profile_fields(realm, [editor.id, team.id], acting_user=admin)
    check_reorder_realm_custom_profile_fields(realm, [editor.id, team.id], acting_user=admin)  # the same order
    team_id = team.id  # the deleted instance has none
    do_remove_realm_custom_profile_field(team, acting_user=None)
    assert entries(realm) == [
        (E.CUSTOM_PROFILE_FIELD_CREATED, admin.id, None, {"field_id": team_id, "name": "Team", "field_type": 1}),
        (E.CUSTOM_PROFILE_FIELD_CREATED, admin.id, None, {"field_id": editor.id, "name": "Editor", "field_type": 3}),
        (E.CUSTOM_PROFILE_FIELD_CHANGED, admin.id, None, value("name", "Team", "Squad", field_id=team_id)),
        (E.CUSTOM_PROFILE_FIELD_CHANGED, admin.id, None, value("required", False, True, field_id=team_id)),
        (E.CUSTOM_PROFILE_FIELD_CHANGED, admin.id, None,
         value("field_data", SELECT_DATA, {"vim": SELECT_DATA["vim"]}, field_id=editor.id)),
        (E.CUSTOM_PROFILE_FIELDS_REORDERED, admin.id, None, value("order", [team_id, editor.id], [editor.id, team_id])),
        (E.CUSTOM_PROFILE_FIELD_REMOVED, None, None, {"field_id": team_id, "name": "Squad"}),
    ]  # fmt: skip


def test_refused_profile_field_changes_record_nothing(realm, admin):
    options = {"hint": "", "display_in_profile_summary": False, "required": False, "editable_by_user": True}
    with pytest.raises(JsonableError, match="Label cannot be blank"):
        check_add_realm_custom_profile_field(realm, name=" ", field_type=1, field_data={}, **options, acting_user=admin)
    field = check_add_realm_custom_profile_field(
        realm, name="A", field_type=1, field_data={}, **options, acting_user=admin
    )
    with pytest.raises(JsonableError, match="name is too long"):
        check_update_realm_custom_profile_field(field, name="x" * 41, acting_user=admin)
    with pytest.raises(JsonableError, match="Invalid order mapping"):
        check_reorder_realm_custom_profile_fields(realm, [], acting_user=admin)
    assert [event for event, *_ in entries(realm)] == [E.CUSTOM_PROFILE_FIELD_CREATED]


def test_bots_deactivated_with_their_owner_are_each_recorded(realm, owner, member):
    bots = [BotFactory(realm=realm, bot_owner=member) for _ in range(2)]
    do_deactivate_user(member, acting_user=owner)
    assert [modified for _, _, modified, _ in entries(realm, E.USER_DEACTIVATED)] == [*[b.id for b in bots], member.id]
