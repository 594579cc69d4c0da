"""The server's own bots (the Welcome Bot, the Notification Bot: Zulip's cross-realm bots, in no
organization there) may be looked up and written to, never administered nor made members of
anything (the security QA pass: an administrator renamed the Welcome Bot, an owner made it an
owner, any member put it in a group)."""

import pytest

from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.users.models import Role, User
from tests.api import api_for, assert_error, assert_success
from tests.factories import create_group


@pytest.fixture
def system_bot(realm):
    return do_create_notification_bot(realm)


def unchanged(bot: User) -> tuple:
    bot = User.objects.get(id=bot.id)
    return bot.full_name, bot.role, bot.is_active


def test_nobody_administers_them(system_bot, owner, admin):
    before = unchanged(system_bot)
    for params in ({"full_name": "Impostor"}, {"role": Role.OWNER}):
        assert_error(api_for(owner).patch(f"/users/{system_bot.id}", params), 400, "BAD_REQUEST", "No such user")
    assert_error(api_for(admin).patch(f"/users/{system_bot.id}", {"full_name": "Impostor"}), 400, "BAD_REQUEST",
                 "No such user")  # fmt: skip
    assert_error(api_for(owner).post(f"/users/{system_bot.id}/reactivate"), 400, "BAD_REQUEST", "No such user")
    assert_error(api_for(owner).delete(f"/users/{system_bot.id}"), 400, "BAD_REQUEST", "No such user")
    assert unchanged(system_bot) == before


def test_they_join_no_group_and_are_not_muted(system_bot, owner, member):
    group = create_group(member, "team", [member])
    response = api_for(member).post(f"/user_groups/{group.id}/members", {"add": f"[{system_bot.id}]"})
    assert_error(response, 400, "BAD_REQUEST", f"Invalid user ID: {system_bot.id}")
    response = api_for(member).post("/user_groups/create", {"name": "bots", "description": "",
                                                             "members": f"[{system_bot.id}]"})  # fmt: skip
    assert_error(response, 400, "BAD_REQUEST", f"Invalid user ID: {system_bot.id}")
    assert_error(api_for(member).post(f"/users/me/muted_users/{system_bot.id}"), 400, "BAD_REQUEST", "No such user")


def test_they_are_still_found_and_messaged(system_bot, member):
    assert assert_success(api_for(member).get(f"/users/{system_bot.id}"))["user"]["is_system_bot"] is True
    dm = {"type": "direct", "to": f"[{system_bot.id}]", "content": "hello"}
    assert_success(api_for(member).post("/messages", dm))
