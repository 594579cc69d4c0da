"""The channel's own move permissions (Zulip's feature level 396): can_move_messages_out_of_channel_group
lets its members move the channel's messages to other channels, can_move_messages_within_channel_group
to other topics (in the channel they leave or the one they go to), besides the organization's
can_move_messages_between_channels_group / _between_topics_group; the channel's administrators and
the organization's administrators may too. Set over PATCH /streams/{id} and at creation."""

import json

import pytest

from apps.groups.models import SystemGroups
from apps.subscriptions.models import Stream
from tests.api import api_for, assert_success
from tests.messages.test_edit_message import edit, refused, set_group, topic_ids


@pytest.fixture
def design(make_stream, member, admin, moderator, owner):
    return make_stream("design", member, admin, moderator, owner)


@pytest.fixture
def kitchen(make_stream, member, admin, moderator, owner):
    return make_stream("kitchen", member, admin, moderator, owner)


@pytest.fixture
def locked_down(realm):
    """Nobody may move messages by the organization's settings."""
    for name in ("can_move_messages_between_channels_group", "can_move_messages_between_topics_group"):
        set_group(realm, name, SystemGroups.NOBODY)


def set_channel_group(owner, stream, name, group_id) -> None:
    assert_success(api_for(owner).patch(f"/streams/{stream.id}", {name: f'{{"new": {group_id}}}'}))


def test_out_of_channel_group_lets_its_members_move_to_another_channel(
    locked_down, design, kitchen, send, member, owner, sys_groups, capture_events
):
    message_id = send(member, design)
    refused(member, message_id, "You don't have permission to move this message", stream_id=kitchen.id)
    with capture_events(member) as received:
        set_channel_group(owner, design, "can_move_messages_out_of_channel_group", sys_groups[SystemGroups.MEMBERS].id)
    [update] = [e for e in received[member.id] if e["type"] == "stream" and e["op"] == "update"]
    assert (update["property"], update["value"]) == (
        "can_move_messages_out_of_channel_group",
        sys_groups[SystemGroups.MEMBERS].id,
    )
    assert_success(edit(member, message_id, stream_id=kitchen.id, send_notification_to_new_thread="false"))
    assert topic_ids(kitchen, "lunch") == [message_id]
    # The destination's setting does not count: back out of kitchen is refused.
    refused(member, message_id, "You don't have permission to move this message", stream_id=design.id)


def test_within_channel_group_lets_its_members_rename_topics(
    locked_down, design, kitchen, send, member, owner, sys_groups
):
    message_id = send(member, design)
    refused(member, message_id, "You don't have permission to edit this message", topic="food")
    set_channel_group(owner, kitchen, "can_move_messages_within_channel_group", sys_groups[SystemGroups.MEMBERS].id)
    refused(member, message_id, "You don't have permission to edit this message", topic="food")
    set_channel_group(owner, design, "can_move_messages_within_channel_group", sys_groups[SystemGroups.MEMBERS].id)
    assert_success(edit(member, message_id, topic="food", send_notification_to_new_thread="false"))
    assert topic_ids(design, "food")[0] == message_id


def test_the_destinations_within_group_counts_for_a_new_topic_on_a_channel_move(
    locked_down, design, kitchen, send, member, owner, sys_groups
):
    message_id = send(member, design)
    set_channel_group(owner, design, "can_move_messages_out_of_channel_group", sys_groups[SystemGroups.MEMBERS].id)
    refused(member, message_id, "You don't have permission to edit this message", stream_id=kitchen.id, topic="food")
    set_channel_group(owner, kitchen, "can_move_messages_within_channel_group", sys_groups[SystemGroups.MEMBERS].id)
    assert_success(edit(member, message_id, stream_id=kitchen.id, topic="food"))
    assert topic_ids(kitchen, "food")[0] == message_id


def test_administrators_move_whatever_the_settings(locked_down, design, kitchen, send, member, admin):
    message_id = send(member, design)
    assert_success(edit(admin, message_id, topic="food"))
    assert_success(edit(admin, message_id, stream_id=kitchen.id))


def test_channel_administrators_move_its_messages(
    locked_down, design, kitchen, send, member, moderator, owner, sys_groups
):
    message_id = send(member, design)
    refused(moderator, message_id, "You don't have permission to move this message", stream_id=kitchen.id)
    set_channel_group(owner, design, "can_administer_channel_group", sys_groups[SystemGroups.MODERATORS].id)
    assert_success(edit(moderator, message_id, topic="food"))
    assert_success(edit(moderator, message_id, stream_id=kitchen.id))


def test_created_with_the_settings(realm, member, sys_groups):
    moderators = sys_groups[SystemGroups.MODERATORS].id
    body = {
        "subscriptions": '[{"name": "ops"}]',
        "can_move_messages_out_of_channel_group": str(moderators),
        "can_move_messages_within_channel_group": json.dumps({"direct_members": [member.id], "direct_subgroups": []}),
    }
    assert_success(api_for(member).post("/users/me/subscriptions", body))
    stream = Stream.objects.get(realm=realm, name="ops")
    assert stream.can_move_messages_out_of_channel_group_id == moderators
    shown = assert_success(api_for(member).get(f"/streams/{stream.id}"))["stream"]
    assert shown["can_move_messages_within_channel_group"] == {"direct_members": [member.id], "direct_subgroups": []}


def test_role_everyone_includes_guests(locked_down, make_stream, send, member, guest, owner, sys_groups):
    design = make_stream("design", member, guest, owner)
    message_id = send(member, design)
    refused(guest, message_id, "You don't have permission to edit this message", topic="food")
    set_channel_group(owner, design, "can_move_messages_within_channel_group", sys_groups[SystemGroups.EVERYONE].id)
    assert_success(edit(guest, message_id, topic="food"))  # role:everyone includes guests, as in Zulip
    assert topic_ids(design, "food")[0] == message_id
