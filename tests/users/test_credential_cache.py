"""Ordinary requests trust credentials that authenticated lately (apps.users.accounts, over the
long-poll path's credential cache) without reading the user again, until a change that could
change the answer: every such change is seen by the very next request."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.events.credentials import credential_cache
from apps.realms.actions import do_set_realm_deactivated
from apps.users.accounts import user_for_credentials
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.roles import do_change_user_role
from apps.users.actions.user_settings import (
    do_change_full_name,
    do_change_user_delivery_email,
    do_regenerate_api_key,
)
from apps.users.models import CustomProfileField, Role, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import CustomProfileFieldFactory


def user_lookups(queries: CaptureQueriesContext) -> list[str]:
    """The queries that look a user up by their credentials."""
    return [q["sql"] for q in queries.captured_queries if '"users_user"."api_key"' in q["sql"]]


def me(api: ApiClient) -> dict:
    return assert_success(api.get("/users/me"))


def test_a_second_request_does_not_read_the_user_again(member):
    api = ApiClient(member)
    with CaptureQueriesContext(connection) as first:
        me(api)
    with CaptureQueriesContext(connection) as second:
        assert me(api)["user_id"] == member.id
    assert user_lookups(first)
    assert not user_lookups(second)
    assert len(second) < len(first)


def test_a_rotated_key_stops_working_at_once(member):
    old = ApiClient(member)
    me(old)
    new_key = do_regenerate_api_key(member, acting_user=member)
    assert_error(old.get("/users/me"), 401, "UNAUTHORIZED", "Invalid API key")
    assert me(ApiClient(member, api_key=new_key))["user_id"] == member.id


def test_a_deactivated_user_is_refused_at_once(member):
    api = ApiClient(member)
    me(api)
    do_deactivate_user(member, acting_user=None)
    assert_error(api.get("/users/me"), 401, "USER_DEACTIVATED", "Account is deactivated")


def test_a_deactivated_organization_is_refused_at_once(realm, member):
    api = ApiClient(member)
    me(api)
    do_set_realm_deactivated(realm, True, acting_user=None)
    response = api.get("/users/me")
    assert response.status_code == 401
    assert response.json()["msg"] == "This organization has been deactivated"


def test_a_role_change_counts_at_once(admin, member):
    admin_api, member_api = ApiClient(admin), ApiClient(member)
    me(admin_api), me(member_api)
    do_change_user_role(admin, Role.MEMBER, acting_user=None)
    do_change_user_role(member, Role.ADMINISTRATOR, acting_user=None)
    assert me(admin_api)["role"] == Role.MEMBER
    assert me(member_api)["role"] == Role.ADMINISTRATOR
    # What the role allows follows too: only administrators deactivate others.
    assert_error(admin_api.delete(f"/users/{member.id}"), 400, "BAD_REQUEST", "Insufficient permission")


def test_an_email_change_counts_at_once(member):
    api = ApiClient(member)
    me(api)
    do_change_user_delivery_email(member, "renamed@example.com", acting_user=None)
    assert_error(api.get("/users/me"), 401, "UNAUTHORIZED", "Invalid API key")
    assert me(ApiClient(member, email="renamed@example.com"))["delivery_email"] == "renamed@example.com"


def test_other_changes_to_the_user_count_at_once(member):
    api = ApiClient(member)
    me(api)
    do_change_full_name(member, "New Name", acting_user=member)
    assert me(api)["full_name"] == "New Name"
    # Written with save() (the admin, a command): forgotten too.
    User.objects.get(id=member.id).save()
    User.objects.filter(id=member.id).update(full_name="Saved Name")
    User.objects.get(id=member.id).save()
    assert me(api)["full_name"] == "Saved Name"


def test_the_same_header_on_another_organization_is_not_the_cached_user(member, other_realm):
    header = ApiClient(member).headers["HTTP_AUTHORIZATION"]
    me(ApiClient(authorization=header))
    response = ApiClient(authorization=header, host="zephyr.testserver").get("/users/me")
    assert_error(response, 401, "UNAUTHORIZED", "Account is not associated with this subdomain")


def test_failed_authentications_are_not_cached(member):
    bad = ApiClient(member, api_key="x" * 32)
    assert_error(bad.get("/users/me"), 401, "UNAUTHORIZED", "Invalid API key")
    with CaptureQueriesContext(connection) as again:
        assert_error(bad.get("/users/me"), 401, "UNAUTHORIZED", "Invalid API key")
    assert user_lookups(again)


@pytest.mark.django_db
def test_each_request_gets_its_own_copy(realm, member):
    header = "Basic whatever"
    first = user_for_credentials("testserver", realm, header, lambda: User.objects.get(id=member.id))
    first.full_name = "Changed by a view"
    second = user_for_credentials("testserver", realm, header, lambda: pytest.fail("read again"))
    assert second.full_name == member.full_name
    assert second is not first
    assert second.realm is realm
    credential_cache.forget(user_ids=[member.id])
    third = user_for_credentials("testserver", realm, header, lambda: User.objects.get(id=member.id))
    assert third.full_name == member.full_name


def test_a_copys_cached_relations_and_state_are_its_own(realm, member, admin):
    header = "Basic whatever"
    load = lambda: User.objects.get(id=member.id)  # noqa: E731
    user_for_credentials("testserver", realm, header, load)
    first = user_for_credentials("testserver", realm, header, load)
    first.bot_owner = admin  # a relation cached on the instance
    first._state.adding = True
    second = user_for_credentials("testserver", realm, header, load)
    assert "bot_owner" not in second._state.fields_cache
    assert second.bot_owner_id is None
    assert (second._state.adding, second._state.db) == (False, "default")


def test_own_profile_data_is_kept_with_the_credentials_until_it_changes(admin, member, realm):
    """GET /users/me keeps the user's profile data with their cached credentials: read once, then
    every way it can change (their own edit, an administrator's, a list field losing an option, the
    field's deletion) is seen by the very next request."""
    text = CustomProfileFieldFactory(realm=realm, field_type=CustomProfileField.FieldType.SHORT_TEXT)
    choice = CustomProfileFieldFactory(
        realm=realm,
        field_type=CustomProfileField.FieldType.SELECT,
        field_data=json.dumps({"a": {"text": "A", "order": "1"}, "b": {"text": "B", "order": "2"}}),
    )
    api, admin_api = ApiClient(member), ApiClient(admin)

    def values() -> dict[str, str]:
        return {field_id: entry["value"] for field_id, entry in me(api)["profile_data"].items()}

    assert_success(api.patch("/users/me/profile_data", {"data": [{"id": text.id, "value": "mine"}]}))
    assert values() == {str(text.id): "mine"}
    with CaptureQueriesContext(connection) as again:
        assert values() == {str(text.id): "mine"}
    assert not [q for q in again.captured_queries if "customprofilefieldvalue" in q["sql"]]

    assert_success(admin_api.patch(f"/users/{member.id}", {"profile_data": [{"id": choice.id, "value": "b"}]}))
    assert values() == {str(text.id): "mine", str(choice.id): "b"}
    fewer_options = {"name": choice.name, "field_data": json.dumps({"a": {"text": "A", "order": "1"}})}
    assert_success(admin_api.patch(f"/realm/profile_fields/{choice.id}", fewer_options))
    assert values() == {str(text.id): "mine"}
    assert_success(admin_api.delete(f"/realm/profile_fields/{text.id}"))
    assert values() == {}
