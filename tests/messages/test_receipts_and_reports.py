"""GET /messages/{id}/read_receipts and POST /messages/{id}/report answer as Zulip answers in an
organization without read receipts and without a moderation request channel (Parley's, for now),
after checking the request; they change nothing."""

import pytest

from tests.api import api_for, assert_error
from tests.messages.conftest import db_state


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def test_read_receipts_are_disabled(design, send, member, admin, foreign_user):
    message_id = send(member, design)
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
