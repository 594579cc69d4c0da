"""The official `zulip` client's message methods, unchanged, against a real server process."""

import queue
import threading

import pytest
import zulip

pytestmark = pytest.mark.e2e


def client_of(user, server):
    return zulip.Client(email=user.delivery_email, api_key=user.api_key, site=server.url)


def test_a_sent_message_is_received_found_and_highlighted(parley_server, people):
    _, owner, member = people
    sender, reader = client_of(owner, parley_server), client_of(member, parley_server)
    assert (
        sender.add_subscriptions(streams=[{"name": "design"}], principals=[owner.id, member.id])["result"] == "success"
    )

    received: queue.Queue = queue.Queue()
    registered = threading.Event()
    register = reader.register

    def register_and_tell(*args, **kwargs):
        result = register(*args, **kwargs)
        registered.set()
        return result

    reader.register = register_and_tell  # to know when call_on_each_message has its queue
    threading.Thread(target=reader.call_on_each_message, args=(received.put,), daemon=True).start()
    assert registered.wait(20)

    result = sender.send_message(
        {"type": "stream", "to": "design", "topic": "launch", "content": "The rocket launches at noon"}
    )
    assert result["result"] == "success", result
    message = received.get(timeout=20)
    assert (message["id"], message["sender_email"], message["subject"]) == (
        result["id"],
        owner.delivery_email,
        "launch",
    )

    found = reader.get_messages(
        {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [{"operator": "stream", "operand": "design"}]}
    )
    assert [m["id"] for m in found["messages"]] == [result["id"]]
    assert found["found_newest"] is True

    matches = reader.check_messages_match_narrow(
        msg_ids=[result["id"]], narrow=[{"operator": "search", "operand": "rocket"}]
    )
    assert matches["result"] == "success", matches
    assert '<span class="highlight">rocket</span>' in matches["messages"][str(result["id"])]["match_content"]

    direct = sender.send_message({"type": "private", "to": [member.id], "content": "psst"})
    assert received.get(timeout=20)["id"] == direct["id"]

    preview = sender.render_message({"content": "**Lift-off** at @**Nobody Here**"})
    assert preview["rendered"] == "<p><strong>Lift-off</strong> at @<strong>Nobody Here</strong></p>", preview
