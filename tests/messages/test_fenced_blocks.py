"""Zulip's fenced blocks, in the markup Zulip writes and the mobile app reads: code blocks in
Pygments' wrapper (a bare <pre> is content the app cannot show), ```spoiler with its header shown
and its content hidden, ```quote as a quotation; their text is Markdown like the rest."""

import pytest

from apps.messages.models import Message
from tests.api import assert_success
from tests.messages.conftest import post_message


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def rendered(user, content: str) -> str:
    message_id = assert_success(post_message(user, type="stream", to="design", topic="t", content=content))["id"]
    return Message.objects.get(id=message_id).rendered_content


def test_code_blocks_are_written_as_zulip_writes_them(design, member):
    assert rendered(member, "```python\nif a < b:\n```") == (
        '<div class="codehilite" data-code-language="python"><pre><span></span><code>if a &lt; b:\n</code></pre></div>'
    )
    assert (
        rendered(member, "    indented")
        == '<div class="codehilite"><pre><span></span><code>indented\n</code></pre></div>'
    )


def test_a_spoiler_shows_its_header_and_hides_its_content(design, member, admin):
    html = rendered(member, "```spoiler The **ending**\nAsk @**Adam Admin**: *it was him*\n```")
    assert html == (
        '<div class="spoiler-block"><div class="spoiler-header">\n<p>The <strong>ending</strong></p>\n</div>'
        '<div class="spoiler-content" aria-hidden="true">\n<p>Ask '
        f'<span class="user-mention" data-user-id="{admin.id}">@Adam Admin</span>: '
        "<em>it was him</em></p>\n</div></div>"
    )
    assert rendered(member, "```spoiler\nhello\n```") == (
        '<div class="spoiler-block"><div class="spoiler-header">\n</div>'
        '<div class="spoiler-content" aria-hidden="true">\n<p>hello</p>\n</div></div>'
    )


def test_a_quote_block_is_a_quotation(design, member):
    assert rendered(member, "```quote\nwell *said*\n```") == "<blockquote>\n<p>well <em>said</em></p>\n</blockquote>"


def test_what_markup_a_message_may_carry_is_still_only_ours(design, member):
    html = rendered(member, '<div class="spoiler-block" onclick="x">no</div>')
    assert html == '<p>&lt;div class="spoiler-block" onclick="x"&gt;no&lt;/div&gt;</p>'
