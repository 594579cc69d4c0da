"""User group mentions, as Zulip's: `@*group*` mentions the group's members (through subgroups),
`@_*group*` and a deactivated group's mention notify nobody, system groups read by their display
names, and mentioning a group takes its can_mention_group permission (when sent and when edited)."""

import pytest

from apps.groups.actions.groups import do_deactivate_user_group
from apps.invites.actions.welcome import do_create_welcome_bot, do_send_welcome_message
from apps.messages.models import Message, UserMessage
from tests.api import assert_error, assert_success
from tests.messages.conftest import api, db_state, flags_of, post_message

MENTIONED = UserMessage.MENTIONED


@pytest.fixture
def design(make_stream, member, admin, owner, moderator):
    return make_stream("design", member, admin, owner, moderator)


@pytest.fixture
def support(make_group, admin, owner, moderator):
    """support: the owner, and the moderator through its subgroup "night shift"."""
    night = make_group(admin, "night shift", [moderator])
    return make_group(admin, "support", [owner], subgroup_ids=[night.id])


def send(user, content: str) -> dict:
    return post_message(user, type="stream", to="design", topic="t", content=content)


def rendered(message_id: int) -> str:
    return Message.objects.get(id=message_id).rendered_content


def span(group, text: str, *, silent: bool = False) -> str:
    css = "user-group-mention silent" if silent else "user-group-mention"
    return f'<span class="{css}" data-user-group-id="{group.id}">{text}</span>'


def test_a_group_mention_mentions_its_members_through_subgroups(design, support, member, admin, owner, moderator):
    message_id = assert_success(send(member, "@*support* can you look?"))["id"]
    assert rendered(message_id) == f"<p>{span(support, '@support')} can you look?</p>"
    assert (flags_of(owner, message_id), flags_of(moderator, message_id)) == (MENTIONED, MENTIONED)
    assert flags_of(admin, message_id) == 0
    assert "mentioned" in assert_success(api(owner).get(f"/messages/{message_id}"))["message"]["flags"]


def test_silent_deactivated_and_unknown_group_mentions_notify_nobody(design, support, member, admin, owner):
    silent = assert_success(send(member, "thanks @_*support*"))["id"]
    assert rendered(silent) == f"<p>thanks {span(support, 'support', silent=True)}</p>"
    unknown = assert_success(send(member, "@*nobody here* and @*SUPPORT*"))["id"]
    assert rendered(unknown) == "<p>@<em>nobody here</em> and @<em>SUPPORT</em></p>"  # names match exactly
    in_code = assert_success(send(member, "`@*support*` and a@*support*"))["id"]
    assert "user-group-mention" not in rendered(in_code)
    do_deactivate_user_group(support, acting_user=admin)
    deactivated = assert_success(send(member, "@*support* still there?"))["id"]
    assert rendered(deactivated) == f"<p>{span(support, 'support', silent=True)} still there?</p>"
    assert [flags_of(owner, m) for m in (silent, unknown, in_code, deactivated)] == [0, 0, 0, 0]


def test_mentioning_a_group_takes_its_can_mention_group(design, make_group, sys_groups, member, admin, owner):
    admins_only = {"can_mention_group": sys_groups["role:administrators"].id}
    make_group(admin, "oncall", [owner], settings=admins_only)
    not_allowed = "You are not allowed to mention user group 'oncall'."
    before = db_state()
    assert_error(send(member, "@*oncall* help"), 400, "BAD_REQUEST", not_allowed)
    assert db_state() == before
    assert_success(send(member, "@_*oncall* may be asked"))  # a silent mention needs no permission
    message_id = assert_success(send(admin, "@*oncall* help"))["id"]
    assert flags_of(owner, message_id) == MENTIONED
    mine = assert_success(send(member, "hello"))["id"]
    refused = api(member).patch(f"/messages/{mine}", {"content": "@*oncall* help"})
    assert_error(refused, 400, "BAD_REQUEST", not_allowed)
    assert Message.objects.get(id=mine).content == "hello"


def test_the_welcome_bot_may_mention_any_group(make_group, sys_groups, realm, member, admin, owner):
    """A newcomer's greeting with the administrators' text is never refused (it would refuse the
    newcomer's sign-up): the server's own bots are not held to can_mention_group."""
    make_group(admin, "oncall", [owner], settings={"can_mention_group": sys_groups["role:administrators"].id})
    do_create_welcome_bot(realm)
    greeting = do_send_welcome_message(member, custom_text="Ask @*oncall* anything.", acting_user=None)
    assert 'class="user-group-mention"' in greeting.rendered_content


def test_system_groups_are_shown_by_their_display_names_and_cannot_be_mentioned(design, sys_groups, member, owner):
    moderators = sys_groups["role:moderators"]
    message_id = assert_success(send(member, "ask @_*role:moderators*"))["id"]
    assert rendered(message_id) == f"<p>ask {span(moderators, 'Moderators', silent=True)}</p>"
    refused = send(member, "@*role:members* hi")
    assert_error(refused, 400, "BAD_REQUEST", "You are not allowed to mention user group 'role:members'.")


def test_an_edit_that_mentions_a_group_mentions_its_members(design, support, member, owner):
    message_id = assert_success(send(member, "hello"))["id"]
    assert flags_of(owner, message_id) == 0
    assert_success(api(member).patch(f"/messages/{message_id}", {"content": "hello @*support*"}))
    assert flags_of(owner, message_id) == MENTIONED
    assert_success(api(member).patch(f"/messages/{message_id}", {"content": "hello"}))
    assert flags_of(owner, message_id) == 0


def test_silent_mentions_read_without_the_at_sign(design, member, admin):
    message_id = assert_success(send(member, "@_**Adam Admin** and @_**all**"))["id"]
    assert rendered(message_id) == (
        f'<p><span class="user-mention silent" data-user-id="{admin.id}">Adam Admin</span> and '
        '<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>'
    )
