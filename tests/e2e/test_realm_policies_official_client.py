"""Organization policies with the official `zulip` Python client from PyPI, unchanged, against a real
server: an administrator sets them with PATCH /realm (call_endpoint), and people meet them: a report
reaching the moderation request channel, the empty topic refused, the policies in /register."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_reports_a_message_to_the_moderators(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    assert theirs.add_subscriptions(streams=[{"name": "moderation"}], invite_only=True)["result"] == "success"
    channel_id = theirs.get_stream_id("moderation")["stream_id"]
    off = mine.call_endpoint(f"messages/{1}/report", method="POST", request={"report_type": "spam"})
    assert (off["result"], off["msg"]) == ("error", "Message reporting is not enabled in this organization.")
    answer = theirs.call_endpoint("realm", method="PATCH", request={"moderation_request_channel_id": channel_id})
    assert answer["moderation_request_channel_id"] == channel_id
    queue = theirs.register(event_types=["message"])

    message_id = theirs.send_message({"type": "private", "to": [member.id], "content": "rude words"})["id"]
    done = mine.call_endpoint(
        f"messages/{message_id}/report", method="POST", request={"report_type": "other", "description": "Rude."}
    )
    assert done["result"] == "success", done
    events = theirs.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    reports = [e["message"] for e in events if e["message"].get("display_recipient") == "moderation"]
    assert len(reports) == 1
    assert reports[0]["subject"] == f"{owner.full_name}'s moderation requests"
    assert "rude words" in reports[0]["content"]


def test_client_meets_the_topic_and_mention_policies(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    assert theirs.add_subscriptions(streams=[{"name": "dev"}], principals=[owner.id, member.id])["result"] == "success"
    assert mine.send_message({"type": "stream", "to": "dev", "topic": "", "content": "hi"})["result"] == "success"
    assert (
        theirs.call_endpoint("realm", method="PATCH", request={"topics_policy": "disable_empty_topic"})["result"]
        == "success"
    )
    refused = mine.send_message({"type": "stream", "to": "dev", "topic": "", "content": "hi"})
    assert refused["result"] == "error"
    assert refused["msg"] == 'Sending messages to the "general chat" topic is not allowed in this channel.'
    state = mine.register(fetch_event_types=["realm"])
    assert (state["realm_topics_policy"], state["realm_mandatory_topics"]) == ("disable_empty_topic", True)
    assert state["realm_wildcard_mention_policy"] == 5
