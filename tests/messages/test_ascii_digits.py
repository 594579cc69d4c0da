"""Ids written as text in the messages API (an anchor, narrow operands, a mention's `|id`) are read
in ASCII digits only: Python's int(), str.isdecimal() and `\\d` also read other scripts' digits, which
gave one id many spellings."""

import pytest

from apps.messages.models import Message, UserMessage
from tests.api import ApiClient, assert_error, assert_success
from tests.messages.conftest import flags_of, message_ids, post_message


def arabic_indic(number: int) -> str:
    """`number` in Arabic-Indic digits."""
    return "".join(chr(0x660 + int(digit)) for digit in str(number))


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def test_an_anchor_in_other_digits_is_invalid(design, send, member):
    message_id = send(member, design)
    assert message_ids(member, anchor=str(message_id), num_before=0, num_after=1) == [message_id]
    response = ApiClient(member).get("/messages", {"anchor": arabic_indic(message_id), "num_before": 0, "num_after": 1})
    assert_error(response, 400, "BAD_REQUEST", "Invalid anchor")


def test_a_message_id_operand_in_other_digits_is_invalid(design, send, member):
    message_id = send(member, design)
    assert message_ids(member, [["id", str(message_id)]]) == [message_id]
    response = ApiClient(member).get(
        "/messages", {"anchor": "newest", "num_before": 10, "narrow": [["id", arabic_indic(message_id)]]}
    )
    assert_error(response, 400, "BAD_NARROW", "Invalid narrow operator: invalid message ID")


@pytest.mark.parametrize("operator", ["channel", "sender", "dm"])
def test_channel_and_user_operands_in_other_digits_name_nothing(design, send, member, admin, operator):
    send(admin, design)
    send(admin, [member])
    target = {"channel": design.id, "sender": admin.id, "dm": admin.id}[operator]
    assert message_ids(member, [[operator, str(target)]])
    response = ApiClient(member).get(
        "/messages", {"anchor": "newest", "num_before": 10, "narrow": [[operator, arabic_indic(target)]]}
    )
    assert response.status_code == 400
    assert response.json()["code"] == "BAD_NARROW"


def test_a_mention_with_an_id_in_other_digits_mentions_nobody(design, member, admin):
    content = f"@**{admin.full_name}|{arabic_indic(admin.id)}**"
    message_id = assert_success(post_message(member, type="stream", to="design", topic="t", content=content))["id"]
    assert flags_of(admin, message_id) == 0
    assert "user-mention" not in Message.objects.get(id=message_id).rendered_content
    content = f"@**{admin.full_name}|{admin.id}**"
    message_id = assert_success(post_message(member, type="stream", to="design", topic="t", content=content))["id"]
    assert flags_of(admin, message_id) == UserMessage.MENTIONED
