"""User settings with the official `zulip` Python client from PyPI, unchanged, against a real server
process: PATCH /settings (call_endpoint), its legacy alias /settings/notifications (the client's
update_notification_settings), bulk changes, the events, organization defaults, and an email change
confirmed through the emailed link (EMAIL_URL: the server writes its emails to files)."""

import re

import pytest
import requests
import zulip

from apps.users.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e


@pytest.fixture
def mailbox(tmp_path):
    return tmp_path / "mail"


@pytest.fixture
def server(transactional_db, live_server_factory, mailbox, collected_static):
    # filemail:// and an absolute path (four slashes; three work too). The static files: the email
    # change's page loads its script.
    return live_server_factory(EMAIL_URL=f"filemail:///{mailbox}", STATIC_ROOT=collected_static)


def client_of(user, server) -> zulip.Client:
    return zulip.Client(email=user.delivery_email, api_key=user.api_key, site=server.url)


def reloaded(user) -> User:
    return User.objects.get(id=user.id)


def test_settings_with_the_official_client(server, people):
    _, _, member = people
    client = client_of(member, server)
    queue = client.register(event_types=["user_settings"])
    assert queue["result"] == "success", queue

    changes = {
        "twenty_four_hour_time": True,
        "color_scheme": 2,
        "emojiset": "text",
        "default_language": "de",
        "web_home_view": "recent",
        "timezone": "Europe/Berlin",
        "web_font_size_px": 14,
        "enable_drafts_synchronization": False,
        "email_address_visibility": 3,
        "resolved_topic_notice_auto_read_policy": "never",
    }
    assert client.call_endpoint(url="settings", method="PATCH", request=changes) == {"result": "success", "msg": ""}
    user = reloaded(member)
    assert {name: getattr(user, name) for name in changes} == changes

    # The legacy alias, as the client's own method calls it.
    result = client.update_notification_settings({"enable_sounds": False, "notification_sound": "ding"})
    assert result == {"result": "success", "msg": ""}
    assert (reloaded(member).enable_sounds, reloaded(member).notification_sound) == (False, "ding")

    events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    by_property = {e["property"]: e for e in events if e["type"] == "user_settings"}
    assert set(by_property) == {*changes, "enable_sounds", "notification_sound"}
    assert by_property["default_language"]["language_name"] == "German"
    assert by_property["color_scheme"]["value"] == 2

    # One refused value refuses all.
    refused = client.call_endpoint(url="settings", method="PATCH", request={"enter_sends": True, "color_scheme": 9})
    assert (refused["result"], refused["code"], refused["msg"]) == (
        "error",
        "REQUEST_VARIABLE_INVALID",
        "Invalid color_scheme",
    )
    assert reloaded(member).enter_sends is False

    state = client.register(
        fetch_event_types=["user_settings"],
        client_capabilities={"notification_settings_null": True, "user_settings_object": True},
    )
    assert state["user_settings"]["emojiset"] == "text"
    assert state["user_settings"]["twenty_four_hour_time"] is True


def test_administrators_change_settings_in_bulk(server, people):
    realm, owner, member = people
    other = UserFactory(realm=realm, delivery_email="other@e2e.example", full_name="Otto Other")
    admin_client = client_of(owner, server)
    request = {
        "target_users": {"user_ids": [member.id, other.id], "skip_if_already_edited": False},
        "emojiset": "twitter",
    }
    assert admin_client.call_endpoint(url="settings", method="PATCH", request=request) == {
        "result": "success",
        "msg": "",
    }
    assert (reloaded(member).emojiset, reloaded(other).emojiset, reloaded(owner).emojiset) == (
        "twitter",
        "twitter",
        "google",
    )

    refused = client_of(member, server).call_endpoint(url="settings", method="PATCH", request=request)
    assert (refused["code"], refused["msg"]) == ("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")

    defaults = admin_client.call_endpoint(
        url="realm/user_settings_defaults",
        method="PATCH",
        request={"twenty_four_hour_time": True, "enable_login_emails": False},
    )
    assert defaults == {"result": "success", "msg": "", "ignored_parameters_unsupported": ["enable_login_emails"]}
    state = admin_client.register(fetch_event_types=["realm_user_settings_defaults"])
    assert state["realm_user_settings_defaults"]["twenty_four_hour_time"] is True


def test_an_email_change_confirmed_by_its_link(server, people, mailbox):
    _, _, member = people
    client = client_of(member, server)
    result = client.call_endpoint(url="settings", method="PATCH", request={"email": "mick.new@e2e.example"})
    assert result == {"result": "success", "msg": ""}
    assert reloaded(member).delivery_email == "member@e2e.example"
    [sent] = list(mailbox.iterdir())
    message = sent.read_text()
    assert "To: mick.new@e2e.example" in message
    link = re.search(r"(http://\S+/accounts/confirm_new_email/\w+)", message).group(1)
    assert link.startswith(server.url)

    browser = requests.Session()
    page = browser.get(link, timeout=10)
    assert page.status_code == 200
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    done = browser.post(link, data={"csrfmiddlewaretoken": token}, timeout=10)
    assert done.status_code == 200, done.text
    assert "mick.new@e2e.example" in done.text
    assert reloaded(member).delivery_email == "mick.new@e2e.example"
    # The client signs in with the new address (its key is unchanged).
    renamed = zulip.Client(email="mick.new@e2e.example", api_key=member.api_key, site=server.url)
    assert renamed.get_profile()["user_id"] == member.id
    assert browser.post(link, data={"csrfmiddlewaretoken": token}, timeout=10).status_code == 400
