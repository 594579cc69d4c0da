"""A mention inside a quote (`> ...`, ```quote) is shown silent and notifies nobody, as in Zulip:
quoting someone's message does not mention again the people it mentioned. Outside the quote, the
same message mentions as usual. One inside a link's or image's address is left as written."""

import pytest

from apps.messages.models import Message, UserMessage
from tests.api import assert_success
from tests.messages.conftest import flags_of, post_message

MENTIONED = UserMessage.MENTIONED


@pytest.fixture
def design(make_stream, member, admin, owner):
    return make_stream("design", member, admin, owner)


def send(user, content: str) -> int:
    return assert_success(post_message(user, type="stream", to="design", topic="t", content=content))["id"]


def user_span(user, *, silent: bool) -> str:
    css, text = ("user-mention silent", user.full_name) if silent else ("user-mention", f"@{user.full_name}")
    return f'<span class="{css}" data-user-id="{user.id}">{text}</span>'


@pytest.mark.parametrize(
    "quoted",
    [
        "> @**{name}** said so",
        "```quote\n@**{name}** said so\n```",
        "> > @**{name}** said so",  # nested
        "> first line\n>\n> @**{name}** said so",
    ],
)
def test_a_quoted_mention_is_silent(design, member, admin, quoted):
    message_id = send(member, quoted.format(name=admin.full_name))
    html = Message.objects.get(id=message_id).rendered_content
    assert user_span(admin, silent=True) in html
    assert user_span(admin, silent=False) not in html
    assert flags_of(admin, message_id) == 0


def test_a_mention_after_the_quote_still_mentions(design, member, admin, owner):
    message_id = send(member, f"> @**{admin.full_name}** wrote this\n\n@**{owner.full_name}** what do you think?")
    html = Message.objects.get(id=message_id).rendered_content
    assert html == (
        f"<blockquote>\n<p>{user_span(admin, silent=True)} wrote this</p>\n</blockquote>\n"
        f"<p>{user_span(owner, silent=False)} what do you think?</p>"
    )
    assert (flags_of(admin, message_id), flags_of(owner, message_id)) == (0, MENTIONED)


def test_quoted_wildcard_and_group_mentions_notify_nobody(design, make_group, member, admin, owner):
    support = make_group(admin, "support", [owner])
    message_id = send(member, "> @**all** and @*support*: meeting at noon")
    html = Message.objects.get(id=message_id).rendered_content
    assert 'class="user-mention channel-wildcard-mention silent"' in html
    assert f'<span class="user-group-mention silent" data-user-group-id="{support.id}">support</span>' in html
    assert (flags_of(owner, message_id), flags_of(admin, message_id)) == (0, 0)  # no wildcard flag either


def test_a_mention_or_channel_link_in_an_address_is_left_as_written(design, member, admin):
    message_id = send(member, f"[docs](<@**{admin.full_name}**>) ![logo](#**design**)")
    html = Message.objects.get(id=message_id).rendered_content
    assert html == (
        f'<p><a href="@**{admin.full_name}**" rel="noopener noreferrer">docs</a> '
        '!<a href="#**design**" rel="noopener noreferrer">logo</a></p>'
    )
    assert flags_of(admin, message_id) == 0


def test_a_url_written_out_keeps_its_mentions_and_channel_links_as_text(design, member, admin):
    message_id = send(member, f"see https://example.com/#**design** and https://example.com/@**{admin.full_name}**")
    html = Message.objects.get(id=message_id).rendered_content
    assert html.count("<a ") == 2  # no link inside a link
    assert 'class="stream"' not in html
    assert "user-mention" not in html
    assert f">https://example.com/@**{admin.full_name}**</a>" in html
    assert flags_of(admin, message_id) == 0
