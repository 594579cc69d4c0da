"""Saved snippets with the official `zulip` Python client from PyPI, unchanged, against a real
server (the client has no snippet methods: its call_endpoint sends what Zulip's clients send)."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_keeps_saved_snippets(parley_server, people):
    _, _, member = people
    client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=parley_server.url)
    queue = client.register(event_types=["saved_snippets"], fetch_event_types=["saved_snippets"])
    assert queue["saved_snippets"] == []
    created = client.call_endpoint(url="saved_snippets", method="POST", request={"title": "Hi", "content": "Hello!"})
    assert created["result"] == "success", created
    snippet_id = created["saved_snippet_id"]
    edited = client.call_endpoint(url=f"saved_snippets/{snippet_id}", method="PATCH", request={"title": "Hello"})
    assert edited["result"] == "success", edited
    [snippet] = client.call_endpoint(url="saved_snippets", method="GET")["saved_snippets"]
    assert (snippet["id"], snippet["title"], snippet["content"]) == (snippet_id, "Hello", "Hello!")
    assert client.call_endpoint(url=f"saved_snippets/{snippet_id}", method="DELETE")["result"] == "success"
    gone = client.call_endpoint(url=f"saved_snippets/{snippet_id}", method="DELETE")
    assert (gone["result"], gone["msg"]) == ("error", "Saved snippet does not exist.")
    events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [e["op"] for e in events] == ["add", "update", "remove"]
