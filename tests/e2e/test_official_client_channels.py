"""The official `zulip` client's channel methods, unchanged, against a real server process."""

import pytest
import zulip

from apps.subscriptions.models import Subscription
from apps.users.models import Role
from tests.factories import RealmFactory, UserFactory

pytestmark = pytest.mark.e2e


@pytest.fixture
def clients(transactional_db, parley_server):
    realm = RealmFactory(string_id="", name="E2E Org")
    owner = UserFactory(realm=realm, role=Role.OWNER, delivery_email="owner@e2e.example")
    member = UserFactory(realm=realm, delivery_email="member@e2e.example")

    def client(user):
        return zulip.Client(email=user.delivery_email, api_key=user.api_key, site=parley_server.url)

    return client(owner), client(member), owner, member


def test_client_subscribes_lists_updates_and_unsubscribes(clients):
    owner_client, member_client, owner, member = clients

    result = owner_client.add_subscriptions(
        streams=[{"name": "design", "description": "How things look"}], principals=[owner.id, member.id]
    )
    assert result["result"] == "success", result
    assert result["subscribed"] == {str(owner.id): ["design"], str(member.id): ["design"]}
    assert owner_client.add_subscriptions(streams=[{"name": "design"}])["already_subscribed"] == {
        str(owner.id): ["design"]
    }

    subs = member_client.get_subscriptions({"include_subscribers": True})["subscriptions"]
    assert [(s["name"], s["description"], sorted(s["subscribers"])) for s in subs] == [
        ("design", "How things look", sorted([owner.id, member.id]))
    ]
    stream_id = subs[0]["stream_id"]
    assert member_client.get_stream_id("design")["stream_id"] == stream_id
    assert [s["name"] for s in member_client.get_streams()["streams"]] == ["design"]
    # Default channels: the owner's to choose.
    assert member_client.add_default_stream(stream_id)["msg"] == "Must be an organization administrator"
    assert owner_client.add_default_stream(stream_id)["result"] == "success"
    shown = member_client.get_streams(include_default=True)["streams"]
    assert [(s["name"], s["is_default"]) for s in shown] == [("design", True)]

    result = member_client.update_subscription_settings(
        [
            {"stream_id": stream_id, "property": "pin_to_top", "value": True},
            {"stream_id": stream_id, "property": "color", "value": "#a47462"},
            {"stream_id": stream_id, "property": "is_muted", "value": True},
        ]
    )
    assert result["result"] == "success", result
    sub = Subscription.objects.get(user=member, stream_id=stream_id)
    assert (sub.pin_to_top, sub.color, sub.is_muted) == (True, "#a47462", True)
    assert member_client.get_subscriptions()["subscriptions"][0]["in_home_view"] is False

    result = member_client.remove_subscriptions(["design"])
    assert (result["result"], result["removed"], result["not_removed"]) == ("success", ["design"], [])
    assert member_client.get_subscriptions()["subscriptions"] == []
    # Removing someone else needs the permission: the member has none, the owner does.
    refused = member_client.remove_subscriptions(["design"], principals=[owner.id])
    assert (refused["result"], refused["msg"]) == ("error", "Insufficient permission")
    assert owner_client.remove_subscriptions(["design"], principals=[owner.id])["removed"] == ["design"]


def test_client_sees_missing_channels_as_errors(clients):
    owner_client, _, _, _ = clients
    result = owner_client.remove_subscriptions(["nowhere"])
    assert (result["result"], result["code"], result["stream"]) == ("error", "STREAM_DOES_NOT_EXIST", "nowhere")
    assert owner_client.get_stream_id("nowhere")["msg"] == "Invalid channel name 'nowhere'"
