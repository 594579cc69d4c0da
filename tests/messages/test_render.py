"""POST /messages/render: a client's preview of a message's HTML, as sending would render it,
sending nothing."""

import pytest

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
