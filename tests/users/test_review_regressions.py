"""Edge cases found in review: wrong-target lookups, overflowing ids and oversized input."""

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.core import ratelimit
from apps.users.models import CustomProfileField, Role
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory, CustomProfileFieldFactory, UserFactory


def test_real_email_that_looks_like_a_hidden_one_finds_its_owner(admin, realm):
    decoy = UserFactory(realm=realm, email_address_visibility=3)
    lookalike = UserFactory(realm=realm, delivery_email=f"user{decoy.id}@parley.invalid")
    body = assert_success(ApiClient(admin).get(f"/users/user{decoy.id}@parley.invalid"))
    assert body["user"]["user_id"] == lookalike.id


def test_huge_path_ids_never_reach_the_database(admin):
    # Too long for an id: names nothing, as in Zulip, without an integer overflow.
    assert_error(ApiClient(admin).get("/users/99999999999999999999999"), 400, "BAD_REQUEST", "No such user")
    assert_error(ApiClient(admin).post("/users/99999999999999999999999/reactivate"), 400, "BAD_REQUEST", "No such user")
    assert_error(
        ApiClient(admin).delete("/realm/profile_fields/99999999999999999999999"),
        400,
        "BAD_REQUEST",
        "Field id 99999999999999999999999 not found.",
    )


def test_huge_fake_email_id_is_no_such_user(admin):
    assert_error(
        ApiClient(admin).get("/users/user99999999999999999999999@parley.invalid"), 400, "BAD_REQUEST", "No such user"
    )


def test_huge_ids_in_json_are_refused(member, realm):
    field = CustomProfileFieldFactory(realm=realm, field_type=CustomProfileField.FieldType.USER)
    api = ApiClient(member)
    response = api.patch("/users/me/profile_data", {"data": [{"id": field.id, "value": [10**30]}]})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID")
    response = api.patch("/users/me/profile_data", {"data": [{"id": 10**30, "value": "x"}]})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", 'data[0]["id"] is too large')


def test_lists_have_a_size_limit(member, realm):
    field = CustomProfileFieldFactory(realm=realm, field_type=CustomProfileField.FieldType.USER)
    response = ApiClient(member).patch(
        "/users/me/profile_data", {"data": [{"id": field.id, "value": list(range(1, 1002))}]}
    )
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID")
    response = ApiClient(member).delete("/users/me/profile_data", {"data": list(range(1, 1002))})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "data has too many items (limit: 1000)")


def test_too_many_fields_is_400(member):
    params = {f"f{i}": "x" for i in range(1200)}
    too_many = "Too many parameters (the limit is 1,000)"
    assert_error(ApiClient(member).patch("/users/me/profile_data", params), 400, "BAD_REQUEST", too_many)
    assert_error(ApiClient(member).get("/users/me", params), 400, "BAD_REQUEST", too_many)


def test_too_many_files_is_400_saying_so(member):
    """The fuzz QA pass: a bare "Bad Request"."""
    api = ApiClient(member)
    files = {f"f{i}": SimpleUploadedFile(f"{i}.txt", b"x") for i in range(101)}
    response = api.client.post("/api/v1/user_uploads", files, **api.headers)
    assert_error(response, 400, "BAD_REQUEST", "Too many files (the limit is 100)")


def test_oversized_body_is_413(member, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = ApiClient(member).patch("/users/me/profile_data", {"data": "x" * 5000})
    assert_error(response, 413, "BAD_REQUEST", "Request body too large (the limit is 1,000 bytes)")


def test_admin_login_on_an_unknown_subdomain_is_not_a_crash(owner):
    response = Client().post(
        "/admin/login/", {"username": owner.delivery_email, "password": "x"}, HTTP_HOST="nope.testserver"
    )
    assert response.status_code == 200


def test_failed_authentications_are_rate_limited_per_address(member, settings):
    settings.RATE_LIMIT_API_BY_IP = (3, 60)
    api = ApiClient(email=member.delivery_email, api_key="B" * 32)
    for _ in range(3):
        assert_error(api.get("/users/me"), 401, "UNAUTHORIZED")
    assert_error(api.get("/users/me"), 429, "RATE_LIMIT_HIT")


def test_in_process_limiter_forgets_clients_that_went_away(settings):
    settings.REDIS_URL = ""
    backend = ratelimit._in_process
    for i in range(50):
        ratelimit.check(f"gone-{i}", (5, 1))
    assert len(backend._hits) >= 50
    backend._sweep(now=__import__("time").time() + 2)
    assert not any(key.startswith("gone-") for key in backend._hits)


def test_options_is_refused_everywhere(admin):
    assert_error(ApiClient(admin).request("OPTIONS", "/users/admin@example.com"), 405, "BAD_REQUEST")


def test_owners_may_make_a_bot_an_owner(owner, bot):
    assert_success(ApiClient(owner).patch(f"/users/{bot.id}", {"role": 100}))
    bot.refresh_from_db()
    assert bot.role == Role.OWNER


def test_bots_get_no_profile_data(admin, bot, realm):
    field = CustomProfileFieldFactory(realm=realm)
    response = ApiClient(admin).patch(f"/users/{bot.id}", {"profile_data": [{"id": field.id, "value": "x"}]})
    assert_error(response, 400, "BAD_REQUEST", "Bots have no custom profile fields.")


def test_a_bot_owner_does_not_count_as_the_other_owner(owner, realm, member):
    bot = BotFactory(realm=realm, bot_owner=member, role=Role.OWNER)
    assert bot.is_owner
    assert_error(
        ApiClient(owner).delete(f"/users/{owner.id}"),
        400,
        "BAD_REQUEST",
        "Cannot deactivate the only organization owner",
    )
