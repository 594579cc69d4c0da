"""Channel folders with the official `zulip` Python client from PyPI, unchanged, against a real
server. The client has no folder methods: its `call_endpoint` sends what Zulip's clients send."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_sees_folders_and_channels_in_them(parley_server, people):
    _, owner, member = people
    admin, person = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (owner, member)
    )
    queue = person.register(
        event_types=["channel_folder", "stream"], fetch_event_types=["channel_folders", "subscription"]
    )
    assert queue["channel_folders"] == []

    created = admin.call_endpoint(
        url="channel_folders/create", method="POST", request={"name": "Engineering", "description": "**Builders**"}
    )
    assert created["result"] == "success", created
    engineering = created["channel_folder_id"]
    ops = admin.call_endpoint(url="channel_folders/create", method="POST", request={"name": "Ops", "description": ""})
    ops = ops["channel_folder_id"]

    # A channel created in a folder; then moved, by its administrator, to the other one.
    subscribed = admin.add_subscriptions(streams=[{"name": "backend"}], principals=[member.id], folder_id=engineering)
    assert subscribed["result"] == "success", subscribed
    backend = admin.get_stream_id("backend")["stream_id"]
    assert [s["folder_id"] for s in person.get_subscriptions()["subscriptions"] if s["stream_id"] == backend] == [
        engineering
    ]
    moved = admin.update_stream({"stream_id": backend, "folder_id": ops})
    assert moved == {"result": "success", "msg": "", "ignored_parameters_unsupported": ["stream_id"]}

    assert admin.call_endpoint(url="channel_folders", method="PATCH", request={"order": [ops, engineering]}) == {
        "result": "success",
        "msg": "",
    }
    # A folder with a channel in it is not archived (Zulip's rule); taken out, it is.
    refused = admin.call_endpoint(url=f"channel_folders/{ops}", method="PATCH", request={"is_archived": True})
    assert refused["msg"] == "You need to remove all the channels from this folder to archive it."
    out = admin.call_endpoint(url=f"streams/{backend}", method="PATCH", request={"folder_id": "null"})
    assert out["result"] == "success", out
    archived = admin.call_endpoint(url=f"channel_folders/{ops}", method="PATCH", request={"is_archived": True})
    assert archived == {"result": "success", "msg": ""}

    listed = person.call_endpoint(url="channel_folders", method="GET")["channel_folders"]
    assert [(f["id"], f["name"], f["order"], f["rendered_description"]) for f in listed] == [
        (engineering, "Engineering", 1, "<p><strong>Builders</strong></p>")
    ]
    everything = person.call_endpoint(url="channel_folders", method="GET", request={"include_archived": True})
    assert [(f["id"], f["is_archived"]) for f in everything["channel_folders"]] == [(ops, True), (engineering, False)]
    assert person.get_streams()["streams"][0]["folder_id"] is None

    events = person.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    folder_events = [
        (e["op"], e.get("channel_folder", {}).get("name")) for e in events if e["type"] == "channel_folder"
    ]
    assert folder_events == [("add", "Engineering"), ("add", "Ops"), ("reorder", None), ("update", None)]
    stream_updates = [(e["property"], e["value"]) for e in events if e["type"] == "stream" and e["op"] == "update"]
    assert stream_updates == [("folder_id", ops), ("folder_id", None)]

    refused = person.call_endpoint(
        url="channel_folders/create", method="POST", request={"name": "Mine", "description": ""}
    )
    assert (refused["result"], refused["msg"]) == ("error", "Must be an organization administrator")
    bad = admin.call_endpoint(
        url="channel_folders/create", method="POST", request={"name": "engineering", "description": ""}
    )
    assert bad["msg"] == "Channel folder name already in use"
    assert person.register(fetch_event_types=["channel_folders"])["channel_folders"] == everything["channel_folders"]
