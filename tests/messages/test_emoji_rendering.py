"""Emoji in messages' HTML as Zulip's Markdown writes them (apps/messages/emoji.py): a Unicode emoji's
name between colons, or the emoji itself, becomes `<span class="emoji emoji-CODE" ...>:name:</span>`,
which the apps show as the emoji; anything else, and anything in code, stays as written. (Custom
emoji: tests/uploads/test_custom_emoji.py.)"""

import pytest
from django.contrib.staticfiles import finders

from tests.api import api_for, assert_success


def span(code: str, name: str) -> str:
    title = name.replace("_", " ")
    return f'<span aria-label="{title}" class="emoji emoji-{code}" role="img" title="{title}">:{name}:</span>'


@pytest.fixture
def design(make_stream, member):
    return make_stream("design", member)


def rendered(user, content: str) -> str:
    body = api_for(user).post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": content})
    message_id = assert_success(body)["id"]
    return assert_success(api_for(user).get(f"/messages/{message_id}"))["message"]["content"]


def test_emoji_names_and_characters_are_marked_as_zulip_marks_them(design, member):
    html = rendered(member, "nice :smile: and :+1: and 😀, **:heart:**")
    assert html == (
        f"<p>nice {span('1f642', 'smile')} and {span('1f44d', '+1')} and {span('1f600', 'grinning')}, "
        f"<strong>{span('2764', 'heart')}</strong></p>"
    )


def test_zulips_own_emoji_is_its_picture_served_where_the_apps_look_for_it(design, member):
    """As Zulip's Markdown writes `:zulip:` (the mobile-app QA pass: it stayed text); the mobile app
    draws it, and reactions with it, from this path on the server."""
    url = "/static/generated/emoji/images/emoji/unicode/zulip.png"
    assert (
        rendered(member, "made with :zulip:")
        == f'<p>made with <img alt=":zulip:" class="emoji" src="{url}" title="zulip"></p>'
    )
    assert finders.find(url.removeprefix("/static/")) is not None
    # An emoji, not a picture: has:image leaves it out.
    found = api_for(member).get(
        "/messages", {"anchor": "newest", "num_before": 1, "num_after": 0, "narrow": '[["has", "image"]]'}
    )
    assert assert_success(found)["messages"] == []


def test_a_character_with_a_variation_selector_or_several_code_points_has_one_code(design, member):
    assert rendered(member, "❤️ 🇫🇷") == f"<p>{span('2764', 'heart')} {span('1f1eb-1f1f7', 'flag_france')}</p>"


def test_only_the_emoji_zulip_names_are_emoji(design, member):
    """Zulip's table: its keycaps and symbols (codes in four digits at least), no skin tones."""
    assert rendered(member, "1️⃣ ©️ 👍🏿 :thumbs_up_dark_skin_tone:") == (
        f"<p>{span('0031-20e3', 'one')} {span('00a9', 'copyright')} 👍🏿 :thumbs_up_dark_skin_tone:</p>"
    )


@pytest.mark.parametrize(
    ("content", "html"),
    [
        ("at 10:30:00 :no_such_emoji: ::", "<p>at 10:30:00 :no_such_emoji: ::</p>"),
        # shown as text unless followed by FE0F, as Zulip leaves them
        ("© ™ ↔ and a lone ❤", "<p>© ™ ↔ and a lone ❤</p>"),
        ("`:smile: 😀`", "<p><code>:smile: 😀</code></p>"),
    ],
)
def test_what_is_not_an_emoji_or_is_code_stays_as_written(design, member, content, html):
    assert rendered(member, content) == html


def test_an_emoji_in_a_code_block_stays_as_written(design, member):
    assert (
        rendered(member, "```\n:smile: 😀\n```")
        == '<div class="codehilite"><pre><span></span><code>:smile: 😀\n</code></pre></div>'
    )


def test_a_mentioned_name_is_never_an_emoji(design, member, admin):
    admin.full_name = ":smile:"
    admin.save(update_fields=["full_name"])
    html = rendered(member, "@**:smile:** :smile:")
    mention = f'<span class="user-mention" data-user-id="{admin.id}">@:smile:</span>'
    assert html == f"<p>{mention} {span('1f642', 'smile')}</p>"


def test_an_edit_marks_the_new_contents_emoji(design, member):
    body = api_for(member).post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": "hi"})
    message_id = assert_success(body)["id"]
    assert_success(api_for(member).patch(f"/messages/{message_id}", {"content": "bye :wave:"}))
    message = assert_success(api_for(member).get(f"/messages/{message_id}"))["message"]
    assert message["content"] == f"<p>bye {span('1f44b', 'wave')}</p>"
