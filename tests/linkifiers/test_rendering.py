"""Linkifiers at work: in the content of messages sent (outside code and existing links, never in a
mention), in `topic_links` of every message read and of message events; the organization's
linkifiers read once per rendering, from a cache that a change empties, and from the database when
the cache cannot be reached."""

import pytest
import uri_template
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.linkifiers.actions import check_add_linkifier, do_remove_linkifier
from apps.linkifiers.patterns import LinkifierFields
from apps.linkifiers.selectors import cache_key
from apps.messages.models import Message
from tests.api import api_for, assert_error, assert_success
from tests.messages.conftest import get_messages

ISSUE_URL = "https://github.com/zulip/zulip/issues/{id}"


@pytest.fixture
def issues(realm, admin):
    return check_add_linkifier(realm, fields=LinkifierFields(r"#(?P<id>[0-9]+)", ISSUE_URL), acting_user=admin)


@pytest.fixture
def general(make_stream, member, admin):
    return make_stream("general", member, admin)


def send(user, stream, content="hello", topic="lunch") -> Message:
    params = {"type": "stream", "to": stream.name, "topic": topic, "content": content}
    return Message.objects.get(id=assert_success(api_for(user).post("/messages", params))["id"])


def link(number) -> str:
    url = ISSUE_URL.format(id=number)
    return f'<a href="{url}" rel="noopener noreferrer">#{number}</a>'


def test_content_is_linkified_outside_code_and_links(issues, general, member):
    message = send(
        member,
        general,
        "Fixed #12 (see #13).\n\n`#14` and\n```\n#15\n```\n[#16](https://example.com/) https://x.com/#17",
    )
    html = message.rendered_content
    assert link(12) in html
    assert link(13) in html
    assert "<code>#14</code>" in html
    assert "<pre><span></span><code>#15\n</code></pre>" in html
    assert '<a href="https://example.com/" rel="noopener noreferrer">#16</a>' in html
    assert '<a href="https://x.com/#17" rel="noopener noreferrer">https://x.com/#17</a>' in html
    assert not any(f"issues/{number}" in html for number in (14, 15, 16))
    assert message.has_link


def test_linkifiers_reach_text_in_every_block(issues, general, member):
    html = send(member, general, "# Heading #1\n\n- item #2\n\n> quote #3\n\n| a |\n|---|\n| #4 |").rendered_content
    for number in range(1, 5):
        assert link(number) in html


def test_a_mention_is_never_linkified(realm, admin, general, member):
    # A pattern that would match a mention's placeholder, were it ever given one.
    fields = LinkifierFields(r"(?P<word>zmention[0-9a-fx]+z|Mel)", "https://w.example.com/{word}")
    check_add_linkifier(realm, fields=fields, acting_user=admin)
    html = send(admin, general, "hi @**Mel Member** and Mel").rendered_content
    assert f'<span class="user-mention" data-user-id="{member.id}">@Mel Member</span>' in html
    assert '<a href="https://w.example.com/Mel" rel="noopener noreferrer">Mel</a>' in html
    assert "zmention" not in html


def test_without_linkifiers_content_renders_as_before(general, member):
    assert send(member, general, "fixed #12").rendered_content == "<p>fixed #12</p>"


def test_topic_links_in_events_and_in_messages_read(issues, general, member, admin, capture_events):
    with capture_events(admin) as received:
        message = send(member, general, "hello", topic="#7 and zulip.com")
    expected = [{"text": "#7", "url": ISSUE_URL.format(id=7)}, {"text": "zulip.com", "url": "https://zulip.com"}]
    [event] = [event for event in received[admin.id] if event["type"] == "message"]
    assert event["message"]["topic_links"] == expected
    assert get_messages(admin)["messages"][-1]["topic_links"] == expected
    assert assert_success(api_for(admin).get(f"/messages/{message.id}"))["message"]["topic_links"] == expected


def test_topic_links_follow_the_linkifiers_of_today(issues, general, member, admin):
    """Topic links are computed when messages are read: a removed linkifier no longer links (the
    content rendered when the message was sent keeps its link, as in Zulip)."""
    message = send(member, general, "#8", topic="#8")
    do_remove_linkifier(issues, acting_user=admin)
    shown = assert_success(api_for(admin).get(f"/messages/{message.id}"))["message"]
    assert shown["topic_links"] == []
    assert link(8) in shown["content"]


def test_direct_messages_have_no_topic_links(issues, member, admin):
    params = {"type": "private", "to": [admin.id], "content": "#9"}
    message_id = assert_success(api_for(member).post("/messages", params))["id"]
    shown = assert_success(api_for(admin).get(f"/messages/{message_id}"))["message"]
    assert shown["topic_links"] == []
    assert link(9) in shown["content"]


def linkifier_queries(queries) -> list[str]:
    return [q["sql"] for q in queries if '"linkifiers_linkifier"' in q["sql"] and q["sql"].startswith("SELECT")]


def test_linkifiers_are_read_once_and_then_cached(issues, general, member, admin):
    send(member, general, "warm")  # the first rendering reads them
    with CaptureQueriesContext(connection) as queries:
        send(member, general, "#1 #2 #3", topic="#4 #5")
        get_messages(admin)
    assert linkifier_queries(queries) == []
    # A change empties the cache: the next rendering reads (once) and links with the new list.
    check_add_linkifier(
        issues.realm, fields=LinkifierFields(r"T(?P<id>\d+)", "https://t.example.com/{id}"), acting_user=admin
    )
    with CaptureQueriesContext(connection) as queries:
        message = send(member, general, "T1 #2 T3 #4")
    assert len(linkifier_queries(queries)) == 1
    assert message.rendered_content.count("<a ") == 4


def test_a_page_of_messages_reads_linkifiers_once(issues, general, member, admin, settings):
    settings.LINKIFIER_CACHE_SECONDS = 0  # nothing stays cached: every rendering reads
    cache.delete(cache_key(general.realm_id))  # what creating the channel cached (its description's rendering)
    for n in range(5):
        send(member, general, topic=f"#{n}")
    with CaptureQueriesContext(connection) as queries:
        messages = get_messages(admin)["messages"]
    assert len(linkifier_queries(queries)) == 1
    assert [m["topic_links"][0]["text"] for m in messages] == [f"#{n}" for n in range(5)]


def test_with_the_cache_down_the_database_answers(issues, general, member, redis_down):
    assert link(21) in send(member, general, "#21").rendered_content


def test_linkifiers_that_take_too_long_refuse_the_message(issues, general, member, monkeypatch):
    """As Zulip's 5 s for rendering (the expensive-request QA pass: 1,000 broad linkifiers took 41 s
    over 10,000 characters): the message is refused, nothing is sent."""
    monkeypatch.setattr("apps.linkifiers.patterns.LINKIFIERS_SECONDS", -1.0)
    params = {"type": "stream", "to": general.name, "topic": "t", "content": "see #12"}
    msg = "Unable to render message: the organization's linkifiers took too long"
    assert_error(api_for(member).post("/messages", params), 400, "BAD_REQUEST", msg)
    assert_error(api_for(member).post("/messages/render", {"content": "see #12"}), 400, "BAD_REQUEST", msg)
    assert not Message.objects.exists()


def test_only_the_links_kept_are_made(realm, admin, general, member, monkeypatch):
    """Two linkifiers matching the same text: the second's matches are dropped before their URLs are
    made (each was made, then dropped: the QA pass measured 12 µs a linkifier a match)."""
    for pattern, template in ((r"#(?P<id>[0-9]+)", ISSUE_URL), (r"#(?P<id>[0-9]{1,9})", "https://example.com/{id}")):
        check_add_linkifier(realm, fields=LinkifierFields(pattern, template), acting_user=admin)
    made = []
    expand = uri_template.URITemplate.expand
    monkeypatch.setattr(uri_template.URITemplate, "expand", lambda self, **v: made.append(v) or expand(self, **v))
    message = send(member, general, "see #1, #2 and #3")
    assert message.rendered_content == f"<p>see {link(1)}, {link(2)} and {link(3)}</p>"
    assert made == [{"id": "1"}, {"id": "2"}, {"id": "3"}]
