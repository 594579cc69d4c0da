"""The rules of the users actions, called directly: the last owner, who may change roles,
deactivation taking a user's bots, custom profile fields and their values."""

import threading

import pytest
from django.db import close_old_connections, connection

from apps.core.errors import InvalidArgumentError, JsonableError, OrganizationOwnerRequiredError
from apps.realms.models import AuditLogEventType, EmailVisibility, RealmAuditLog
from apps.users.actions.activation import check_deactivate_user, do_deactivate_user, do_reactivate_user
from apps.users.actions.profile_data import check_remove_user_custom_profile_data, check_update_user_custom_profile_data
from apps.users.actions.profile_fields import (
    check_add_realm_custom_profile_field,
    check_reorder_realm_custom_profile_fields,
    check_update_realm_custom_profile_field,
    do_add_realm_custom_profile_field,
    do_update_realm_custom_profile_field,
)
from apps.users.actions.realm_defaults import check_update_realm_user_defaults, do_set_realm_user_defaults
from apps.users.actions.roles import check_change_user_role, do_change_user_role
from apps.users.actions.settings import (
    check_settings,
    check_update_settings,
    check_update_settings_of_users,
    do_change_user_settings,
)
from apps.users.actions.user_settings import check_update_user
from apps.users.errors import LastOwnerDeactivationError, LastOwnerRoleError, ProfileFieldLabelInUseError
from apps.users.models import CustomProfileField, CustomProfileFieldValue, RealmUserDefault, Role, User
from apps.users.selectors import profile_values_of, realm_user_default
from tests.api import ApiClient
from tests.concurrency import at_once, done_or_refused
from tests.factories import BotFactory, CustomProfileFieldFactory, RealmFactory, UserFactory

FieldType = CustomProfileField.FieldType
SELECT_DATA = {"vim": {"text": "Vim", "order": "1"}, "emacs": {"text": "Emacs", "order": "2"}}


def reloaded(user: User) -> User:
    return User.objects.get(id=user.id)


# --- the last owner ----------------------------------------------------------------------------------


def test_the_only_owner_can_be_neither_demoted_nor_deactivated(owner, admin, capture_events):
    with capture_events(admin) as received:
        with pytest.raises(LastOwnerRoleError):
            do_change_user_role(owner, Role.ADMINISTRATOR, acting_user=None)
        with pytest.raises(LastOwnerDeactivationError):
            do_deactivate_user(owner, acting_user=None)
    # The refusals rolled back to their savepoints: the test's transaction is still usable.
    assert (reloaded(owner).role, reloaded(owner).is_active) == (Role.OWNER, True)
    assert received[admin.id] == []


@pytest.mark.parametrize(
    "other",
    [
        {"role": Role.OWNER, "is_active": False},  # a deactivated owner
        {"role": Role.OWNER, "bot": True},  # a bot with the owner role
        {"role": Role.ADMINISTRATOR},
    ],
)
def test_only_an_active_human_owner_counts_as_another_owner(owner, member, realm, other):
    if other.pop("bot", False):
        BotFactory(realm=realm, bot_owner=member, **other)
    else:
        UserFactory(realm=realm, **other)
    with pytest.raises(LastOwnerRoleError):
        do_change_user_role(owner, Role.MEMBER, acting_user=None)


def test_with_a_second_owner_either_may_go(owner, realm):
    second = UserFactory(realm=realm, role=Role.OWNER)
    do_change_user_role(owner, Role.MEMBER, acting_user=second)
    with pytest.raises(LastOwnerDeactivationError):
        do_deactivate_user(second, acting_user=None)
    assert reloaded(owner).role == Role.MEMBER


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("change", ["deactivate", "demote"])
def test_two_owners_removing_each_other_at_once_leave_one_owner(change):
    realm = RealmFactory(string_id="")
    first, second = (UserFactory(realm=realm, role=Role.OWNER) for _ in range(2))
    barrier = threading.Barrier(2)
    outcomes = []

    def remove(target_id: int) -> None:
        try:
            target = User.objects.get(id=target_id)
            barrier.wait(timeout=10)
            if change == "deactivate":
                do_deactivate_user(target, acting_user=None)
            else:
                do_change_user_role(target, Role.MEMBER, acting_user=None)
            outcomes.append("done")
        except JsonableError:
            outcomes.append("refused")
        finally:
            close_old_connections()

    threads = [threading.Thread(target=remove, args=(user.id,)) for user in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["done", "refused"]
    assert User.objects.filter(realm=realm, role=Role.OWNER, is_active=True).count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_two_deactivations_of_one_user_at_once(owner, admin, member):
    # The races QA pass: both succeeded, each audited and announced (its peer_remove events too).
    answers = at_once(*(lambda user=user: ApiClient(user).delete(f"/users/{member.id}") for user in (owner, admin)))
    assert sorted(answer.status_code for answer in answers) == [200, 400]
    done_or_refused(answers, 400, "BAD_REQUEST", "User is deactivated")
    deactivations = RealmAuditLog.objects.filter(modified_user=member, event_type=AuditLogEventType.USER_DEACTIVATED)
    assert deactivations.count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_reactivations_of_one_user_at_once_reactivate_once(owner, admin, member):
    """The hostile-input QA pass: 20 reactivations at once wrote 6 audit rows, each with events."""
    do_deactivate_user(member, acting_user=owner)
    answers = at_once(
        *(lambda user=user: ApiClient(user).post(f"/users/{member.id}/reactivate") for user in (owner, admin) * 2)
    )
    assert [answer.status_code for answer in answers] == [200] * 4
    reactivations = RealmAuditLog.objects.filter(modified_user=member, event_type=AuditLogEventType.USER_REACTIVATED)
    assert reactivations.count() == 1


# --- who may change roles -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actor", "old_role", "new_role", "allowed"),
    [
        ("admin", Role.MEMBER, Role.MODERATOR, True),
        ("admin", Role.GUEST, Role.ADMINISTRATOR, True),
        ("admin", Role.ADMINISTRATOR, Role.MEMBER, True),
        ("admin", Role.MEMBER, Role.OWNER, False),
        ("admin", Role.OWNER, Role.ADMINISTRATOR, False),
        ("owner", Role.MEMBER, Role.OWNER, True),
        ("owner", Role.OWNER, Role.MEMBER, True),
    ],
)
def test_only_owners_give_or_take_the_owner_role(request, realm, owner, actor, old_role, new_role, allowed):
    target = UserFactory(realm=realm, role=old_role)
    acting_user = request.getfixturevalue(actor)
    if allowed:
        check_change_user_role(target, new_role, acting_user=acting_user)
    else:
        with pytest.raises(OrganizationOwnerRequiredError):
            check_change_user_role(target, new_role, acting_user=acting_user)
    assert reloaded(target).role == (new_role if allowed else old_role)


def test_the_same_role_is_no_change(admin, member, capture_events):
    with capture_events(admin) as received:
        check_change_user_role(member, Role.MEMBER, acting_user=admin)
    assert received[admin.id] == []


def test_an_update_refused_in_its_last_part_changes_nothing(owner, member):
    owner.can_change_user_emails = False
    with pytest.raises(JsonableError, match="not authorized to change user emails"):
        check_update_user(
            member,
            full_name="Renamed",
            role=Role.MODERATOR,
            profile_data=None,
            new_email="x@example.com",
            acting_user=owner,
        )
    member = reloaded(member)
    assert (member.full_name, member.role) == ("Mel Member", Role.MEMBER)


# --- deactivation ------------------------------------------------------------------------------------


def test_deactivation_takes_the_users_active_bots_first(admin, member, realm):
    bot = BotFactory(realm=realm, bot_owner=member)
    already = BotFactory(realm=realm, bot_owner=member, is_active=False)
    others = BotFactory(realm=realm, bot_owner=admin)
    assert do_deactivate_user(member, acting_user=admin) == [bot, member]
    assert [reloaded(u).is_active for u in (member, bot, already, others)] == [False, False, False, True]


def test_reactivation_leaves_the_bots_as_they_are(admin, member, bot):
    do_deactivate_user(member, acting_user=admin)
    do_reactivate_user(member, acting_user=admin)
    assert (reloaded(member).is_active, reloaded(bot).is_active) == (True, False)


def test_administrators_deactivate_owners_only_when_owners(owner, admin, realm):
    other_owner = UserFactory(realm=realm, role=Role.OWNER)
    with pytest.raises(OrganizationOwnerRequiredError):
        check_deactivate_user(other_owner, acting_user=admin)
    assert reloaded(other_owner).is_active
    check_deactivate_user(other_owner, acting_user=owner)
    assert not reloaded(other_owner).is_active


# --- custom profile fields -------------------------------------------------------------------------


def add_field(realm, name="Team", field_type=FieldType.SHORT_TEXT, **options):
    defaults = {"hint": "", "field_data": {}, "display_in_profile_summary": False, "required": False}
    return check_add_realm_custom_profile_field(
        realm, name=name, field_type=field_type, **{**defaults, "editable_by_user": True, **options}, acting_user=None
    )


def test_labels_are_unique_in_an_organization_only(realm, other_realm):
    field = add_field(realm)
    with pytest.raises(ProfileFieldLabelInUseError):
        add_field(realm)
    other = add_field(realm, name="Other")
    with pytest.raises(ProfileFieldLabelInUseError):
        check_update_realm_custom_profile_field(other, name="Team", acting_user=None)
    add_field(other_realm)
    assert list(CustomProfileField.objects.filter(realm=realm).values_list("id", flat=True)) == [field.id, other.id]


def test_a_label_taken_meanwhile_is_refused_like_one_taken_before(realm):
    """Two requests adding (or renaming to) the same label both pass the check; the second to write
    gets the error, not the database's IntegrityError (a 500), and its caller's transaction goes on."""
    add_field(realm, name="Team")
    late = CustomProfileField(realm=realm, name="Team", field_type=FieldType.SHORT_TEXT)
    with pytest.raises(ProfileFieldLabelInUseError):
        do_add_realm_custom_profile_field(late, acting_user=None)
    other = add_field(realm, name="Other")
    new = {"name": "Team", "hint": "", "field_data": {}, "display_in_profile_summary": False, "required": False}
    with pytest.raises(ProfileFieldLabelInUseError):
        do_update_realm_custom_profile_field(other, {**new, "editable_by_user": True}, acting_user=None)
    assert sorted(CustomProfileField.objects.filter(realm=realm).values_list("name", flat=True)) == ["Other", "Team"]
    assert not RealmAuditLog.objects.filter(event_type=AuditLogEventType.CUSTOM_PROFILE_FIELD_CHANGED).exists()


def test_removed_options_clear_the_values_that_used_them(realm, member, admin):
    field = add_field(realm, name="Editor", field_type=FieldType.SELECT, field_data=SELECT_DATA)
    other = UserFactory(realm=realm)
    check_update_user_custom_profile_data(member, [(field.id, "vim")], acting_user=member)
    check_update_user_custom_profile_data(other, [(field.id, "emacs")], acting_user=other)
    check_update_realm_custom_profile_field(field, field_data={"emacs": SELECT_DATA["emacs"]}, acting_user=admin)
    assert (profile_values_of(member), profile_values_of(other)) == ({}, {field.id: "emacs"})


def test_default_external_accounts_keep_their_definition(realm):
    field = add_field(realm, name="", field_type=FieldType.EXTERNAL_ACCOUNT, field_data={"subtype": "github"})
    with pytest.raises(JsonableError, match="Default custom field cannot be updated"):
        check_update_realm_custom_profile_field(field, name="GitHub", acting_user=None)
    check_update_realm_custom_profile_field(field, required=True, acting_user=None)
    field.refresh_from_db()
    assert (field.name, field.required) == ("GitHub username", True)


def test_a_reorder_lists_every_field_of_the_organization_once(realm, other_realm):
    first, second = add_field(realm, name="A"), add_field(realm, name="B")
    foreign = add_field(other_realm, name="C")
    for order in ([first.id], [first.id, second.id, foreign.id], [first.id, first.id, second.id]):
        with pytest.raises(JsonableError, match="Invalid order mapping"):
            check_reorder_realm_custom_profile_fields(realm, order, acting_user=None)
    check_reorder_realm_custom_profile_fields(realm, [second.id, first.id], acting_user=None)
    assert list(CustomProfileField.objects.filter(realm=realm).values_list("id", flat=True)) == [second.id, first.id]


def test_users_set_their_own_values_only_of_editable_fields(realm, member, admin):
    locked = add_field(realm, name="Badge", editable_by_user=False)
    with pytest.raises(JsonableError, match="You are not allowed to change this field"):
        check_update_user_custom_profile_data(member, [(locked.id, "gold")], acting_user=member)
    check_update_user_custom_profile_data(member, [(locked.id, "gold")], acting_user=admin)  # an administrator may
    check_update_user_custom_profile_data(admin, [(locked.id, "silver")], acting_user=admin)  # and for themselves
    assert (profile_values_of(member), profile_values_of(admin)) == ({locked.id: "gold"}, {locked.id: "silver"})


def test_values_are_all_valid_or_none_is_written(realm, member, capture_events):
    text = add_field(realm, name="Team")
    date = add_field(realm, name="Birthday", field_type=FieldType.DATE)
    with capture_events(member) as received, pytest.raises(JsonableError, match="Birthday is not a date"):
        check_update_user_custom_profile_data(member, [(text.id, "Core"), (date.id, "soon")], acting_user=member)
    assert profile_values_of(member) == {}
    assert received[member.id] == []


def test_unchanged_values_are_neither_written_nor_announced(realm, member, capture_events):
    field = CustomProfileFieldFactory(realm=realm)  # made without events: none may precede the block
    CustomProfileFieldValue.objects.create(user=member, field=field, value="Core", rendered_value="<p>Core</p>")
    with capture_events(member) as received:
        check_update_user_custom_profile_data(member, [(field.id, "Core")], acting_user=member)
        check_remove_user_custom_profile_data(member, [add_field(realm, name="Unset").id], acting_user=member)
    assert [e["type"] for e in received[member.id]] == ["custom_profile_fields"]  # the new field only


def test_bots_have_no_profile_values(realm, bot, admin):
    field = add_field(realm)
    with pytest.raises(JsonableError, match="Bots have no custom profile fields"):
        check_update_user_custom_profile_data(bot, [(field.id, "x")], acting_user=admin)
    assert not CustomProfileFieldValue.objects.filter(user=bot).exists()


# --- settings (apps/users/actions/settings.py, realm_defaults.py) ----------------------------------


def test_settings_are_checked_by_their_declarations():
    assert check_settings({"color_scheme": 2, "emojiset": "text"}) == {"color_scheme": 2, "emojiset": "text"}
    with pytest.raises(InvalidArgumentError, match="Invalid color_scheme"):
        check_settings({"emojiset": "text", "color_scheme": 0})
    with pytest.raises(InvalidArgumentError, match="enter_sends is not a boolean"):
        check_settings({"enter_sends": 1})  # what a caller other than the API could pass
    with pytest.raises(ValueError, match="not user settings"):
        check_settings({"full_name": "x"})


def test_users_with_different_changes_get_their_own(realm, admin):
    first, second = UserFactory(realm=realm), UserFactory(realm=realm, emojiset="text")
    changed = do_change_user_settings(
        {first: {"emojiset": "text", "enter_sends": True}, second: {"emojiset": "text", "color_scheme": 3}},
        acting_user=admin,
    )
    assert changed == [first, second]
    assert (reloaded(first).emojiset, reloaded(first).enter_sends, reloaded(second).color_scheme) == ("text", True, 3)
    entries = RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_SETTING_CHANGED).order_by("id")
    assert [(e.modified_user_id, e.extra_data) for e in entries] == [
        (first.id, {"property": "emojiset", "old_value": "google", "new_value": "text"}),
        (first.id, {"property": "enter_sends", "old_value": False, "new_value": True}),
        (second.id, {"property": "color_scheme", "old_value": 1, "new_value": 3}),
    ]


def test_own_settings_are_changed_by_their_owner_or_an_operator(member, admin):
    with pytest.raises(ValueError, match="changed by that person"):
        check_update_settings(member, changes={"enter_sends": True}, acting_user=admin)
    check_update_settings(member, changes={"enter_sends": True}, acting_user=None)
    assert reloaded(member).enter_sends


def test_bots_have_no_settings_to_change(bot):
    with pytest.raises(ValueError, match="bots"):
        check_update_settings_of_users([bot], {"enter_sends": True}, acting_user=None)


def test_only_ones_own_changes_count_as_already_edited(realm, admin):
    chose, operated = UserFactory(realm=realm), UserFactory(realm=realm)
    check_update_settings(chose, changes={"color_scheme": 2}, acting_user=chose)
    check_update_settings_of_users([operated], {"color_scheme": 2}, acting_user=None)
    both = [chose, operated]
    check_update_settings_of_users(both, {"color_scheme": 3}, skip_if_already_edited=True, acting_user=admin)
    assert (reloaded(chose).color_scheme, reloaded(operated).color_scheme) == (2, 3)


def test_organization_defaults_are_made_when_first_edited(realm, admin):
    assert not RealmUserDefault.objects.filter(realm=realm).exists()  # a factory's organization
    assert realm_user_default(realm).email_address_visibility == EmailVisibility.ADMINS
    assert do_set_realm_user_defaults(realm, {"emojiset": "text", "color_scheme": 1}, acting_user=admin) == ["emojiset"]
    defaults = RealmUserDefault.objects.get(realm=realm)
    assert (defaults.emojiset, defaults.email_address_visibility) == ("text", EmailVisibility.ADMINS)
    with pytest.raises(ValueError, match="not organization defaults"):
        check_update_realm_user_defaults(realm, {"enable_login_emails": False}, acting_user=admin)
    with pytest.raises(InvalidArgumentError, match="Invalid emojiset"):
        check_update_realm_user_defaults(realm, {"enter_sends": True, "emojiset": "x"}, acting_user=admin)
    assert not RealmUserDefault.objects.get(realm=realm).enter_sends
