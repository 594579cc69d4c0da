"""A message is read, changed and told of as Zulip's has_message_access allows now, not as it was
when the user received it: a private channel's messages take content access to the channel (a
guest's, a public one's too), and an archived channel's messages are read-only."""

import pytest

from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions
from tests.api import ApiClient, assert_error, assert_success
from tests.messages.conftest import db_state

INVALID = "Invalid message(s)"


def invalid(response) -> None:
    assert_error(response, 400, "BAD_REQUEST", INVALID)


def changes(api: ApiClient, message_id: int) -> list:
    """Every request that changes a message (or tells others it is being changed)."""
    return [
        lambda: api.patch(f"/messages/{message_id}", {"content": "changed"}),
        lambda: api.patch(f"/messages/{message_id}", {"topic": "moved"}),
        lambda: api.post(f"/messages/{message_id}/reactions", {"emoji_name": "smile"}),
        lambda: api.delete(f"/messages/{message_id}/reactions", {"emoji_name": "smile"}),
        lambda: api.post("/submessage", {"message_id": message_id, "msg_type": "widget", "content": "{}"}),
        lambda: api.post(f"/messages/{message_id}/typing", {"op": "start"}),
        lambda: api.delete(f"/messages/{message_id}"),
    ]


@pytest.mark.parametrize("history_public", [True, False])
def test_a_removed_subscriber_can_neither_read_nor_change_a_private_channels_message(
    make_stream, send, realm, owner, member, history_public
):
    secret = make_stream("secret", owner, member, private=True, history_public=history_public)
    mine = send(member, secret, "mine")
    bulk_remove_subscriptions(realm, [member], [secret], acting_user=None)
    api = ApiClient(member)
    before = db_state()
    invalid(api.get(f"/messages/{mine}"))
    for change in changes(api, mine):
        invalid(change())
    assert db_state() == before


def test_a_guest_removed_from_a_public_channel_loses_its_messages(make_stream, send, realm, member, guest):
    design = make_stream("design", member, guest)
    theirs = send(guest, design, "from the guest")
    bulk_remove_subscriptions(realm, [guest], [design], acting_user=None)
    invalid(ApiClient(guest).get(f"/messages/{theirs}"))
    invalid(ApiClient(guest).post(f"/messages/{theirs}/reactions", {"emoji_name": "smile"}))
    assert_success(ApiClient(member).post(f"/messages/{theirs}/reactions", {"emoji_name": "smile"}))


def test_an_archived_channels_messages_are_read_only(make_stream, send, admin, member):
    design = make_stream("design", member, admin)
    mine = send(member, design, "mine")
    do_deactivate_stream(design, acting_user=admin)
    api = ApiClient(member)
    assert assert_success(api.get(f"/messages/{mine}"))["message"]["id"] == mine
    before = db_state()
    for change in changes(api, mine):
        invalid(change())
    assert db_state() == before


def test_changes_are_told_to_those_who_may_read_the_message_now(
    make_stream, send, realm, owner, member, moderator, guest, capture_events
):
    secret = make_stream("secret", owner, member, private=True, history_public=True)
    design = make_stream("design", owner, member, moderator, guest)
    in_secret, in_design = send(owner, secret, "s"), send(owner, design, "d")
    bulk_remove_subscriptions(realm, [member], [secret], acting_user=None)
    bulk_remove_subscriptions(realm, [moderator, guest], [design], acting_user=None)
    with capture_events(member, moderator, guest, event_types=["update_message"]) as received:
        for message_id in (in_secret, in_design):
            assert_success(ApiClient(owner).patch(f"/messages/{message_id}", {"content": "edited"}))
    told = {user_id: [e["message_id"] for e in events] for user_id, events in received.items()}
    # The member left the private channel; the moderator left the public one but may read it still
    # (their rows: Zulip tells them); the guest who left the public one may not.
    assert told == {member.id: [in_design], moderator.id: [in_design], guest.id: []}
