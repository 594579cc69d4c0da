"""GET /streams/{id}/email_address: Parley has no email gateway, so the address is empty (as a Zulip
server without one answers); who may ask is checked as in Zulip."""

import pytest

from apps.groups.models import SystemGroups
from apps.groups.selectors import system_groups
from apps.groups.serializers import GroupSettingChange
from apps.subscriptions.actions.channel_settings import do_change_stream_group_setting
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory


def address(user, stream_id: int, **params):
    return ApiClient(user).get(f"/streams/{stream_id}/email_address", params)


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def test_whoever_may_post_gets_the_empty_address(design, member, owner, bot):
    assert assert_success(address(member, design.id))["email"] == ""
    assert assert_success(address(owner, design.id))["email"] == ""  # a public channel's reader
    assert assert_success(address(member, design.id, sender_id=member.id))["email"] == ""
    assert assert_success(address(member, design.id, sender_id=bot.id))["email"] == ""  # their own bot
    assert assert_success(address(owner, design.id, sender_id=bot.id))["email"] == ""  # administrators


def test_those_who_may_not_post_or_read_are_refused(design, make_stream, realm, member, admin, guest, owner):
    admins = system_groups(realm.id)[SystemGroups.ADMINISTRATORS].id
    only_admins = GroupSettingChange(new=admins, old=None)
    do_change_stream_group_setting(design, "can_send_message_group", only_admins, acting_user=None)
    refusal = "You do not have permission to post in this channel."
    assert_error(address(member, design.id), 400, "BAD_REQUEST", refusal)
    assert assert_success(address(admin, design.id))["email"] == ""
    secret = make_stream("secret", owner, private=True)
    for outsider in (member, guest):
        assert_error(address(outsider, secret.id), 400, "BAD_REQUEST", "Invalid channel ID")
    assert_error(address(member, 987654), 400, "BAD_REQUEST", "Invalid channel ID")


def test_the_sender_must_be_the_user_or_a_bot_they_may_administer(design, realm, member, admin, owner, bot):
    others_bot = BotFactory(realm=realm, bot_owner=owner)
    assert_error(address(member, design.id, sender_id=others_bot.id), 400, "BAD_REQUEST", "Insufficient permission")
    for not_a_bot in (admin.id, 987654):
        assert_error(address(member, design.id, sender_id=not_a_bot), 400, "BAD_REQUEST", "No such bot")
    bad = address(member, design.id, sender_id="me")
    assert_error(bad, 400, "REQUEST_VARIABLE_INVALID", "sender_id is not valid JSON")


def test_another_organizations_channel_and_bot_are_unknown(design, member, foreign_user, make_stream, other_realm):
    theirs = make_stream("theirs", foreign_user, in_realm=other_realm)
    assert_error(address(member, theirs.id), 400, "BAD_REQUEST", "Invalid channel ID")
    foreign_bot = BotFactory(realm=other_realm, bot_owner=foreign_user)
    assert_error(address(member, design.id, sender_id=foreign_bot.id), 400, "BAD_REQUEST", "No such bot")
