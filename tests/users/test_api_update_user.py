"""PATCH /users/{user_id} and PATCH /users/{email}: administrators only, owner rules, no partial changes."""

import pytest

from apps.realms.models import EmailVisibility
from apps.users.models import CustomProfileField, CustomProfileFieldValue, Role, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import CustomProfileFieldFactory, UserFactory


def snapshot(user: User) -> tuple:
    user.refresh_from_db()
    values = sorted(CustomProfileFieldValue.objects.filter(user=user).values_list("field_id", "value"))
    return (user.full_name, user.role, user.delivery_email, user.is_active, values)


def test_admin_changes_name_and_role(admin, member):
    assert_success(ApiClient(admin).patch(f"/users/{member.id}", {"full_name": "  New Name ", "role": 300}))
    member.refresh_from_db()
    assert (member.full_name, member.role) == ("New Name", Role.MODERATOR)


@pytest.mark.parametrize("actor", ["moderator", "member", "guest", "bot"])
def test_non_administrators_are_refused(request, actor, admin):
    before = snapshot(admin)
    response = ApiClient(request.getfixturevalue(actor)).patch(
        f"/users/{admin.id}", {"full_name": "Hacked", "role": 600}
    )
    assert_error(response, 400, "BAD_REQUEST", "Insufficient permission")
    assert snapshot(admin) == before


def test_a_bots_owner_renames_it_but_gives_it_no_role(bot, member, moderator):
    """Zulip's can_admin_user: the owner of a bot administers it (the users QA pass: refused);
    roles stay the administrators' to give, and someone else's bot is not theirs."""
    assert_success(ApiClient(member).patch(f"/users/{bot.id}", {"full_name": "Renamed Bot"}))
    bot.refresh_from_db()
    assert bot.full_name == "Renamed Bot"
    before = snapshot(bot)
    response = ApiClient(member).patch(f"/users/{bot.id}", {"full_name": "Again", "role": Role.MODERATOR})
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    assert snapshot(bot) == before
    response = ApiClient(moderator).patch(f"/users/{bot.id}", {"full_name": "Not yours"})
    assert_error(response, 400, "BAD_REQUEST", "Insufficient permission")
    assert snapshot(bot) == before


def test_non_administrators_cannot_change_themselves_either(member):
    response = ApiClient(member).patch(f"/users/{member.id}", {"role": 200})
    assert_error(response, 400, "BAD_REQUEST", "Insufficient permission")
    member.refresh_from_db()
    assert member.role == Role.MEMBER


@pytest.mark.parametrize(
    ("old_role", "new_role"),
    [(Role.MEMBER, Role.OWNER), (Role.OWNER, Role.MEMBER), (Role.OWNER, Role.ADMINISTRATOR)],
)
def test_only_owners_grant_or_remove_the_owner_role(admin, owner, realm, old_role, new_role):
    target = UserFactory(realm=realm, role=old_role)
    response = ApiClient(admin).patch(f"/users/{target.id}", {"role": new_role})
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
    target.refresh_from_db()
    assert target.role == old_role
    assert_success(ApiClient(owner).patch(f"/users/{target.id}", {"role": new_role}))
    target.refresh_from_db()
    assert target.role == new_role


def test_the_only_owner_keeps_the_owner_role(owner):
    response = ApiClient(owner).patch(f"/users/{owner.id}", {"role": 200})
    assert_error(
        response, 400, "BAD_REQUEST", "The owner permission cannot be removed from the only organization owner."
    )
    owner.refresh_from_db()
    assert owner.role == Role.OWNER


def test_an_owner_can_step_down_when_another_owner_exists(owner, realm):
    UserFactory(realm=realm, role=Role.OWNER)
    assert_success(ApiClient(owner).patch(f"/users/{owner.id}", {"role": 200}))


def test_a_deactivated_owner_does_not_count_as_another_owner(owner, realm):
    UserFactory(realm=realm, role=Role.OWNER, is_active=False)
    assert_error(ApiClient(owner).patch(f"/users/{owner.id}", {"role": 400}), 400, "BAD_REQUEST")


def test_administrators_may_promote_guests_to_administrator(admin, guest):
    assert_success(ApiClient(admin).patch(f"/users/{guest.id}", {"role": 200}))
    guest.refresh_from_db()
    assert guest.role == Role.ADMINISTRATOR


@pytest.mark.parametrize("role", ["250", "0", "owner", "null", "200.0", '"200"'])
def test_invalid_role_values(admin, guest, role):
    response = ApiClient(admin).patch(f"/users/{guest.id}", {"role": role})
    body = assert_error(response, 400, "REQUEST_VARIABLE_INVALID")
    assert body["var_name"] == "role"
    guest.refresh_from_db()
    assert guest.role == Role.GUEST


@pytest.mark.parametrize(
    ("name", "msg"),
    [
        ("J", "Name too short!"),
        (" J ", "Name too short!"),
        ("x" * 101, "Name too long!"),
        ("Bad*Name", "Invalid characters in name!"),
        ("@mention", "Invalid characters in name!"),
        ("Tab\tName", "Invalid characters in name!"),
        ("Name|123", "Invalid format!"),
    ],
)
def test_invalid_names(admin, member, name, msg):
    assert_error(ApiClient(admin).patch(f"/users/{member.id}", {"full_name": name}), 400, "BAD_REQUEST", msg)
    member.refresh_from_db()
    assert member.full_name == "Mel Member"


def test_a_blank_or_unchanged_name_is_no_change(admin, member):
    """Zulip's rule: an account whose name is no longer allowed (one letter, from before the rule)
    can still be changed in other ways with its name sent as it is."""
    User.objects.filter(id=member.id).update(full_name="Z")
    for name in ("", "   ", "Z"):
        assert_success(ApiClient(admin).patch(f"/users/{member.id}", {"full_name": name, "role": Role.MODERATOR}))
    member.refresh_from_db()
    assert (member.full_name, member.role) == ("Z", Role.MODERATOR)


def test_null_byte_in_name(admin, member):
    response = ApiClient(admin).patch(f"/users/{member.id}", {"full_name": "a\x00b"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "full_name must not contain null bytes")


def test_a_refused_part_changes_nothing(owner, admin, member, realm):
    field = CustomProfileFieldFactory(realm=realm, field_type=CustomProfileField.FieldType.DATE)
    before = snapshot(member)
    response = ApiClient(admin).patch(
        f"/users/{member.id}",
        {"full_name": "Changed", "role": 100, "profile_data": [{"id": field.id, "value": "2020-01-01"}]},
    )
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL")
    assert snapshot(member) == before
    response = ApiClient(admin).patch(
        f"/users/{member.id}",
        {"full_name": "Changed", "role": 300, "profile_data": [{"id": field.id, "value": "not a date"}]},
    )
    assert_error(response, 400, "BAD_REQUEST", f"{field.name} is not a date")
    assert snapshot(member) == before


def test_profile_data_set_and_remove(admin, member, realm):
    text = CustomProfileFieldFactory(realm=realm, name="Team")
    users = CustomProfileFieldFactory(realm=realm, name="Mentor", field_type=CustomProfileField.FieldType.USER)
    api = ApiClient(admin)
    assert_success(
        api.patch(
            f"/users/{member.id}",
            {"profile_data": [{"id": text.id, "value": "Core"}, {"id": users.id, "value": [admin.id]}]},
        )
    )
    body = assert_success(api.get(f"/users/{member.id}", {"include_custom_profile_fields": True}))
    assert body["user"]["profile_data"] == {
        str(text.id): {"value": "Core", "rendered_value": "<p>Core</p>"},
        str(users.id): {"value": f"[{admin.id}]"},
    }
    assert_success(api.patch(f"/users/{member.id}", {"profile_data": [{"id": text.id, "value": None}]}))
    body = assert_success(api.get(f"/users/{member.id}", {"include_custom_profile_fields": True}))
    assert list(body["user"]["profile_data"]) == [str(users.id)]


def test_profile_data_with_field_of_another_organization(admin, member, other_realm):
    foreign_field = CustomProfileFieldFactory(realm=other_realm)
    response = ApiClient(admin).patch(f"/users/{member.id}", {"profile_data": [{"id": foreign_field.id, "value": "x"}]})
    assert_error(response, 400, "BAD_REQUEST", f"Field id {foreign_field.id} not found.")


@pytest.mark.parametrize(
    ("profile_data", "msg"),
    [
        ('[{"id": 1}]', "value key is missing from profile_data[0]"),
        ('[{"id": "1", "value": "x"}]', 'profile_data[0]["id"] is not an integer'),
        ('{"id": 1}', "profile_data is not a list"),
        ("[{", "profile_data is not valid JSON"),
    ],
)
def test_malformed_profile_data(admin, member, profile_data, msg):
    response = ApiClient(admin).patch(f"/users/{member.id}", {"profile_data": profile_data})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", msg)


def test_new_email_needs_an_owner_with_the_permission(owner, admin, member):
    for actor in (admin, owner):
        response = ApiClient(actor).patch(f"/users/{member.id}", {"new_email": "new@example.com"})
        assert_error(response, 400, "BAD_REQUEST", "User not authorized to change user emails")
    owner.can_change_user_emails = True
    owner.save()
    assert_success(ApiClient(owner).patch(f"/users/{member.id}", {"new_email": "new@example.com"}))
    member.refresh_from_db()
    assert member.delivery_email == "new@example.com"


@pytest.mark.parametrize(
    ("email", "msg"),
    [("not-an-email", "Invalid address."), ("ADMIN@example.com", "Email 'ADMIN@example.com' already in use")],
)
def test_new_email_must_be_valid_and_free(owner, admin, member, email, msg):
    owner.can_change_user_emails = True
    owner.save()
    assert_error(ApiClient(owner).patch(f"/users/{member.id}", {"new_email": email}), 400, "BAD_REQUEST", msg)
    member.refresh_from_db()
    assert member.delivery_email == "member@example.com"


def test_patch_by_email(admin, realm):
    visible = UserFactory(realm=realm, delivery_email="visible@example.com")
    hidden = UserFactory(realm=realm, email_address_visibility=EmailVisibility.NOBODY, delivery_email="n@example.com")
    api = ApiClient(admin)
    assert_success(api.patch("/users/visible@example.com", {"full_name": "Vis Ible"}))
    assert_error(api.patch("/users/n@example.com", {"full_name": "X"}), 400, "BAD_REQUEST", "No such user")
    assert_success(api.patch(f"/users/user{hidden.id}@parley.invalid", {"full_name": "Hid Den"}))
    visible.refresh_from_db()
    hidden.refresh_from_db()
    assert (visible.full_name, hidden.full_name) == ("Vis Ible", "Hid Den")


def test_patch_user_of_another_organization(admin, foreign_user):
    before = snapshot(foreign_user)
    response = ApiClient(admin).patch(f"/users/{foreign_user.id}", {"full_name": "Hacked"})
    assert_error(response, 400, "BAD_REQUEST", "No such user")
    assert snapshot(foreign_user) == before


def test_delete_by_email_is_not_a_route(admin, member):
    response = ApiClient(admin).delete("/users/member@example.com")
    assert_error(response, 405, "BAD_REQUEST")
