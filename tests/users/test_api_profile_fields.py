"""Custom profile fields: definitions (administrators) and users' own values."""

import json

import pytest
from django.db import connection

from apps.users.models import CustomProfileField, CustomProfileFieldValue
from tests.api import ApiClient, assert_error, assert_success
from tests.concurrency import done_or_refused, removed_while_changed
from tests.factories import CustomProfileFieldFactory, UserFactory

FieldType = CustomProfileField.FieldType
DUPLICATE_CHOICES = {"a": {"text": "A", "order": "1"}, "b": {"text": "A", "order": "2"}}
SELECT_DATA = {"vim": {"text": "Vim", "order": "1"}, "emacs": {"text": "Emacs", "order": "2"}}


def create(api, **params):
    return api.post("/realm/profile_fields", params)


def test_create_and_list(admin, member):
    api = ApiClient(admin)
    first = assert_success(create(api, name="Biography", hint="About you", field_type=2))["id"]
    second = assert_success(
        create(api, name="Editor", field_type=3, field_data=SELECT_DATA, display_in_profile_summary=True)
    )["id"]
    body = assert_success(ApiClient(member).get("/realm/profile_fields"))
    assert body["custom_fields"] == [
        {"id": first, "name": "Biography", "type": 2, "hint": "About you", "field_data": "", "order": first,
         "required": False, "editable_by_user": True},
        {"id": second, "name": "Editor", "type": 3, "hint": "", "field_data": json.dumps(SELECT_DATA), "order": second,
         "required": False, "editable_by_user": True, "display_in_profile_summary": True},
    ]  # fmt: skip


def test_default_external_account_gets_its_name(admin):
    api = ApiClient(admin)
    field_id = assert_success(create(api, field_type=7, field_data={"subtype": "github"}))["id"]
    field = CustomProfileField.objects.get(id=field_id)
    assert (field.name, field.hint, json.loads(field.field_data)) == ("GitHub username", "", {"subtype": "github"})


@pytest.mark.parametrize("actor", ["moderator", "member", "guest", "bot"])
def test_only_administrators_define_fields(request, actor, realm):
    field = CustomProfileFieldFactory(realm=realm)
    api = ApiClient(request.getfixturevalue(actor))
    for response in (
        create(api, name="Nope", field_type=1),
        api.patch(f"/realm/profile_fields/{field.id}", {"name": "Renamed"}),
        api.delete(f"/realm/profile_fields/{field.id}"),
        api.patch("/realm/profile_fields", {"order": [field.id]}),
    ):
        assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    assert list(CustomProfileField.objects.filter(realm=realm).values_list("name", flat=True)) == [field.name]


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({"name": "  ", "field_type": 1}, "Label cannot be blank."),
        ({"name": "x" * 41, "field_type": 1}, "name is too long (limit: 40 characters)"),
        ({"name": "ok", "hint": "h" * 81, "field_type": 1}, "hint is too long (limit: 80 characters)"),
        ({"name": "Taken", "field_type": 1}, "A field with that label already exists."),
        ({"name": "ok", "field_type": 3, "field_data": {}}, "Field must have at least one choice."),
        ({"name": "ok", "field_type": 3, "field_data": {"a": {"text": "A"}}}, "order key is missing from field_data"),
        ({"name": "ok", "field_type": 3, "field_data": DUPLICATE_CHOICES},
         "Field must not have duplicate choices."),
        ({"name": "ok", "field_type": 3, "field_data": {" ": {"text": "A", "order": "1"}}}, "'value' cannot be blank."),
        ({"name": "ok", "field_type": 7, "field_data": {}}, "subtype key is missing from field_data"),
        ({"name": "ok", "field_type": 7, "field_data": {"subtype": "myspace"}}, "Invalid external account type"),
        ({"name": "ok", "field_type": 7, "field_data": {"subtype": "custom"}},
         "Custom external account must define URL pattern"),
        ({"name": "ok", "field_type": 7, "field_data": {"subtype": "custom", "url_pattern": "https://x.org/"}},
         "URL pattern must contain '%(username)s'."),
        ({"name": "ok", "field_type": 2, "display_in_profile_summary": True},
         "Field type not supported for display in profile summary."),
    ],
)  # fmt: skip
def test_invalid_definitions(admin, realm, params, msg):
    CustomProfileFieldFactory(realm=realm, name="Taken")
    assert_error(create(ApiClient(admin), **params), 400, "BAD_REQUEST", msg)
    assert CustomProfileField.objects.filter(realm=realm).count() == 1


def test_invalid_field_type(admin):
    response = create(ApiClient(admin), name="x", field_type=9)
    body = assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "Invalid field_type")
    assert body["var_name"] == "field_type"


def test_field_type_is_required(admin):
    assert_error(create(ApiClient(admin), name="x"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'field_type' argument")


def test_at_most_two_fields_in_the_profile_summary(admin, realm):
    CustomProfileFieldFactory.create_batch(2, realm=realm, display_in_profile_summary=True)
    response = create(ApiClient(admin), name="Third", field_type=1, display_in_profile_summary=True)
    assert_error(response, 400, "BAD_REQUEST", "Only 2 custom profile fields can be displayed in the profile summary.")


def test_same_label_in_another_organization_is_fine(admin, other_realm):
    CustomProfileFieldFactory(realm=other_realm, name="Team")
    assert_success(create(ApiClient(admin), name="Team", field_type=1))


def test_update(admin, realm):
    field = CustomProfileFieldFactory(
        realm=realm, name="Team", field_type=FieldType.SELECT, field_data=json.dumps(SELECT_DATA)
    )
    user = UserFactory(realm=realm)
    CustomProfileFieldValue.objects.create(user=user, field=field, value="emacs")
    new_data = {"vim": SELECT_DATA["vim"], "nano": {"text": "Nano", "order": "3"}}
    assert_success(
        ApiClient(admin).patch(
            f"/realm/profile_fields/{field.id}", {"name": "Editor", "field_data": new_data, "required": True}
        )
    )
    field.refresh_from_db()
    assert (field.name, json.loads(field.field_data), field.required) == ("Editor", new_data, True)
    # The removed option's values are gone.
    assert not CustomProfileFieldValue.objects.filter(field=field).exists()


def test_default_external_account_cannot_be_renamed(admin, realm):
    field_id = assert_success(create(ApiClient(admin), field_type=7, field_data={"subtype": "twitter"}))["id"]
    response = ApiClient(admin).patch(f"/realm/profile_fields/{field_id}", {"name": "X"})
    assert_error(response, 400, "BAD_REQUEST", "Default custom field cannot be updated.")


def test_fields_of_other_organizations_do_not_exist(admin, other_realm):
    foreign = CustomProfileFieldFactory(realm=other_realm)
    api = ApiClient(admin)
    msg = f"Field id {foreign.id} not found."
    assert_error(api.patch(f"/realm/profile_fields/{foreign.id}", {"name": "X"}), 400, "BAD_REQUEST", msg)
    assert_error(api.delete(f"/realm/profile_fields/{foreign.id}"), 400, "BAD_REQUEST", msg)
    assert CustomProfileField.objects.filter(id=foreign.id, name=foreign.name).exists()


def test_delete_removes_values(admin, member, realm):
    field = CustomProfileFieldFactory(realm=realm)
    CustomProfileFieldValue.objects.create(user=member, field=field, value="x")
    assert_success(ApiClient(admin).delete(f"/realm/profile_fields/{field.id}"))
    assert not CustomProfileFieldValue.objects.exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_changed_and_removed_at_the_same_moment(admin):
    # A change reading the field as it was removed wrote it back (a full save inserts); a second
    # removal removed it again, with its audit entry and event.
    for n in range(3):
        field_id = assert_success(create(ApiClient(admin), name=f"Field {n}", field_type=1))["id"]
        names = [{"name": f"Renamed {k}"} for k in range(3)]
        answers = removed_while_changed(lambda: ApiClient(admin), f"/realm/profile_fields/{field_id}", names)
        assert sorted(answer.status_code for answer in answers[:2]) == [200, 400]
        done_or_refused(answers, 400, "BAD_REQUEST", f"Field id {field_id} not found.")
    assert not CustomProfileField.objects.exists()


def test_reorder(admin, realm):
    a, b, c = CustomProfileFieldFactory.create_batch(3, realm=realm)
    assert_success(ApiClient(admin).patch("/realm/profile_fields", {"order": [c.id, a.id, b.id]}))
    body = assert_success(ApiClient(admin).get("/realm/profile_fields"))
    assert [f["id"] for f in body["custom_fields"]] == [c.id, a.id, b.id]
    assert [f["order"] for f in body["custom_fields"]] == [0, 1, 2]
    assert_error(
        ApiClient(admin).patch("/realm/profile_fields", {"order": [c.id, a.id]}),
        400,
        "BAD_REQUEST",
        "Invalid order mapping.",
    )


@pytest.mark.parametrize("wrong", ["another organization's field", "no field", "a field twice"])
def test_reorder_must_list_exactly_the_organizations_fields(
    django_capture_on_commit_callbacks, admin, realm, other_realm, wrong
):
    a, b = CustomProfileFieldFactory.create_batch(2, realm=realm)
    foreign = CustomProfileFieldFactory(realm=other_realm)
    extra = {"another organization's field": foreign.id, "no field": foreign.id + 1000, "a field twice": a.id}[wrong]
    before = list(CustomProfileField.objects.order_by("id").values_list("id", "order"))
    with django_capture_on_commit_callbacks() as sent:  # events leave on commit
        for order in ([b.id, a.id, extra], [extra, b.id, a.id]):
            response = ApiClient(admin).patch("/realm/profile_fields", {"order": order})
            assert_error(response, 400, "BAD_REQUEST", "Invalid order mapping.")
    assert list(CustomProfileField.objects.order_by("id").values_list("id", "order")) == before
    assert sent == []


# --- own values -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field_type", "field_data", "value", "stored"),
    [
        (FieldType.SHORT_TEXT, "", "Berlin", "Berlin"),
        (FieldType.LONG_TEXT, "", "**bold**", "**bold**"),
        (FieldType.SELECT, json.dumps(SELECT_DATA), "vim", "vim"),
        (FieldType.DATE, "", "1990-04-01", "1990-04-01"),
        (FieldType.URL, "", "https://example.com/me", "https://example.com/me"),
        (FieldType.PRONOUNS, "", "they/them", "they/them"),
        (FieldType.EXTERNAL_ACCOUNT, json.dumps({"subtype": "github"}), "octocat", "octocat"),
    ],
)
def test_set_own_values(member, realm, field_type, field_data, value, stored):
    field = CustomProfileFieldFactory(realm=realm, field_type=field_type, field_data=field_data)
    assert_success(ApiClient(member).patch("/users/me/profile_data", {"data": [{"id": field.id, "value": value}]}))
    assert CustomProfileFieldValue.objects.get(user=member, field=field).value == stored


def test_rendered_value_is_safe_html(member, realm):
    field = CustomProfileFieldFactory(realm=realm, field_type=FieldType.LONG_TEXT)
    value = "<script>alert(1)</script> [x](javascript:alert(1)) **ok**"
    assert_success(ApiClient(member).patch("/users/me/profile_data", {"data": [{"id": field.id, "value": value}]}))
    rendered = CustomProfileFieldValue.objects.get(user=member, field=field).rendered_value
    assert "<script>" not in rendered
    assert 'href="javascript' not in rendered
    assert "<strong>ok</strong>" in rendered


@pytest.mark.parametrize(
    ("field_type", "field_data", "value", "msg"),
    [
        (FieldType.SHORT_TEXT, "", "x" * 51, "{name} is too long (limit: 50 characters)"),
        (FieldType.LONG_TEXT, "", "x" * 501, "{name} is too long (limit: 500 characters)"),
        (FieldType.DATE, "", "01/04/1990", "{name} is not a date"),
        (FieldType.DATE, "", "1990-4-1", "{name} is not a date"),
        (FieldType.URL, "", "not a url", "{name} is not a URL"),
        (FieldType.SELECT, json.dumps(SELECT_DATA), "nano", "'nano' is not a valid choice for '{name}'."),
        (FieldType.USER, "", "5", "User IDs is not a list"),
    ],
)
def test_invalid_own_values(member, realm, field_type, field_data, value, msg):
    field = CustomProfileFieldFactory(realm=realm, field_type=field_type, field_data=field_data)
    response = ApiClient(member).patch("/users/me/profile_data", {"data": [{"id": field.id, "value": value}]})
    assert_error(response, 400, "BAD_REQUEST", msg.format(name=field.name))
    assert not CustomProfileFieldValue.objects.exists()


def test_value_of_another_json_type(member, realm):
    field = CustomProfileFieldFactory(realm=realm)
    response = ApiClient(member).patch("/users/me/profile_data", {"data": [{"id": field.id, "value": 5}]})
    body = assert_error(response, 400, "REQUEST_VARIABLE_INVALID")
    assert body["var_name"] == "data"
    assert not CustomProfileFieldValue.objects.exists()


def test_user_list_values(member, admin, bot, realm, foreign_user):
    field = CustomProfileFieldFactory(realm=realm, field_type=FieldType.USER, name="Reports to")
    deactivated = UserFactory(realm=realm, is_active=False)
    api = ApiClient(member)

    def set_value(value):
        return api.patch("/users/me/profile_data", {"data": [{"id": field.id, "value": value}]})

    assert_error(
        set_value([foreign_user.id, 999999]), 400, "BAD_REQUEST", f"Invalid user IDs: {foreign_user.id}, 999999"
    )
    assert_error(set_value([deactivated.id]), 400, "BAD_REQUEST", f"User with ID {deactivated.id} is deactivated")
    assert_error(set_value([bot.id]), 400, "BAD_REQUEST", f"User with ID {bot.id} is a bot")
    assert_success(set_value([admin.id]))
    assert CustomProfileFieldValue.objects.get(user=member, field=field).value == f"[{admin.id}]"


def test_all_or_nothing(member, realm):
    good = CustomProfileFieldFactory(realm=realm)
    date = CustomProfileFieldFactory(realm=realm, field_type=FieldType.DATE)
    response = ApiClient(member).patch(
        "/users/me/profile_data", {"data": [{"id": good.id, "value": "fine"}, {"id": date.id, "value": "bad"}]}
    )
    assert_error(response, 400, "BAD_REQUEST")
    assert not CustomProfileFieldValue.objects.exists()


def test_fields_not_editable_by_users(member, admin, realm):
    field = CustomProfileFieldFactory(realm=realm, editable_by_user=False)
    response = ApiClient(member).patch("/users/me/profile_data", {"data": [{"id": field.id, "value": "x"}]})
    assert_error(
        response, 400, "BAD_REQUEST", "You are not allowed to change this field. Contact an administrator to update it."
    )
    response = ApiClient(member).delete("/users/me/profile_data", {"data": [field.id]})
    assert_error(
        response, 400, "BAD_REQUEST", "You are not allowed to change this field. Contact an administrator to update it."
    )
    assert_success(ApiClient(admin).patch(f"/users/{member.id}", {"profile_data": [{"id": field.id, "value": "x"}]}))
    assert_success(ApiClient(admin).patch("/users/me/profile_data", {"data": [{"id": field.id, "value": "mine"}]}))


def test_delete_own_values(member, realm):
    field, other = CustomProfileFieldFactory.create_batch(2, realm=realm)
    CustomProfileFieldValue.objects.create(user=member, field=field, value="x")
    api = ApiClient(member)
    assert_success(api.delete("/users/me/profile_data", {"data": [field.id, other.id]}))
    assert not CustomProfileFieldValue.objects.exists()
    assert_error(
        api.delete("/users/me/profile_data", {"data": [424242]}), 400, "BAD_REQUEST", "Field id 424242 not found."
    )


def test_bots_have_no_profile_data(bot, realm):
    field = CustomProfileFieldFactory(realm=realm)
    api = ApiClient(bot)
    for response in (
        api.patch("/users/me/profile_data", {"data": [{"id": field.id, "value": "x"}]}),
        api.delete("/users/me/profile_data", {"data": [field.id]}),
    ):
        assert_error(response, 400, "BAD_REQUEST", "This endpoint does not accept bot requests.")


def test_data_is_required(member):
    assert_error(
        ApiClient(member).patch("/users/me/profile_data"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'data' argument"
    )
