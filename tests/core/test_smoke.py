from tests.api import assert_error, assert_success


def test_users_me_returns_own_user(client_for, member):
    body = assert_success(client_for(member).get("/users/me"))
    assert body["user_id"] == member.id


def test_no_credentials_is_unauthorized(anonymous, realm):
    response = anonymous.get("/users/me")
    assert_error(response, 401, "UNAUTHORIZED", "Not logged in: API authentication or user session required")
    assert response["WWW-Authenticate"] == 'Basic realm="zulip"'
