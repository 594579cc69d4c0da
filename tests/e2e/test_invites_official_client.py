"""Reusable invitation links with the official `zulip` Python client from PyPI, unchanged, against a
real server. The client has no invitation methods: its `call_endpoint` sends what Zulip's clients
send (lists as JSON text in the form); it leaves out None values, so JSON null is sent as "null"."""

import re

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_creates_lists_and_revokes_links(parley_server, people):
    _, owner, member = people
    boss, other = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (owner, member)
    )
    assert boss.add_subscriptions(streams=[{"name": "welcome"}])["result"] == "success"
    welcome_id = boss.get_stream_id("welcome")["stream_id"]
    queue = boss.register(event_types=["invites_changed"])

    created = boss.call_endpoint(
        url="invites/multiuse",
        method="POST",
        request={"invite_as": 600, "invite_expires_in_minutes": "null", "stream_ids": [welcome_id]},
    )
    assert created["result"] == "success", created
    assert re.fullmatch(rf"{re.escape(parley_server.url)}/join/[a-z2-7]{{32}}/", created["invite_link"])

    listed = boss.call_endpoint(url="invites", method="GET")
    [invite] = listed["invites"]
    assert invite["link_url"] == created["invite_link"]
    assert (invite["invited_as"], invite["expiry_date"], invite["is_multiuse"]) == (600, None, True)
    assert (invite["invited_by_user_id"], invite["stream_ids"], invite["group_ids"]) == (owner.id, [welcome_id], [])

    # A member may not, by default; nor invite above themselves when they may.
    refused = other.call_endpoint(url="invites/multiuse", method="POST", request={})
    assert (refused["result"], refused["code"], refused["msg"]) == ("error", "BAD_REQUEST", "Insufficient permission")
    assert other.call_endpoint(url="invites", method="GET")["invites"] == []

    assert boss.call_endpoint(url=f"invites/multiuse/{invite['id']}", method="DELETE") == {
        "result": "success",
        "msg": "",
    }
    again = boss.call_endpoint(url=f"invites/multiuse/{invite['id']}", method="DELETE")
    assert again["msg"] == "Invitation has already been revoked"
    assert boss.call_endpoint(url="invites", method="GET")["invites"] == []

    events = boss.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [event["type"] for event in events] == ["invites_changed", "invites_changed"]


def test_client_tries_the_welcome_message(parley_server, people):
    realm, owner, member = people
    boss, other = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (owner, member)
    )
    sent = boss.call_endpoint(
        url="realm/test_welcome_bot_custom_message",
        method="POST",
        request={"welcome_message_custom_text": "Say hi in #**general**!"},
    )
    assert sent["result"] == "success", sent
    [message] = boss.get_messages({"anchor": sent["message_id"], "num_before": 0, "num_after": 0})["messages"]
    assert message["sender_full_name"] == "Welcome Bot"
    assert message["content"].startswith(f"<p>Hello, and welcome to <strong>{realm.name}</strong>!</p>")
    assert "Say hi in" in message["content"]
    assert [r["id"] for r in message["display_recipient"]] == sorted([owner.id, message["sender_id"]])

    refused = other.call_endpoint(
        url="realm/test_welcome_bot_custom_message", method="POST", request={"welcome_message_custom_text": "x"}
    )
    assert (refused["code"], refused["msg"]) == ("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
