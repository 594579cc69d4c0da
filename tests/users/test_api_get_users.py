"""GET /users/me, GET /users/{id}, GET /users/{email}, GET /users."""

import hashlib

import pytest
from django.contrib.staticfiles import finders

from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.realms.models import EmailVisibility
from apps.users.actions.profile_data import check_update_user_custom_profile_data
from apps.users.models import CustomProfileField
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import CustomProfileFieldFactory, UserFactory

USER_KEYS = {
    "user_id", "email", "delivery_email", "full_name", "date_joined", "is_active", "is_owner", "is_admin",
    "is_guest", "is_bot", "bot_type", "bot_owner_id", "role", "timezone", "avatar_url", "avatar_version",
    "is_imported_stub",
}  # fmt: skip
OWN_USER_KEYS = {
    "user_id", "email", "delivery_email", "full_name", "date_joined", "is_active", "is_owner", "is_admin",
    "is_guest", "is_bot", "role", "timezone", "avatar_url", "avatar_version", "is_imported_stub", "max_message_id",
    "profile_data",
}  # fmt: skip


def gravatar(email: str) -> str:
    digest = hashlib.md5(email.lower().encode()).hexdigest()  # noqa: S324
    return f"https://secure.gravatar.com/avatar/{digest}?d=identicon&version=1"


def test_own_user(member):
    body = assert_success(ApiClient(member).get("/users/me"))
    assert set(body) - {"result", "msg"} == OWN_USER_KEYS
    assert body["user_id"] == member.id
    assert body["email"] == body["delivery_email"] == "member@example.com"
    assert body["full_name"] == "Mel Member"
    assert (body["role"], body["is_admin"], body["is_owner"], body["is_guest"]) == (400, False, False, False)
    assert body["avatar_url"] == gravatar("member@example.com")
    assert body["max_message_id"] == -1
    assert body["profile_data"] == {}
    assert body["date_joined"] == member.date_joined.isoformat(timespec="minutes")


@pytest.mark.parametrize(
    ("fixture", "role", "flags"),
    [
        ("owner", 100, (True, True, False)),
        ("admin", 200, (True, False, False)),
        ("moderator", 300, (False, False, False)),
        ("member", 400, (False, False, False)),
        ("guest", 600, (False, False, True)),
    ],
)
def test_role_flags_are_derived(request, fixture, role, flags):
    body = assert_success(ApiClient(request.getfixturevalue(fixture)).get("/users/me"))
    assert (body["role"], (body["is_admin"], body["is_owner"], body["is_guest"])) == (role, flags)


def test_own_user_has_hidden_delivery_email_and_profile_data(realm):
    field = CustomProfileFieldFactory(realm=realm, field_type=CustomProfileField.FieldType.LONG_TEXT)
    user = UserFactory(realm=realm, email_address_visibility=EmailVisibility.NOBODY)
    check_update_user_custom_profile_data(user, [(field.id, "*hi*")], acting_user=user)
    body = assert_success(ApiClient(user).get("/users/me"))
    assert body["delivery_email"] == user.delivery_email
    assert body["email"] == f"user{user.id}@parley.invalid"
    assert body["profile_data"] == {str(field.id): {"value": "*hi*", "rendered_value": "<p><em>hi</em></p>"}}


def test_own_user_runs_a_fixed_number_of_queries(member, realm, django_assert_num_queries):
    for _ in range(3):
        field = CustomProfileFieldFactory(realm=realm)
        check_update_user_custom_profile_data(member, [(field.id, "x")], acting_user=member)
    api = ApiClient(member)
    with django_assert_num_queries(4):  # organization, user, profile values, newest message
        assert_success(api.get("/users/me"))


def test_user_by_id(member, admin):
    body = assert_success(ApiClient(member).get(f"/users/{admin.id}"))
    assert set(body["user"]) == USER_KEYS
    assert body["user"]["user_id"] == admin.id
    assert body["user"]["role"] == 200
    assert body["user"]["bot_type"] is None


def test_user_by_id_query_count(member, admin, realm, django_assert_num_queries):
    CustomProfileFieldFactory(realm=realm)
    api = ApiClient(member)
    with django_assert_num_queries(3):  # organization, requester, target
        assert_success(api.get(f"/users/{admin.id}"))
    with django_assert_num_queries(2):  # target, profile values (the organization and requester are cached)
        assert_success(api.get(f"/users/{admin.id}", {"include_custom_profile_fields": True}))


def test_user_of_another_organization_does_not_exist(member, foreign_user):
    missing = assert_error(ApiClient(member).get("/users/999999"), 400, "BAD_REQUEST", "No such user")
    foreign = assert_error(ApiClient(member).get(f"/users/{foreign_user.id}"), 400, "BAD_REQUEST", "No such user")
    assert missing == foreign


def test_non_numeric_user_id_is_looked_up_as_email(member):
    assert_error(ApiClient(member).get("/users/abc"), 400, "BAD_REQUEST", "No such user")


def test_deactivated_users_and_bots_can_be_read(member, bot, admin):
    admin.is_active = False
    admin.save()
    assert assert_success(ApiClient(member).get(f"/users/{admin.id}"))["user"]["is_active"] is False
    body = assert_success(ApiClient(member).get(f"/users/{bot.id}"))["user"]
    assert (body["is_bot"], body["bot_type"], body["bot_owner_id"]) == (True, 1, member.id)


@pytest.mark.parametrize(
    ("visibility", "visible_to"),
    [
        (EmailVisibility.EVERYONE, {"owner", "admin", "moderator", "member", "guest"}),
        (EmailVisibility.MEMBERS, {"owner", "admin", "moderator", "member"}),
        (EmailVisibility.MODERATORS, {"owner", "admin", "moderator"}),
        (EmailVisibility.ADMINS, {"owner", "admin"}),
        (EmailVisibility.NOBODY, set()),
    ],
)
def test_email_visibility_matrix(request, realm, visibility, visible_to):
    target = UserFactory(realm=realm, email_address_visibility=visibility, delivery_email="target@example.com")
    expected_email = (
        "target@example.com" if visibility == EmailVisibility.EVERYONE else f"user{target.id}@parley.invalid"
    )
    for role in ("owner", "admin", "moderator", "member", "guest"):
        viewer = request.getfixturevalue(role)
        user = assert_success(ApiClient(viewer).get(f"/users/{target.id}"))["user"]
        assert user["email"] == expected_email, role
        assert user["delivery_email"] == ("target@example.com" if role in visible_to else None), role


def test_bot_emails_are_always_visible(guest, bot):
    user = assert_success(ApiClient(guest).get(f"/users/{bot.id}"))["user"]
    assert user["email"] == user["delivery_email"] == bot.delivery_email


def test_client_gravatar(member, admin, bot, realm):
    hidden = UserFactory(realm=realm, email_address_visibility=EmailVisibility.ADMINS)
    api = ApiClient(member)
    assert assert_success(api.get(f"/users/{admin.id}"))["user"]["avatar_url"] is None
    # A bot's too, as Zulip's (the spec QA pass: a bot's was always filled in).
    assert assert_success(api.get(f"/users/{bot.id}"))["user"]["avatar_url"] is None
    listed = {user["user_id"]: user for user in assert_success(api.get("/users"))["members"]}
    assert listed[bot.id]["avatar_url"] is listed[admin.id]["avatar_url"] is None
    body = assert_success(api.get(f"/users/{admin.id}", {"client_gravatar": False}))
    assert body["user"]["avatar_url"] == gravatar(admin.delivery_email)
    # The client cannot compute a Gravatar for an address it may not see.
    assert assert_success(api.get(f"/users/{hidden.id}"))["user"]["avatar_url"] == gravatar(hidden.delivery_email)


def test_profile_data_only_when_asked_and_only_for_people(member, admin, bot, realm):
    field = CustomProfileFieldFactory(realm=realm)
    check_update_user_custom_profile_data(admin, [(field.id, "Berlin")], acting_user=admin)
    api = ApiClient(member)
    assert "profile_data" not in assert_success(api.get(f"/users/{admin.id}"))["user"]
    body = assert_success(api.get(f"/users/{admin.id}", {"include_custom_profile_fields": True}))
    assert body["user"]["profile_data"] == {str(field.id): {"value": "Berlin", "rendered_value": "<p>Berlin</p>"}}
    body = assert_success(api.get(f"/users/{bot.id}", {"include_custom_profile_fields": True}))
    assert "profile_data" not in body["user"]


def test_bad_boolean_parameter(member):
    response = ApiClient(member).get(f"/users/{member.id}", {"client_gravatar": "maybe"})
    body = assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "client_gravatar is not valid JSON")
    assert body["var_name"] == "client_gravatar"


def test_user_by_email(member, realm):
    hidden = UserFactory(realm=realm, email_address_visibility=EmailVisibility.ADMINS, delivery_email="h@example.com")
    api = ApiClient(member)
    assert assert_success(api.get("/users/MEMBER@example.com"))["user"]["user_id"] == member.id
    assert assert_success(api.get(f"/users/user{hidden.id}@parley.invalid"))["user"]["user_id"] == hidden.id
    # A member may not see h@example.com, so it cannot be used to find the user either.
    assert_error(api.get("/users/h@example.com"), 400, "BAD_REQUEST", "No such user")


def test_user_by_email_of_another_organization_does_not_exist(member, other_realm):
    UserFactory(realm=other_realm, delivery_email="only-there@example.com")
    assert_error(ApiClient(member).get("/users/only-there@example.com"), 400, "BAD_REQUEST", "No such user")


def test_members_list(member, admin, bot, foreign_user):
    admin.is_active = False
    admin.save()
    body = assert_success(ApiClient(member).get("/users"))
    ids = [user["user_id"] for user in body["members"]]
    assert set(ids) == {member.id, admin.id, bot.id}
    assert foreign_user.id not in ids
    assert all(set(user) == USER_KEYS for user in body["members"])


def test_members_list_query_count_does_not_grow(member, realm, django_assert_num_queries):
    def grow(n: int) -> None:
        for _ in range(n):
            user = UserFactory(realm=realm)
            field = CustomProfileFieldFactory(realm=realm)
            check_update_user_custom_profile_data(user, [(field.id, "v")], acting_user=user)

    api = ApiClient(member)
    grow(2)
    with django_assert_num_queries(4):  # organization, requester, users, profile values
        small = assert_success(api.get("/users", {"include_custom_profile_fields": True}))
    grow(10)
    with django_assert_num_queries(2):  # users, profile values (organization and requester from caches)
        large = assert_success(api.get("/users", {"include_custom_profile_fields": True}))
    assert len(large["members"]) == len(small["members"]) + 10
    assert sum(len(u["profile_data"]) for u in large["members"]) == 12


def test_the_servers_own_bots_are_listed_apart_as_system_bots(realm, member, bot):
    """As Zulip's, whose system bots are in no organization (the invitations QA pass: they were
    listed as members): not in GET /users nor realm_users, but in /register's cross_realm_bots,
    marked is_system_bot; GET /users/{id} still finds them (clients look senders up)."""
    notification_bot = do_create_notification_bot(realm)
    users = {user["user_id"]: user for user in assert_success(ApiClient(member).get("/users"))["members"]}
    assert notification_bot.id not in users
    assert "is_system_bot" not in users[bot.id]
    assert "is_system_bot" not in users[member.id]
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": '["realm_user"]'}))
    [listed] = state["cross_realm_bots"]
    assert (listed["user_id"], listed["is_system_bot"], listed["is_bot"]) == (notification_bot.id, True, True)
    everyone = [user["user_id"] for user in state["realm_users"] + state["realm_non_active_users"]]
    assert notification_bot.id not in everyone
    assert bot.id in everyone
    found = assert_success(ApiClient(member).get(f"/users/{notification_bot.id}"))["user"]
    assert found["is_system_bot"] is True


def test_the_list_of_some_users(realm, member, admin, bot, foreign_user):
    """Zulip's user_ids (the users QA pass: ignored, everyone was listed); ids of no user of the
    organization give nothing, another organization's included."""
    field = CustomProfileFieldFactory(realm=realm, name="Phone", field_type=CustomProfileField.FieldType.SHORT_TEXT)
    check_update_user_custom_profile_data(admin, [(field.id, "123")], acting_user=admin)
    params = {"user_ids": f"[{admin.id}, {bot.id}, {foreign_user.id}, 999999]", "include_custom_profile_fields": "true"}
    members = assert_success(ApiClient(member).get("/users", params))["members"]
    assert [user["user_id"] for user in members] == sorted([admin.id, bot.id])
    assert members[0]["profile_data"][str(field.id)]["value"] == "123"
    many = {"user_ids": str(list(range(1, 1002)))}
    assert_error(
        ApiClient(member).get("/users", many),
        400,
        "REQUEST_VARIABLE_INVALID",
        "user_ids has too many items (limit: 1000)",
    )


@pytest.mark.parametrize(
    ("default_uri", "picture"),
    [(None, "/static/realms/default-picture.png"), ("https://cdn.example.com/p.png", "https://cdn.example.com/p.png")],
)
def test_without_gravatar_everyone_without_a_picture_gets_the_default_one(
    settings, member, admin, realm, default_uri, picture
):
    """ENABLE_GRAVATAR off (a server without the internet: every client showed broken pictures), as
    Zulip's: the default picture, whatever `client_gravatar` asks; the organization's icon too."""
    settings.ENABLE_GRAVATAR, settings.DEFAULT_AVATAR_URI = False, default_uri
    api = ApiClient(member)
    assert assert_success(api.get("/users/me"))["avatar_url"] == f"{picture}?version=1"
    assert assert_success(api.get(f"/users/{admin.id}"))["user"]["avatar_url"] == f"{picture}?version=1"
    assert {u["avatar_url"] for u in assert_success(api.get("/users"))["members"]} == {f"{picture}?version=1"}
    state = assert_success(
        api.post("/register", {"client_gravatar": "true", "fetch_event_types": '["realm_user", "realm"]'})
    )
    assert {u["avatar_url"] for u in state["realm_users"]} == {f"{picture}?version=1"}
    assert state["realm_icon_url"] == picture
    if default_uri is None:
        assert finders.find("realms/default-picture.png") is not None
