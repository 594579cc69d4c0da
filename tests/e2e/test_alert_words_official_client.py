"""Alert words with the official `zulip` Python client, unchanged, against a real server process: its
get/add/remove_alert_words, the alert_words event and state of its queue, and a message containing
a word arriving with `has_alert_word` and found by an `is:alerted` narrow."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_manages_alert_words_and_is_alerted(parley_server, people):
    _, owner, member = people
    sender, reader = (
        zulip.Client(email=user.delivery_email, api_key=user.api_key, site=parley_server.url)
        for user in (owner, member)
    )
    assert reader.get_alert_words() == {"result": "success", "msg": "", "alert_words": []}

    queue = reader.register(event_types=["alert_words", "message"], fetch_event_types=["alert_words"])
    assert queue["result"] == "success", queue
    assert queue["alert_words"] == []

    added = reader.add_alert_words(["Deploy", " outage ", "DEPLOY", ""])
    assert added == {"result": "success", "msg": "", "alert_words": ["Deploy", "outage"]}
    assert reader.get_alert_words()["alert_words"] == ["Deploy", "outage"]
    removed = reader.remove_alert_words(["OUTAGE", "never added"])
    assert removed == {"result": "success", "msg": "", "alert_words": ["Deploy"]}

    too_long = reader.add_alert_words(["x" * 101])
    assert too_long["result"] == "error"
    assert too_long["code"] == "REQUEST_VARIABLE_INVALID"
    assert too_long["msg"] == "alert_words[0] is too long (limit: 100 characters)"
    assert reader.get_alert_words()["alert_words"] == ["Deploy"]

    assert sender.add_subscriptions(streams=[{"name": "ops"}], principals=[owner.id, member.id])["result"] == "success"
    alerting = sender.send_message({"type": "stream", "to": "ops", "topic": "release", "content": "deploy done!"})
    quiet = sender.send_message({"type": "stream", "to": "ops", "topic": "release", "content": "redeploy later"})
    assert alerting["result"] == quiet["result"] == "success"

    events = reader.get_events(queue_id=queue["queue_id"], last_event_id=queue["last_event_id"], dont_block=True)
    assert events["result"] == "success", events
    assert [e["alert_words"] for e in events["events"] if e["type"] == "alert_words"] == [
        ["Deploy", "outage"],
        ["Deploy"],
    ]
    flags = {e["message"]["id"]: e["flags"] for e in events["events"] if e["type"] == "message"}
    assert flags == {alerting["id"]: ["has_alert_word"], quiet["id"]: []}

    found = reader.get_messages(
        {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [{"operator": "is", "operand": "alerted"}]}
    )
    assert [m["id"] for m in found["messages"]] == [alerting["id"]]
    assert found["messages"][0]["flags"] == ["has_alert_word"]
    # The sender's own words never flag their messages.
    assert sender.add_alert_words(["deploy"])["result"] == "success"
    own = sender.send_message({"type": "stream", "to": "ops", "topic": "release", "content": "deploy again"})
    mine = sender.get_messages({"anchor": own["id"], "num_before": 0, "num_after": 0})["messages"]
    assert "has_alert_word" not in mine[0]["flags"]

    # What POST /register tells a new client.
    state = reader.register(fetch_event_types=["alert_words"])
    assert state["alert_words"] == ["Deploy"]
