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


def test_a_reminder_comes_from_the_notification_bot_when_due(transactional_db, live_server_factory, people):
    _, owner, member = people
    server = live_server_factory(TASK_WORKER="1")
    client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    message_id = client.send_message({"type": "private", "to": [owner.id], "content": "Call the plumber"})["id"]
    queue = client.register(event_types=["reminders", "message"])
    assert queue["reminders"] == []

    due = int(time.time()) + 3
    request = {"message_id": message_id, "scheduled_delivery_timestamp": due, "note": "before noon"}
    created = client.call_endpoint(url="reminders", method="POST", request=request)
    assert created["result"] == "success", created
    [listed] = client.call_endpoint(url="reminders", method="GET")["reminders"]
    assert (listed["reminder_id"], listed["reminder_target_message_id"]) == (created["reminder_id"], message_id)

    deadline = time.monotonic() + 30
    events: list[dict] = []
    while not any(e["type"] == "message" for e in events) and time.monotonic() < deadline:
        events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
        time.sleep(0.5)
    [notice] = [e for e in events if e["type"] == "message"]
    delivered = notice["message"]
    assert delivered["sender_full_name"] == "Notification Bot", server.log()[-3000:]
    assert "before noon" in delivered["content"]
    assert "Call the plumber" in delivered["content"]
    assert "read" not in notice["flags"]
    while len(events) < 3 and time.monotonic() < deadline:
        events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
        time.sleep(0.2)
    kinds = [(e["type"], e.get("op")) for e in events]
    assert kinds == [("reminders", "add"), ("message", None), ("reminders", "remove")]
    assert client.call_endpoint(url="reminders", method="GET")["reminders"] == []
