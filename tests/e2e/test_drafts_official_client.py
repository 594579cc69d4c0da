"""Drafts with the official `zulip` Python client from PyPI, unchanged, against a real server. The
client has no draft methods: its `call_endpoint` sends what Zulip's clients send (lists and objects
as JSON text in the form)."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_keeps_drafts_in_sync(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    assert (
        theirs.add_subscriptions(streams=[{"name": "design"}], principals=[owner.id, member.id])["result"] == "success"
    )
    design_id = theirs.get_stream_id("design")["stream_id"]
    queue = mine.register(event_types=["drafts"], fetch_event_types=["drafts"])
    assert queue["drafts"] == []

    channel_draft = {"type": "stream", "to": [design_id], "topic": "plans", "content": "Draft one", "timestamp": 1000}
    direct_draft = {"type": "private", "to": [owner.id], "topic": "", "content": "Draft two", "timestamp": 2000}
    created = mine.call_endpoint(url="drafts", method="POST", request={"drafts": [channel_draft, direct_draft]})
    assert created["result"] == "success", created
    one, two = created["ids"]

    listed = mine.call_endpoint(url="drafts", method="GET")
    assert listed == {
        "result": "success",
        "msg": "",
        "count": 2,
        "drafts": [{"id": two, **direct_draft}, {"id": one, **channel_draft}],
    }

    edited = {**channel_draft, "content": "Draft one, edited", "timestamp": 3000}
    assert mine.call_endpoint(url=f"drafts/{one}", method="PATCH", request={"draft": edited}) == {
        "result": "success",
        "msg": "",
    }
    assert mine.call_endpoint(url=f"drafts/{two}", method="DELETE") == {"result": "success", "msg": ""}
    assert mine.call_endpoint(url="drafts", method="GET")["drafts"] == [{"id": one, **edited}]

    events = mine.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e["op"]) for e in events] == [("drafts", "add"), ("drafts", "update"), ("drafts", "remove")]
    assert [d["id"] for d in events[0]["drafts"]] == [one, two]
    assert events[1]["draft"] == {"id": one, **edited}
    assert events[2]["draft_id"] == two

    # Another person's draft is a missing one; a broken draft is refused with Zulip's words.
    for method, request in (("PATCH", {"draft": edited}), ("DELETE", {})):
        refused = theirs.call_endpoint(url=f"drafts/{one}", method=method, request=request)
        assert (refused["result"], refused["code"], refused["msg"]) == ("error", "BAD_REQUEST", "Draft does not exist")
    broken = mine.call_endpoint(
        url="drafts", method="POST", request={"drafts": [{**channel_draft, "to": [design_id, design_id + 1]}]}
    )
    assert broken["msg"] == "Must specify exactly 1 stream ID for stream messages"
    assert mine.register(fetch_event_types=["drafts"])["drafts"] == [{"id": one, **edited}]
