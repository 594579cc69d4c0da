"""Linkifiers with the official `zulip` Python client from PyPI, unchanged, against a real server:
its add_realm_filter, get_realm_linkifiers and remove_realm_filter, messages linkified as they are
sent, topic links in what is read and in events, and the legacy list."""

import pytest
import zulip

pytestmark = pytest.mark.e2e

ISSUE = r"#(?P<id>[0-9]+)"
ISSUE_URL = "https://github.com/zulip/zulip/issues/{id}"


def test_client_manages_linkifiers_and_messages_are_linkified(parley_server, people):
    _, owner, member = people
    admin, reader = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (owner, member)
    )
    queue = reader.register(
        event_types=["realm_linkifiers", "message"],
        fetch_event_types=["realm_linkifiers"],
        client_capabilities={"linkifier_url_template": True},
    )
    assert queue["realm_linkifiers"] == []

    added = admin.add_realm_filter(ISSUE, ISSUE_URL)
    assert added["result"] == "success", added
    linkifier = {
        "id": added["id"],
        "pattern": ISSUE,
        "url_template": ISSUE_URL,
        "example_input": None,
        "reverse_template": None,
        "alternative_url_templates": [],
    }
    assert reader.get_realm_linkifiers() == {"result": "success", "msg": "", "linkifiers": [linkifier]}
    assert reader.call_endpoint(url="realm/filters", method="GET")["filters"] == [[ISSUE, ISSUE_URL, added["id"]]]

    # Only administrators change them, and a pattern RE2 cannot run is refused with Zulip's words.
    refused = reader.add_realm_filter(r"JIRA-(?P<id>\d+)", "https://jira.example.com/{id}")
    assert (refused["result"], refused["code"], refused["msg"]) == (
        "error",
        "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator",
    )
    bad = admin.add_realm_filter(r"(?P<id>a+)(?=b)", "https://x.example.com/{id}")
    assert (bad["result"], bad["msg"]) == ("error", "Bad regular expression: invalid perl operator: (?=")
    assert bad["errors"] == {"pattern": ["Bad regular expression: invalid perl operator: (?="]}

    assert admin.add_subscriptions(streams=[{"name": "dev"}], principals=[owner.id, member.id])["result"] == "success"
    sent = admin.send_message({"type": "stream", "to": "dev", "topic": "fix #99", "content": "Fixed #12, not `#13`."})
    assert sent["result"] == "success", sent
    [message] = reader.get_messages({"anchor": sent["id"], "num_before": 0, "num_after": 0})["messages"]
    assert '<a href="https://github.com/zulip/zulip/issues/12"' in message["content"]
    assert "<code>#13</code>" in message["content"]
    topic_links = [{"text": "#99", "url": "https://github.com/zulip/zulip/issues/99"}]
    assert message["topic_links"] == topic_links

    assert admin.remove_realm_filter(added["id"]) == {"result": "success", "msg": ""}
    assert reader.get_realm_linkifiers()["linkifiers"] == []
    gone = admin.remove_realm_filter(added["id"])
    assert (gone["result"], gone["msg"]) == ("error", "Linkifier not found.")

    events = reader.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [event["type"] for event in events] == ["realm_linkifiers", "message", "realm_linkifiers"]
    assert events[0]["realm_linkifiers"] == [linkifier]
    assert events[1]["message"]["topic_links"] == topic_links
    assert events[2]["realm_linkifiers"] == []
