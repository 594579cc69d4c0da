"""Deleting messages with the official `zulip` Python client from PyPI, unchanged, against a real
server: its delete_message, the event the other person's queue gets, and Zulip's refusals."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_deletes_a_message(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    assert theirs.add_subscriptions(streams=[{"name": "dev"}], principals=[owner.id, member.id])["result"] == "success"
    queue = theirs.register(event_types=["delete_message"], client_capabilities={"bulk_message_deletion": True})
    first = mine.send_message({"type": "stream", "to": "dev", "topic": "t", "content": "keep"})["id"]
    oops = mine.send_message({"type": "stream", "to": "dev", "topic": "t", "content": "oops"})["id"]
    owners = theirs.send_message({"type": "stream", "to": "dev", "topic": "t", "content": "the owner's"})["id"]

    refused = mine.delete_message(owners)
    assert (refused["result"], refused["msg"]) == ("error", "You don't have permission to delete this message")
    assert mine.delete_message(oops) == {"result": "success", "msg": ""}
    gone = mine.delete_message(oops)
    assert (gone["result"], gone["msg"]) == ("error", "Invalid message(s)")
    # An administrator deletes anyone's.
    assert theirs.delete_message(first) == {"result": "success", "msg": ""}

    events = theirs.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e["message_ids"]) for e in events] == [("delete_message", [oops]), ("delete_message", [first])]
    left = theirs.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [["stream", "dev"]]})
    assert [m["id"] for m in left["messages"]] == [owners]
