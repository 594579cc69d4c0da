"""The official `zulip` client moves a topic to another channel (issue 20), against a real server
process: the messages are found in the new channel, the old topic keeps the Notification Bot's
notice, and a reader's queue hears of the move."""

import json

import pytest
import zulip

from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import SystemGroups
from apps.groups.selectors import system_groups

pytestmark = pytest.mark.e2e


def client_of(user, server):
    return zulip.Client(email=user.delivery_email, api_key=user.api_key, site=server.url)


def topic_messages(client, channel: str, topic: str) -> list[dict]:
    narrow = [{"operator": "channel", "operand": channel}, {"operator": "topic", "operand": topic}]
    found = client.get_messages({"anchor": "newest", "num_before": 20, "num_after": 0, "narrow": narrow})
    assert found["result"] == "success", found
    return found["messages"]


def test_a_topic_moves_to_another_channel(parley_server, people):
    _, owner, member = people
    mover, reader = client_of(owner, parley_server), client_of(member, parley_server)
    for name in ("design", "kitchen"):
        result = mover.add_subscriptions(streams=[{"name": name}], principals=[owner.id, member.id])
        assert result["result"] == "success", result
    kitchen_id = mover.get_stream_id("kitchen")["stream_id"]
    ids = [
        mover.send_message({"type": "stream", "to": "design", "topic": "lunch", "content": f"m{n}"})["id"]
        for n in range(3)
    ]
    queue = reader.register(event_types=["update_message"])

    result = mover.update_message(
        {"message_id": ids[1], "stream_id": kitchen_id, "propagate_mode": "change_all",
         "send_notification_to_old_thread": True}
    )  # fmt: skip
    assert result["result"] == "success", result

    moved = topic_messages(reader, "kitchen", "lunch")
    assert [m["id"] for m in moved[:3]] == ids
    assert moved[-1]["sender_full_name"] == "Notification Bot"
    assert moved[-1]["content"].startswith("<p>This topic was moved here from")
    [left] = topic_messages(reader, "design", "lunch")
    assert left["sender_full_name"] == "Notification Bot"
    events = reader.get_events(queue_id=queue["queue_id"], last_event_id=queue["last_event_id"], dont_block=True)
    [event] = [e for e in events["events"] if e["type"] == "update_message"]
    assert (event["new_stream_id"], event["message_ids"], event["propagate_mode"]) == (kitchen_id, ids, "change_all")


def test_resolving_a_topic_posts_the_notice(parley_server, people):
    _, owner, member = people
    resolver, reader = client_of(owner, parley_server), client_of(member, parley_server)
    result = resolver.add_subscriptions(streams=[{"name": "support"}], principals=[owner.id, member.id])
    assert result["result"] == "success", result
    sent = reader.send_message({"type": "stream", "to": "support", "topic": "printer", "content": "jammed"})

    result = resolver.update_message({"message_id": sent["id"], "topic": "✔ printer", "propagate_mode": "change_all"})
    assert result["result"] == "success", result

    messages = topic_messages(reader, "support", "✔ printer")
    assert [m["sender_full_name"] for m in messages] == [member.full_name, "Notification Bot"]
    assert "has marked this topic as resolved." in messages[-1]["content"]


def test_a_channel_lets_its_members_move_its_messages_out(parley_server, people):
    realm, owner, member = people
    groups = system_groups(realm.id)
    do_change_realm_permission_group_setting(
        realm, "can_move_messages_between_channels_group", groups[SystemGroups.NOBODY].id, acting_user=None
    )
    admin, mover = client_of(owner, parley_server), client_of(member, parley_server)
    for name in ("triage", "done"):
        result = admin.add_subscriptions(streams=[{"name": name}], principals=[owner.id, member.id])
        assert result["result"] == "success", result
    triage_id, done_id = admin.get_stream_id("triage")["stream_id"], admin.get_stream_id("done")["stream_id"]
    sent = mover.send_message({"type": "stream", "to": "triage", "topic": "bug", "content": "fixed"})
    refused = mover.update_message({"message_id": sent["id"], "stream_id": done_id})
    assert (refused["result"], refused["msg"]) == ("error", "You don't have permission to move this message")

    members = groups[SystemGroups.MEMBERS].id
    result = admin.update_stream(
        {"stream_id": triage_id, "can_move_messages_out_of_channel_group": json.dumps({"new": members})}
    )
    assert result["result"] == "success", result
    [stream] = [s for s in mover.get_subscriptions()["subscriptions"] if s["stream_id"] == triage_id]
    assert stream["can_move_messages_out_of_channel_group"] == members
    result = mover.update_message({"message_id": sent["id"], "stream_id": done_id})
    assert result["result"] == "success", result
    assert topic_messages(mover, "done", "bug")[0]["id"] == sent["id"]
