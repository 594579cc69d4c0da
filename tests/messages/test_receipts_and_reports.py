"""GET /messages/{id}/read_receipts (who read a message, as Zulip tells it) and POST
/messages/{id}/report, which answers as Zulip answers in an organization without a moderation
request channel (Parley's, for now) after checking the request, and changes nothing."""

import pytest

from tests.api import api_for, assert_error, assert_success
from tests.messages.conftest import db_state


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def read(user, message_id):
    assert_success(api_for(user).post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "read"}))


def receipts(user, message_id):
    return assert_success(api_for(user).get(f"/messages/{message_id}/read_receipts"))["user_ids"]


def test_read_receipts_list_who_read_the_message(make_stream, send, member, admin, moderator, bot):
    stream = make_stream("review", member, admin, moderator, bot)
    message_id = send(member, stream)
    assert receipts(admin, message_id) == []
    read(moderator, message_id)
    read(bot, message_id)
    assert receipts(admin, message_id) == sorted([moderator.id, bot.id])
    # Never the sender (their copy is read), nor those who keep their reads to themselves.
    assert_success(api_for(moderator).patch("/settings", {"send_read_receipts": False}))
    assert receipts(admin, message_id) == [bot.id]
    # Nor those the requester muted.
    assert_success(api_for(admin).post(f"/users/me/muted_users/{bot.id}"))
    assert receipts(admin, message_id) == []


def test_muters_of_the_requester_are_not_listed(design, send, member, admin):
    message_id = send(member, design)
    read(admin, message_id)
    assert receipts(member, message_id) == [admin.id]
    assert_success(api_for(admin).post(f"/users/me/muted_users/{member.id}"))
    assert receipts(member, message_id) == []


def test_read_receipts_can_be_disabled(design, send, member, admin, foreign_user):
    message_id = send(member, design)
    assert_success(api_for(admin).patch("/realm", {"enable_read_receipts": False}))
    assert_error(api_for(admin).get(f"/messages/{message_id}/read_receipts"), 400, "BAD_REQUEST",
                 "Read receipts are disabled in this organization.")  # fmt: skip
    assert_error(api_for(foreign_user).get(f"/messages/{message_id}/read_receipts"), 400, "BAD_REQUEST",
                 "Invalid message(s)")  # fmt: skip


def test_reports_need_a_moderation_channel(design, send, member, admin):
    message_id = send(member, design)
    before = db_state()
    assert_error(api_for(admin).post(f"/messages/{message_id}/report", {"report_type": "spam"}), 400, "BAD_REQUEST",
                 "Moderation request channel must be specified to enable message reporting.")  # fmt: skip
    assert_error(api_for(admin).post(f"/messages/{message_id}/report", {"report_type": "lies"}), 400,
                 "REQUEST_VARIABLE_INVALID")  # fmt: skip
    assert db_state() == before
