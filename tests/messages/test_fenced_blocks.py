"""Zulip's fenced blocks, in the markup Zulip writes and the mobile app reads: code blocks in
Pygments' wrapper (a bare <pre> is content the app cannot show), ```spoiler with its header shown
and its content hidden, ```quote as a quotation; their text is Markdown like the rest."""

import re
from html import unescape

import pytest
from pygments.token import STANDARD_TYPES

from apps.core import markdown
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
    """Highlighted by Pygments, its language named by the lexer (the mobile QA pass: no spans)."""
    assert rendered(member, "```py\nif a < b:\n```") == (
        '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">if</span> '
        '<span class="n">a</span> <span class="o">&lt;</span> <span class="n">b</span><span class="p">:</span>\n'
        "</code></pre></div>"
    )
    # PHP without its <?php marker, as Zulip's.
    assert '<span class="k">echo</span>' in rendered(member, "```php\necho $x;\n```")
    # A language Pygments does not know is named as written, its code left as it is.
    assert rendered(member, "```sparql-ish\n<b>:smile:\n```") == (
        '<div class="codehilite" data-code-language="sparql-ish"><pre><span></span><code>&lt;b&gt;:smile:\n'
        "</code></pre></div>"
    )
    # The code is shown as written, in nothing but Pygments' spans.
    code = "<span class='evil' onclick='x()'>hi</span>\n"
    html = rendered(member, f"```html\n{code}```")
    assert unescape(re.sub(r"<[^>]*>", "", html)) == code
    assert set(re.findall(r'class="([^"]*)"', html)) <= {"codehilite", *STANDARD_TYPES.values()}
    assert (
        rendered(member, "    indented")
        == '<div class="codehilite"><pre><span></span><code>indented\n</code></pre></div>'
    )


def test_code_is_highlighted_only_where_it_is_safe_to(design, member, monkeypatch):
    """A language whose lexer may take seconds over hostile text (benchmarks/highlighting) is named
    but not coloured; a block whose highlighting runs out of time is shown as it is."""
    plain = '<div class="codehilite" data-code-language="{}"><pre><span></span><code>({}\n</code></pre></div>'
    assert rendered(member, "```ng2\n(x\n```") == plain.format("Angular2", "x")
    monkeypatch.setattr(markdown, "HIGHLIGHT_SECONDS", -1)
    assert rendered(member, "```python\n(y\n```") == plain.format("Python", "y")


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
