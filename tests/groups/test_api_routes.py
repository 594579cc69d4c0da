"""The /user_groups paths (a ViewSet on a router, apps.core.views.ApiViewSet): Zulip's paths and
methods only, and everything an ApiView does around the handler: 405 with `allowed_methods` before
authentication, HEAD for GET, 401, guests refused first, the rate limit and its headers."""

import pytest

from tests.api import ApiClient, assert_error, assert_success

# Each path, and the methods it answers (Zulip's), in the order `allowed_methods` lists them.
PATHS = {
    "/user_groups": ["GET", "HEAD"],
    "/user_groups/create": ["POST"],
    "/user_groups/{id}": ["PATCH", "DELETE"],
    "/user_groups/{id}/deactivate": ["POST"],
    "/user_groups/{id}/members": ["GET", "POST", "HEAD"],
    "/user_groups/{id}/members/{user}": ["GET", "HEAD"],
    "/user_groups/{id}/subgroups": ["GET", "POST", "HEAD"],
}
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@pytest.fixture
def team(member, make_group):
    return make_group(member, "team", [member])


@pytest.mark.parametrize(("path", "allowed"), PATHS.items(), ids=list(PATHS))
@pytest.mark.parametrize("authenticated", [True, False], ids=["member", "anonymous"])
def test_other_methods_are_405_with_the_allowed_ones(member, team, path, allowed, authenticated):
    api = ApiClient(member) if authenticated else ApiClient()
    url = path.format(id=team.id, user=member.id)
    for method in METHODS:
        if method in allowed:
            continue
        response = api.request(method, url)
        assert response.status_code == 405, (method, url)
        assert response["Allow"] == ", ".join(allowed), (method, url)
        if method != "HEAD":
            body = assert_error(response, 405, "BAD_REQUEST", "Method Not Allowed")
            assert body["allowed_methods"] == allowed, (method, url)


@pytest.mark.parametrize("path", [p for p, allowed in PATHS.items() if "HEAD" in allowed])
def test_head_answers_as_get_without_a_body(member, team, path):
    response = ApiClient(member).request("HEAD", path.format(id=team.id, user=member.id))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == b""


@pytest.mark.parametrize(
    "path",
    [
        "/user_groups/",
        "/user_groups/create/",
        "/user_groups/{id}/",
        "/user_groups/{id}/members/",
        "/user_groups/abc/members",
        "/user_groups/-1/members",
        "/user_groups/\u0661\u0662/members",  # digits of another script are not an id
        "/user_groups/{id}/members/abc",
        "/user_groups/{id}/other",
    ],
)
def test_paths_are_zulips_exactly(member, team, path):
    response = ApiClient(member).get(path.format(id=team.id))
    assert_error(response, 404, "BAD_REQUEST", "Not Found")


@pytest.mark.parametrize("group_id", ["0", "1234567890123456789"])  # the second longer than any id
def test_id_zero_names_no_group(member, group_id):
    response = ApiClient(member).get(f"/user_groups/{group_id}/members")
    assert_error(response, 400, "BAD_REQUEST", "Invalid user group")


@pytest.mark.parametrize(("path", "allowed"), PATHS.items(), ids=list(PATHS))
def test_authentication_comes_first(anonymous, team, member, path, allowed):
    response = anonymous.request(allowed[0], path.format(id=team.id, user=member.id))
    assert_error(response, 401, "UNAUTHORIZED")
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'


@pytest.mark.parametrize(("path", "allowed"), PATHS.items(), ids=list(PATHS))
def test_guests_are_refused_before_anything_is_looked_at(guest, path, allowed):
    # The group does not exist: a guest still hears only that guests may not.
    response = ApiClient(guest).request(allowed[0], path.format(id=999999, user=999999), {"name": ""})
    assert_error(response, 400, "BAD_REQUEST", "Not allowed for guest users")


def test_the_rate_limit_counts_and_says_so(settings, member, team):
    settings.RATE_LIMIT_API_BY_USER = (2, 60)
    api = ApiClient(member)
    first = api.get(f"/user_groups/{team.id}/members")
    assert_success(first)
    assert (first["X-RateLimit-Limit"], first["X-RateLimit-Remaining"]) == ("2", "1")
    refused = api.post(f"/user_groups/{team.id}/subgroups")  # a refusal counts, and says so, too
    assert_error(refused, 400, "BAD_REQUEST", 'Nothing to do. Specify at least one of "add" or "delete".')
    assert refused["X-RateLimit-Remaining"] == "0"
    limited = api.get("/user_groups")
    assert_error(limited, 429, "RATE_LIMIT_HIT")
    assert int(limited["Retry-After"]) > 0
