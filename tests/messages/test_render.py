"""POST /messages/render: a client's preview of a message's HTML, as sending would render it,
sending nothing."""

import pytest

from apps.core.markdown import render_markdown
from apps.realms.limits import MAX_MESSAGE_LENGTH
from tests.api import assert_error, assert_success
from tests.messages.conftest import api, db_state, post_message


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def render(user, content: str):
    return api(user).post("/messages/render", {"content": content})


@pytest.mark.parametrize(
    "content",
    [
        "**bold** and `code`",
        "Hi @**Admin Person**, see #**design>lunch** :smile:",
        "```python\nprint(1)\n```",
        "> quoted\n\n- one\n- two",
        "<script>alert(1)</script> [x](javascript:alert(1))",
    ],
)
def test_the_preview_is_what_sending_renders(design, member, admin, content):
    admin.full_name = "Admin Person"
    admin.save(update_fields=["full_name"])
    before = db_state()
    preview = assert_success(render(member, content))["rendered"]
    assert db_state() == before  # nothing sent
    if "@**" in content:
        assert f'data-user-id="{admin.id}"' in preview
        assert 'class="stream-topic"' in preview
    sent = assert_success(post_message(member, type="stream", to="design", topic="t", content=content))["id"]
    assert preview == assert_success(api(member).get(f"/messages/{sent}"))["message"]["content"]


def test_a_preview_may_name_a_group_its_writer_may_not_mention(design, make_group, sys_groups, member, admin, owner):
    # Nothing is sent, so nothing is refused: sending it is (tests/messages/test_group_mentions.py).
    oncall = make_group(admin, "oncall", [owner], settings={"can_mention_group": sys_groups["role:administrators"].id})
    preview = assert_success(render(member, "@*oncall* help"))["rendered"]
    assert f'data-user-group-id="{oncall.id}"' in preview


def test_an_empty_preview_is_empty_and_a_long_one_is_cut_as_sending_cuts_it(member):
    assert assert_success(render(member, ""))["rendered"] == ""
    long = assert_success(render(member, "a" * (MAX_MESSAGE_LENGTH + 50)))["rendered"]
    assert long.endswith("[message truncated]</p>")


def test_the_content_is_required(member):
    response = api(member).post("/messages/render", {})
    assert_error(response, 400, "REQUEST_VARIABLE_MISSING", "Missing 'content' argument")


INVALID = "Invalid time format: "


@pytest.mark.parametrize(
    ("content", "html"),
    [
        # A line break is a break, as Zulip's nl2br (the web-app QA pass: lines ran together).
        ("first line\nsecond line", "<p>first line<br>\nsecond line</p>"),
        ("~~gone~~", "<p><del>gone</del></p>"),  # Zulip's <del> (nh3 dropped markdown-it's <s>)
        # Zulip's global times: in UTC as `datetime`, the text as written; an error for a bad one.
        (
            "at <time:2024-05-01T12:00:00+02:00>",
            '<p>at <time datetime="2024-05-01T10:00:00Z">2024-05-01T12:00:00+02:00</time></p>',
        ),
        ("<time:1700000000>", '<p><time datetime="2023-11-14T22:13:20Z">1700000000</time></p>'),
        ("<time:2024-05-01 10:00>", '<p><time datetime="2024-05-01T10:00:00Z">2024-05-01 10:00</time></p>'),
        ("<time:soon>", f'<p><span class="timestamp-error">{INVALID}soon</span></p>'),
        ("<time:0001-01-01T00:00+05:00>", f'<p><span class="timestamp-error">{INVALID}0001-01-01T00:00+05:00</span></p>'),  # noqa: E501
        ("`<time:1700000000>`", "<p><code>&lt;time:1700000000&gt;</code></p>"),
    ],
)  # fmt: skip
def test_zulips_markdown(member, content, html):
    assert assert_success(render(member, content))["rendered"] == html


def test_a_url_whose_host_is_too_long_to_link_stays_as_written(member):
    """markdown-it's URL parser drops a host over 255 characters: the link said `http:///path` (or
    `http://`), the host lost (the hostile-input QA passes). Such a URL is left as text; others are
    linked."""
    for rest in ["/path?q=1", "", "?q=1", "#part"]:  # the QA pass again: without a path, "http://"
        url = "http://" + "a." * 130 + "com" + rest
        rendered = assert_success(render(member, f"look {url} rest"))["rendered"]
        assert rendered == f"<p>look {url} rest</p>"
        assert 'href="http://' not in assert_success(render(member, f"[x]({url})"))["rendered"]
    shorter = "http://" + "a." * 100 + "com/path"
    assert f'<a href="{shorter}"' in assert_success(render(member, f"look {shorter}"))["rendered"]


@pytest.mark.parametrize("nesting", ["> " * 45, "- " * 25, "> - " * 15, "1. " * 25])
def test_what_is_nested_deeper_than_markdown_goes_is_kept_as_text(member, nesting):
    """The hostile QA pass: `> ` 5,000 times then a word showed empty quotes, the word lost. The
    part too deep is text; the rest of the message is Markdown still (the verify QA pass)."""
    content = "Look: **this**\n\n" + nesting + "the **word** <b>\nand more\n\nafter *it*"
    rendered = assert_success(render(member, content))["rendered"]
    assert rendered.startswith("<p>Look: <strong>this</strong></p>")
    assert "the **word** &lt;b&gt;" in rendered
    assert "and more" in rendered
    assert rendered.endswith("<p>after <em>it</em></p>")


def test_lists_and_quotes_nest_as_deep_as_zulips():
    """Each list counts two of markdown-it's levels (the list, its item): 20 lists, 40 quotes."""
    lists = "\n".join("  " * depth + f"- item {depth}" for depth in range(20))
    assert render_markdown(lists).count("<ul>") == 20
    assert render_markdown("> " * 40 + "kept").count("<blockquote>") == 40


@pytest.mark.parametrize("fence", ["```spoiler x\n", "````quote\n"])
def test_spoilers_and_quotes_nested_past_20_are_shown_as_code(design, member, fence):
    """700 nested spoilers ran out of stack: a 500, the message lost (the QA pass)."""
    sent = assert_success(post_message(member, type="stream", to="design", topic="t", content=fence * 700 + "deep"))
    rendered = assert_success(api(member).get(f"/messages/{sent['id']}"))["message"]["content"]
    kind = "spoiler-block" if "spoiler" in fence else "<blockquote>"
    assert rendered.count(kind) == 20
    assert "deep" in rendered
