"""GET /server_settings: what every Zulip client asks first."""

from apps.core.version import PARLEY_VERSION
from apps.realms.actions import do_change_realm_settings
from apps.subscriptions.actions.channel_settings import check_update_stream
from apps.subscriptions.models import Stream
from tests.api import ApiClient, assert_success
from tests.factories import create_stream

REQUIRED_KEYS = {
    "authentication_methods", "external_authentication_methods", "zulip_feature_level", "zulip_version",
    "zulip_merge_base", "push_notifications_enabled", "is_incompatible", "email_auth_enabled",
    "require_email_format_usernames", "realm_url", "realm_uri", "realm_name", "realm_icon", "realm_description",
    "realm_web_public_access_enabled",
}  # fmt: skip


def test_fields(realm):
    realm.description = "Welcome **all**"
    realm.save()
    body = assert_success(ApiClient().get("/server_settings"))
    assert set(body) >= REQUIRED_KEYS
    assert body["zulip_feature_level"] == 496
    assert body["zulip_version"] == body["zulip_merge_base"] == PARLEY_VERSION
    assert body["authentication_methods"]["password"] is True
    assert body["authentication_methods"]["github"] is False
    assert body["external_authentication_methods"] == []
    assert body["email_auth_enabled"] is True
    assert body["require_email_format_usernames"] is True
    assert body["is_incompatible"] is False
    assert body["realm_url"] == body["realm_uri"] == "http://testserver"
    assert body["realm_name"] == "Parley Test"
    assert body["realm_description"] == "<p>Welcome <strong>all</strong></p>"


def test_credentials_are_ignored_even_when_invalid(member):
    for api in (ApiClient(member), ApiClient(member, api_key="Z" * 32), ApiClient(authorization="Bearer x")):
        assert assert_success(api.get("/server_settings"))["zulip_version"] == PARLEY_VERSION


def test_incompatible_client(realm):
    body = assert_success(ApiClient().get("/server_settings", HTTP_USER_AGENT="ZulipInvalid/1.0"))
    assert body["is_incompatible"] is True


def test_password_auth_disabled_is_advertised(realm):
    realm.password_auth_enabled = False
    realm.save()
    body = assert_success(ApiClient().get("/server_settings"))
    assert body["email_auth_enabled"] is False
    assert body["authentication_methods"]["password"] is False


def test_the_description_is_rendered_as_a_channels_is(realm, admin, member):
    """Mentions name people, channel links link public channels only (anyone may read it), emoji are
    pictures, as Zulip renders it; a changed description is rendered anew."""
    create_stream(realm, "design")
    create_stream(realm, "board", admin, private=True)
    text = f"Ask @**{member.full_name}** in #**design** :tada: (not #**board**)"
    do_change_realm_settings(realm, {"description": text}, acting_user=admin)
    html = assert_success(ApiClient().get("/server_settings"))["realm_description"]
    assert f'<span class="user-mention" data-user-id="{member.id}">@{member.full_name}</span>' in html
    assert 'class="stream" data-stream-id=' in html
    assert ">#design</a>" in html
    assert "board</a>" not in html
    assert "(not #<strong>board</strong>)" in html
    assert '<span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span>' in html
    # A channel made private is no longer linked.
    design = Stream.objects.get(realm=realm, name="design")
    check_update_stream(design, is_private=True, acting_user=admin)
    html = assert_success(ApiClient().get("/server_settings"))["realm_description"]
    assert "design</a>" not in html
    assert "#<strong>design</strong>" in html
    do_change_realm_settings(realm, {"description": "Now *this*"}, acting_user=admin)
    assert assert_success(ApiClient().get("/server_settings"))["realm_description"] == "<p>Now <em>this</em></p>"
