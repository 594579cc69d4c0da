"""Deleting and reacting to messages with the official `zulip` Python client from PyPI, unchanged,
against a real server: its delete_message, add_reaction and remove_reaction, the events another
person's queue gets, and Zulip's refusals."""

import json

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


def test_client_reacts_and_the_mobile_apps_shape_parses(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    message_id = theirs.send_message({"type": "private", "to": [member.id], "content": "lunch?"})["id"]
    queue = theirs.register(event_types=["reaction"])
    # The client repeats message_id in the body: Zulip reports it as ignored (it is the URL's).
    done = {"result": "success", "msg": "", "ignored_parameters_unsupported": ["message_id"]}
    assert mine.add_reaction({"message_id": message_id, "emoji_name": "octopus"}) == done
    assert (
        mine.add_reaction(
            {
                "message_id": message_id,
                "emoji_name": "thumbs_up",
                "emoji_code": "1f44d",
                "reaction_type": "unicode_emoji",
            }
        )
        == done
    )
    again = mine.add_reaction({"message_id": message_id, "emoji_name": "octopus"})
    assert (again["result"], again["msg"]) == ("error", "Reaction already exists.")
    unknown = mine.add_reaction({"message_id": message_id, "emoji_name": "no_such_emoji"})
    assert (unknown["result"], unknown["msg"]) == ("error", "Emoji 'no_such_emoji' does not exist")
    assert mine.remove_reaction({"message_id": message_id, "emoji_name": "octopus"}) == done

    [message] = theirs.get_messages({"anchor": message_id, "num_before": 0, "num_after": 0})["messages"]
    # What the Zulip mobile app requires of a reaction (lib/api/model/reaction.dart).
    assert [
        {k: r[k] for k in ("emoji_name", "emoji_code", "reaction_type", "user_id")} for r in message["reactions"]
    ] == [{"emoji_name": "thumbs_up", "emoji_code": "1f44d", "reaction_type": "unicode_emoji", "user_id": member.id}]
    events = theirs.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["op"], e["emoji_name"], e["user_id"]) for e in events] == [
        ("add", "octopus", member.id),
        ("add", "thumbs_up", member.id),
        ("remove", "octopus", member.id),
    ]


def test_client_votes_in_a_poll(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    poll_id = theirs.send_message({"type": "private", "to": [member.id], "content": "/poll Lunch?\nPizza\nSushi"})["id"]
    queue = theirs.register(event_types=["submessage"])
    vote = {"type": "vote", "key": "canned,1", "vote": 1}
    request = {"message_id": poll_id, "msg_type": "widget", "content": json.dumps(vote)}
    assert mine.call_endpoint(url="submessage", method="POST", request=request) == {"result": "success", "msg": ""}
    bad = mine.call_endpoint(url="submessage", method="POST", request={**request, "content": "{"})
    assert (bad["result"], bad["msg"]) == ("error", "Invalid json for submessage")

    [message] = theirs.get_messages({"anchor": poll_id, "num_before": 0, "num_after": 0})["messages"]
    widget, voted = message["submessages"]
    assert json.loads(widget["content"])["extra_data"] == {"question": "Lunch?", "options": ["Pizza", "Sushi"]}
    assert (voted["sender_id"], json.loads(voted["content"])) == (member.id, vote)
    [event] = theirs.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert (event["type"], event["submessage_id"], event["sender_id"]) == ("submessage", voted["id"], member.id)


def test_client_edits_and_moves_a_message(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    assert theirs.add_subscriptions(streams=[{"name": "dev"}], principals=[owner.id, member.id])["result"] == "success"
    queue = theirs.register(event_types=["update_message"])
    message_id = mine.send_message({"type": "stream", "to": "dev", "topic": "lunch", "content": "Lunch at noon"})["id"]
    # The client repeats message_id in the body: Zulip reports it as ignored (it is the URL's).
    edited = mine.update_message({"message_id": message_id, "content": "Lunch at one"})
    assert (edited["result"], edited["detached_uploads"]) == ("success", [])
    refused = theirs.update_message({"message_id": message_id, "content": "Lunch at two"})
    assert (refused["result"], refused["msg"]) == ("error", "You don't have permission to edit this message")
    moved = theirs.update_message({"message_id": message_id, "topic": "food", "propagate_mode": "change_all"})
    assert moved["result"] == "success", moved

    [message] = theirs.get_messages({"anchor": message_id, "num_before": 0, "num_after": 0})["messages"]
    assert (message["content"], message["subject"]) == ("<p>Lunch at one</p>", "food")
    history = theirs.get_message_history(message_id)["message_history"]
    assert [(v["content"], v["topic"]) for v in history] == [
        ("Lunch at noon", "lunch"),
        ("Lunch at one", "lunch"),
        ("Lunch at one", "food"),
    ]
    events = theirs.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e.get("content"), e.get("subject")) for e in events] == [
        ("update_message", "Lunch at one", None),
        ("update_message", None, "food"),
    ]
