"""`#**channel**`, `#**channel>topic**` and `#**channel>topic@id**` link a channel, a topic or a
message in the rendered content, as Zulip's Markdown does (the Notification Bot's notices write
them); a channel the author cannot know exists, an archived one, an unknown name or a link inside
code is not linked."""

import pytest

from apps.messages.models import Message
from apps.subscriptions.actions.channels import do_deactivate_stream
from tests.api import assert_success
from tests.messages.conftest import api, post_message


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def rendered(user, content, to="design") -> str:
    message_id = assert_success(post_message(user, type="stream", to=to, topic="t", content=content))["id"]
    return Message.objects.get(id=message_id).rendered_content


def test_a_channel_and_a_topic_are_linked(design, make_stream, member, admin):
    plans = make_stream("Team plans", member)
    html = rendered(member, "see #**team PLANS** and #**Team plans>Q3 review.draft**")
    assert html == (
        f'<p>see <a class="stream" data-stream-id="{plans.id}" href="/#narrow/channel/{plans.id}-Team-plans">'
        f"#Team plans</a> and "
        f'<a class="stream-topic" data-stream-id="{plans.id}" '
        f'href="/#narrow/channel/{plans.id}-Team-plans/topic/Q3.20review.2Edraft">'
        "#Team plans &gt; Q3 review.draft</a></p>"
    )


def test_what_is_not_linked_stays_as_written(design, make_stream, member, admin, owner):
    make_stream("secret", owner, private=True)
    old = make_stream("old", member)
    do_deactivate_stream(old, acting_user=admin)
    html = rendered(member, "#**secret** #**old** #**nowhere** #**nowhere>** `#**design**`")
    assert "<a " not in html
    # Left to Markdown, as a mention of nobody is: bold.
    assert (
        "#<strong>secret</strong> #<strong>old</strong> #<strong>nowhere</strong> #<strong>nowhere&gt;</strong>" in html
    )
    assert "<code>#**design**</code>" in html


def test_the_empty_topic_and_its_messages_are_linked(design, member):
    """As Zulip's since the empty topic (feature level 346), which its Notification Bot writes of a
    topic moved from "general chat" (the newcomer QA pass: shown as bold text, no link)."""
    html = rendered(member, "#**design>** and #**design>@6**")
    assert html == (
        f'<p><a class="stream-topic" data-stream-id="{design.id}" href="/#narrow/channel/{design.id}-design/topic/">'
        f"#design &gt; <em>general chat</em></a> and "
        f'<a class="message-link" href="/#narrow/channel/{design.id}-design/topic//near/6">'
        "#design &gt; <em>general chat</em> @ 💬</a></p>"
    )


def test_a_private_channel_is_linked_for_its_subscribers(make_stream, design, owner, admin):
    secret = make_stream("secret", owner, admin, private=True)
    assert f'data-stream-id="{secret.id}"' in rendered(admin, "#**secret>plans**")


def test_an_edit_links_too(design, make_stream, member):
    plans = make_stream("plans", member)
    message_id = assert_success(post_message(member, type="stream", to="design", topic="t", content="x"))["id"]
    assert_success(api(member).patch(f"/messages/{message_id}", {"content": "now #**plans**"}))
    assert f'data-stream-id="{plans.id}"' in Message.objects.get(id=message_id).rendered_content


def test_a_message_is_linked_in_its_topic(design, send, member):
    message_id = send(member, design, topic="plans")
    html = rendered(member, f"#**design>plans@{message_id}**")
    assert html == (
        f'<p><a class="message-link" href="/#narrow/channel/{design.id}-design/topic/plans/near/{message_id}">'
        "#design &gt; plans @ 💬</a></p>"
    )
