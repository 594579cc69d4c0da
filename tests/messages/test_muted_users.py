"""Muted users (POST and DELETE /users/me/muted_users/{muted_user_id}): the spec's state table,
the muted user's messages marked read (existing ones at once, new ones on arrival), and the
update_message_flags and muted_users events."""

import time

import pytest

from apps.messages.models import MutedUser, UserMessage
from apps.users.actions.activation import do_deactivate_user
from tests.api import ApiClient, assert_error, assert_success
from tests.messages.conftest import api, db_state, flags_of

READ = UserMessage.READ


def mute(user, target_id):
    return api(user).post(f"/users/me/muted_users/{target_id}")


def unmute(user, target_id):
    return api(user).delete(f"/users/me/muted_users/{target_id}")


def refused(response, msg, before):
    assert_error(response, 400, "BAD_REQUEST", msg)
    assert db_state() == before


def muted_ids(user) -> list[int]:
    state = assert_success(ApiClient(user).post("/register", {"fetch_event_types": ["muted_users"]}))
    return [row["id"] for row in state["muted_users"]]


@pytest.fixture
def design(make_stream, member, admin, owner):
    return make_stream("design", member, admin, owner)


# --- the state table ---------------------------------------------------------------------------------


def test_mute_user_succeeds_and_lists_them(member, admin):
    before = int(time.time())
    assert_success(mute(admin, member.id))
    row = MutedUser.objects.get(user=admin)
    assert row.muted_user_id == member.id
    state = assert_success(ApiClient(admin).post("/register", {"fetch_event_types": ["muted_users"]}))
    [entry] = state["muted_users"]
    assert entry["id"] == member.id
    assert before <= entry["timestamp"] <= int(time.time())
    assert muted_ids(member) == []  # muting is one-way


def test_mute_self_is_refused(admin):
    before = db_state()
    refused(mute(admin, admin.id), "Cannot mute self", before)


def test_mute_unknown_or_foreign_user_is_refused(admin, foreign_user):
    before = db_state()
    refused(mute(admin, 987654321), "No such user", before)
    refused(mute(admin, foreign_user.id), "No such user", before)


def test_mute_twice_is_refused(admin, member):
    assert_success(mute(admin, member.id))
    before = db_state()
    refused(mute(admin, member.id), "User already muted", before)


def test_bots_can_be_muted(admin, bot):
    assert_success(mute(admin, bot.id))
    assert muted_ids(admin) == [bot.id]


def test_deactivated_users_can_be_muted_and_stay_listed(admin, member, moderator):
    do_deactivate_user(member, acting_user=None)
    assert_success(mute(admin, member.id))
    assert_success(mute(admin, moderator.id))
    do_deactivate_user(moderator, acting_user=None)
    # Listed, so that clients can show them and unmute them.
    assert muted_ids(admin) == [member.id, moderator.id]
    assert_success(unmute(admin, member.id))
    assert muted_ids(admin) == [moderator.id]


def test_unmute_user(admin, member):
    assert_success(mute(admin, member.id))
    assert_success(unmute(admin, member.id))
    assert not MutedUser.objects.exists()
    assert muted_ids(admin) == []


def test_unmute_user_not_muted_is_refused(admin, member, owner):
    assert_success(mute(owner, member.id))  # someone else's mute is not admin's
    before = db_state()
    refused(unmute(admin, member.id), "User is not muted", before)
    refused(unmute(admin, 987654321), "No such user", before)


def test_mute_unauthenticated_is_refused(anonymous, member):
    before = db_state()
    assert_error(anonymous.post(f"/users/me/muted_users/{member.id}"), 401, "UNAUTHORIZED")
    assert db_state() == before


# --- read marking ------------------------------------------------------------------------------------


def test_muting_marks_existing_messages_from_them_read(design, send, member, admin, owner):
    in_channel = send(member, design, "from member")
    direct = send(member, [admin], "psst")
    group = send(member, [admin, owner], "all of us")
    other = send(owner, design, "from owner")
    assert_success(mute(admin, member.id))
    assert [flags_of(admin, m) for m in (in_channel, direct, group)] == [READ, READ, READ]
    assert flags_of(admin, other) == 0
    # Only the requester's copies change.
    assert (flags_of(owner, in_channel), flags_of(owner, group)) == (0, 0)


def test_muting_keeps_other_flags(design, send, member, admin):
    message_id = send(member, design, "@**Adam Admin** hi")
    assert_success(ApiClient(admin).post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "starred"}))
    assert_success(mute(admin, member.id))
    assert flags_of(admin, message_id) == READ | UserMessage.STARRED | UserMessage.MENTIONED


def test_new_messages_from_a_muted_user_arrive_read(design, send, member, admin, owner):
    assert_success(mute(admin, member.id))
    in_channel = send(member, design, "@**Adam Admin** still there?")
    direct = send(member, [admin], "hello?")
    assert (flags_of(admin, in_channel), flags_of(admin, direct)) == (READ | UserMessage.MENTIONED, READ)
    assert flags_of(owner, in_channel) == 0
    state = assert_success(
        ApiClient(admin).post("/register", {"fetch_event_types": ["message", "update_message_flags"]})
    )
    assert state["unread_msgs"]["count"] == 0


def test_after_unmuting_new_messages_arrive_unread(design, send, member, admin):
    assert_success(mute(admin, member.id))
    assert_success(unmute(admin, member.id))
    message_id = send(member, design, "back")
    assert flags_of(admin, message_id) == 0


def test_a_refused_mute_marks_nothing_read(design, send, member, admin):
    message_id = send(member, design, "x")
    assert_success(mute(admin, member.id))
    assert_success(ApiClient(admin).post("/messages/flags", {"messages": [message_id], "op": "remove", "flag": "read"}))
    assert_error(mute(admin, member.id), 400, "BAD_REQUEST", "User already muted")
    assert flags_of(admin, message_id) == 0


# --- events --------------------------------------------------------------------------------------------


def test_muting_events_in_order(capture_events, design, send, member, admin, bot):
    old = send(member, design, "before")
    older_dm = send(member, [admin], "psst")
    with capture_events(admin, member, event_types=["update_message_flags", "muted_users", "message"]) as received:
        assert_success(mute(admin, bot.id))  # nothing of theirs to mark read
        assert_success(mute(admin, member.id))
        new = send(member, design, "after")
        assert_success(unmute(admin, bot.id))
    muted_bot, flags, muted_both, message, unmuted = received[admin.id]
    assert muted_bot["type"] == "muted_users"
    assert [row["id"] for row in muted_bot["muted_users"]] == [bot.id]
    assert flags == {
        "type": "update_message_flags",
        "op": "add",
        "operation": "add",
        "flag": "read",
        "messages": sorted([old, older_dm]),
        "all": False,
    }
    assert muted_both["type"] == "muted_users"
    assert [row["id"] for row in muted_both["muted_users"]] == [bot.id, member.id]
    assert all(isinstance(row["timestamp"], int) for row in muted_both["muted_users"])
    # The muted user hears nothing of it (only of their own message).
    assert [event["type"] for event in received[member.id]] == ["message"]
    assert (message["type"], message["message"]["id"], message["flags"]) == ("message", new, ["read"])
    assert [row["id"] for row in unmuted["muted_users"]] == [member.id]


def test_refused_mutes_send_nothing(capture_events, member, admin):
    with capture_events(admin, event_types=["update_message_flags", "muted_users"]) as received:
        assert_error(mute(admin, admin.id), 400, "BAD_REQUEST", "Cannot mute self")
        assert_error(unmute(admin, member.id), 400, "BAD_REQUEST", "User is not muted")
    assert received[admin.id] == []
