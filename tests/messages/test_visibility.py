"""Who sees which messages: private channels, history not public to subscribers, former
subscribers, other organizations and guests, through GET /messages, GET /messages/{id},
GET /messages/matches_narrow and POST /messages/flags. A message the user may not see answers
exactly like one that does not exist, and nothing about it leaks."""

import pytest

from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions, bulk_remove_subscriptions
from tests.api import ApiClient, assert_error, assert_success
from tests.messages.conftest import db_state, flags_of, get_messages, message_ids

MISSING = 987654321


def single(user, message_id):
    return ApiClient(user).get(f"/messages/{message_id}")


def matches(user, ids, narrow=()):
    body = assert_success(ApiClient(user).get("/messages/matches_narrow", {"msg_ids": ids, "narrow": list(narrow)}))
    return body["messages"]


def star(user, ids):
    return ApiClient(user).post("/messages/flags", {"messages": ids, "op": "add", "flag": "starred"})


def assert_invisible(user, message_id):
    """The message answers like one that never existed, on every read path, and cannot be flagged."""
    missing = single(user, MISSING).json()
    assert single(user, message_id).json() == missing
    assert_error(single(user, message_id), 400, "BAD_REQUEST", "Invalid message(s)")
    assert matches(user, [message_id, MISSING]) == {}
    assert matches(user, [message_id], [["search", "secret"]]) == {}
    assert message_id not in message_ids(user)
    before = db_state()
    assert star(user, [message_id]).json() == star(user, [MISSING]).json()
    assert_error(star(user, [message_id]), 400, "BAD_REQUEST", "Invalid message(s)")
    assert db_state() == before


def assert_visible(user, message_id):
    assert assert_success(single(user, message_id))["message"]["id"] == message_id
    assert list(matches(user, [message_id])) == [str(message_id)]


@pytest.fixture
def secret(make_stream, owner, member):
    """A private channel (history not public to subscribers) of owner and member."""
    return make_stream("secret", owner, member, private=True)


def test_private_channel_messages_are_invisible_to_non_subscribers(secret, send, owner, moderator, guest):
    message_id = send(owner, secret, "secret plans")
    for outsider in (moderator, guest):
        assert_invisible(outsider, message_id)
        response = ApiClient(outsider).get(
            "/messages", {"anchor": "newest", "num_before": 10, "narrow": [["channel", "secret"]]}
        )
        assert_error(response, 400, "BAD_NARROW", "Invalid narrow operator: unknown channel secret")


def test_administrator_sees_private_channel_but_not_its_messages(secret, send, owner, admin):
    message_id = send(owner, secret, "secret plans")
    assert_invisible(admin, message_id)
    # The channel exists for an administrator, but its content is its subscribers'.
    assert message_ids(admin, [["channel", "secret"]]) == []


def test_private_channel_messages_are_visible_to_subscribers(secret, send, owner, member):
    message_id = send(owner, secret, "secret plans")
    assert_visible(member, message_id)
    assert message_ids(member, [["channel", "secret"]]) == [message_id]


def test_history_not_public_hides_messages_sent_before_joining(secret, send, realm, owner, moderator):
    before = send(owner, secret, "secret: before you came")
    bulk_add_subscriptions(realm, [secret], [moderator], acting_user=None)
    after = send(owner, secret, "secret: after")
    assert_invisible(moderator, before)
    assert_visible(moderator, after)
    assert message_ids(moderator, [["channel", "secret"]]) == [after]
    assert message_ids(moderator, [["channel", "secret"], ["search", "secret"]]) == [after]


def test_history_public_to_subscribers_of_private_channel_shows_earlier_messages(
    make_stream, send, realm, owner, moderator
):
    archive = make_stream("archive", owner, private=True, history_public=True)
    before = send(owner, archive, "secret: old news")
    assert_invisible(moderator, before)
    bulk_add_subscriptions(realm, [archive], [moderator], acting_user=None)
    assert_visible(moderator, before)
    [shape] = get_messages(moderator, [["channel", "archive"]])["messages"]
    assert (shape["id"], shape["flags"]) == (before, ["read", "historical"])
    assert_success(star(moderator, [before]))
    assert flags_of(moderator, before) is not None


def test_former_subscriber_keeps_the_messages_received_in_their_lists_only(secret, send, realm, owner, member):
    received = send(owner, secret, "secret: yours")
    bulk_remove_subscriptions(realm, [member], [secret], acting_user=None)
    later = send(owner, secret, "secret: after you left")
    assert_invisible(member, later)
    # They can still narrow to the channel they were in, and see what they received there (as in
    # Zulip, whose lists read the user's rows) ...
    assert message_ids(member, [["channel", "secret"]]) == [received]
    assert message_ids(member, [["channel", secret.id], ["topic", "lunch"]]) == [received]
    # ... but the message itself is no longer theirs to read, edit or react to (Zulip's
    # has_message_access: a private channel's messages take a subscription now).
    for response in (
        single(member, received),
        ApiClient(member).get(f"/messages/{received}/history"),
        ApiClient(member).post(f"/messages/{received}/reactions", {"emoji_name": "smile"}),
    ):
        assert_error(response, 400, "BAD_REQUEST", "Invalid message(s)")


def test_public_channel_history_is_visible_to_every_member_but_guests(make_stream, send, member, moderator, guest):
    design = make_stream("design", member)
    message_id = send(member, design, "secret recipe")
    assert_visible(moderator, message_id)  # not subscribed: the channel's history
    assert_invisible(guest, message_id)


def test_guest_subscribed_to_public_channel_sees_its_history(make_stream, send, realm, member, guest):
    design = make_stream("design", member)
    before = send(member, design, "secret recipe")
    bulk_add_subscriptions(realm, [design], [guest], acting_user=None)
    assert_visible(guest, before)
    assert message_ids(guest, [["channel", "design"]]) == [before]


def test_direct_messages_are_invisible_to_others(send, member, admin, owner):
    message_id = send(member, [admin], "secret")
    assert_invisible(owner, message_id)
    assert_visible(admin, message_id)
    group = send(member, [admin, owner], "secret group")
    assert_visible(owner, group)


def test_other_organizations_messages_do_not_exist(make_stream, send, other_realm, foreign_user, member, admin):
    theirs = make_stream("design", foreign_user, in_realm=other_realm)
    foreign = send(foreign_user, theirs, "secret elsewhere")
    assert_invisible(member, foreign)
    assert_invisible(admin, foreign)
    # Their channel is not found by id, their people not by id or email.
    api = ApiClient(admin)
    for narrow in (
        [{"operator": "channel", "operand": theirs.id}],
        [{"operator": "sender", "operand": foreign_user.id}],
    ):
        response = api.get("/messages", {"anchor": "newest", "num_before": 10, "narrow": narrow})
        assert response.json()["code"] == "BAD_NARROW"
    # A channel of the same name in this organization is a different one.
    ours = make_stream("design", member)
    mine = send(member, ours, "secret here")
    assert message_ids(admin, [["channel", "design"]]) == [mine]
    assert message_ids(foreign_user, [["channel", "design"]]) == [foreign]


def test_flags_on_a_mix_of_visible_and_invisible_ids_change_nothing(secret, send, make_stream, owner, member, admin):
    hidden = send(owner, secret, "secret")
    design = make_stream("design", member, admin)
    mine = send(member, design, "visible")
    before = db_state()
    assert_error(star(admin, [mine, hidden]), 400, "BAD_REQUEST", "Invalid message(s)")
    assert db_state() == before
    assert flags_of(admin, mine) == 0


def test_matches_narrow_leaves_out_invisible_ids_among_visible_ones(secret, send, make_stream, owner, member, admin):
    hidden = send(owner, secret, "secret one")
    design = make_stream("design", member, admin)
    shown = send(member, design, "secret two")
    result = matches(admin, [hidden, shown, MISSING], [["search", "secret"]])
    assert list(result) == [str(shown)]


def test_get_messages_never_returns_invisible_messages_whatever_the_anchor(secret, send, make_stream, owner, admin):
    hidden = send(owner, secret, "secret")
    body = get_messages(admin, anchor=str(hidden), num_before=5, num_after=5)
    assert (body["messages"], body["found_anchor"]) == ([], False)
    assert get_messages(admin, [["id", hidden]])["messages"] == []
