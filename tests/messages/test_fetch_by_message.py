"""Two ways GET /messages finds messages besides a range in a narrow: the `with` narrow operator
(Zulip's feature level 271: `with:ID` narrows to the conversation message ID is in now, in place of
the narrow's own channel, topic or dm terms, so that a link to a message still finds it after it
moved), and `message_ids` (feature level 300: those of the messages in the narrow)."""

import pytest

from tests.api import api_for, assert_error, assert_success
from tests.messages.conftest import message_ids
from tests.messages.test_edit_message import edit


def w(message_id) -> dict:
    return {"operator": "with", "operand": message_id}


def bad(user, narrow, msg) -> None:
    query = {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": narrow}
    assert_error(api_for(user).get("/messages", query), 400, "BAD_NARROW", f"Invalid narrow operator: {msg}")


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def test_with_narrows_to_the_messages_topic_wherever_it_moved(design, make_stream, send, member, admin):
    lunch = [send(member, design, topic="lunch") for _ in range(2)]
    send(member, design, topic="other")
    send(member, [admin])
    assert message_ids(admin, [w(lunch[0])]) == lunch
    old_link = [{"operator": "channel", "operand": "design"}, {"operator": "topic", "operand": "lunch"}, w(lunch[0])]
    assert_success(
        edit(member, lunch[0], topic="food", propagate_mode="change_all", send_notification_to_new_thread="false")
    )
    assert message_ids(admin, old_link) == lunch  # the link to the topic's old name still finds it
    assert message_ids(admin, [w(str(lunch[1])), {"operator": "sender", "operand": member.id}]) == lunch


def test_with_narrows_to_the_direct_messages_conversation(design, send, member, admin, moderator):
    theirs = send(admin, [member])
    mine = send(member, [admin])
    send(member, [admin, moderator])
    send(member, design)
    assert message_ids(member, [w(theirs)]) == [theirs, mine]
    assert message_ids(admin, [w(mine)]) == [theirs, mine]
    group = send(moderator, [member, admin])
    assert message_ids(member, [w(group)])[-1] == group
    assert theirs not in message_ids(member, [w(group)])


def test_a_message_one_cannot_see_leaves_a_conversation_narrow_as_it_is(design, make_stream, send, member, admin):
    secret = make_stream("secret", admin, private=True)
    hidden = send(admin, secret)
    lunch = send(member, design, topic="lunch")
    conversation = [{"operator": "channel", "operand": "design"}, {"operator": "topic", "operand": "lunch"}]
    assert message_ids(member, [*conversation, w(hidden)]) == [lunch]
    assert message_ids(member, [*conversation, w(999999)]) == [lunch]
    bad(member, [w(hidden)], "Invalid 'with' operator")
    bad(member, [w("x")], "Invalid 'with' operator")
    for beyond in (2**63, str(2**63), 10**30):  # no message id: no database is asked (SQLite's int64)
        bad(member, [w(beyond)], "Invalid 'with' operator")
        assert message_ids(member, [*conversation, w(beyond)]) == [lunch]
    bad(member, [w(lunch), w(lunch)], "Duplicate 'with' operators.")


# --- GET /messages with message_ids (Zulip's feature level 300) -------------------------------------


def by_ids(user, ids, narrow=(), **params):
    return api_for(user).get("/messages", {"message_ids": ids, "narrow": list(narrow), **params})


def test_message_ids_fetch_those_in_the_narrow_one_may_see(design, make_stream, send, member, admin):
    secret = make_stream("secret", admin, private=True)
    hidden = send(admin, secret)
    lunch, other = send(member, design, topic="lunch"), send(member, design, topic="other")
    body = assert_success(by_ids(member, [other, hidden, lunch, 999999]))
    assert [m["id"] for m in body["messages"]] == [lunch, other]
    assert (body["found_anchor"], body["found_oldest"], body["found_newest"], body["history_limited"]) == (
        False, False, False, False,
    )  # fmt: skip
    assert "anchor" not in body
    topic = [{"operator": "topic", "operand": "lunch"}]
    assert [m["id"] for m in assert_success(by_ids(member, [lunch, other], topic))["messages"]] == [lunch]


@pytest.mark.parametrize("extra", [{"anchor": "newest"}, {"num_before": 5}, {"use_first_unread_anchor": "true"}])
def test_message_ids_come_without_a_range(design, send, member, extra):
    message_id = send(member, design)
    body = assert_error(by_ids(member, [message_id], **extra), 400, "BAD_REQUEST")
    assert body["msg"].startswith("Unsupported parameter combination: num_before, num_after, anchor, message_ids")


@pytest.mark.parametrize("ids", ["x", '[1, "a"]', "{}", "[-1]"])
def test_malformed_message_ids_are_refused(design, member, ids):
    response = api_for(member).get("/messages", {"message_ids": ids})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID")
