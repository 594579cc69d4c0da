"""Scheduled messages through the official `zulip` client (its call_endpoint: it has no methods of
their own), against the server started as `make run` starts it, with its task worker: the message
arrives when it is due, and its sender's queue hears it leave the list."""

import time

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_a_scheduled_message_is_sent_by_the_worker_when_due(transactional_db, live_server_factory, people):
    _, owner, member = people
    server = live_server_factory(TASK_WORKER="1")
    sender = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    reader = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    queue = sender.register(event_types=["scheduled_messages"])
    assert queue["scheduled_messages"] == []

    due = int(time.time()) + 3
    created = sender.call_endpoint(
        url="scheduled_messages",
        method="POST",
        request={
            "type": "direct",
            "to": f"[{member.id}]",
            "content": "Stand-up in five",
            "scheduled_delivery_timestamp": due,
        },
    )
    assert created["result"] == "success", created
    listed = sender.call_endpoint(url="scheduled_messages", method="GET")["scheduled_messages"]
    assert [(s["scheduled_message_id"], s["to"], s["scheduled_delivery_timestamp"]) for s in listed] == [
        (created["scheduled_message_id"], [member.id], due)
    ]

    deadline = time.monotonic() + 30
    received = []
    while not received and time.monotonic() < deadline:
        found = reader.get_messages({"anchor": "newest", "num_before": 5, "num_after": 0, "narrow": [["dm", owner.id]]})
        received = [m for m in found["messages"] if m["content"] == "<p>Stand-up in five</p>"]
        time.sleep(0.5)
    assert received, server.log()[-3000:]
    assert received[0]["timestamp"] >= due
    assert sender.call_endpoint(url="scheduled_messages", method="GET")["scheduled_messages"] == []
    events: list[dict] = []
    while len(events) < 2 and time.monotonic() < deadline:  # events leave through the outbox, soon after
        events = sender.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
        time.sleep(0.2)
    assert [(e["op"], e.get("scheduled_message_id")) for e in events] == [
        ("add", None),
        ("remove", created["scheduled_message_id"]),
    ]
