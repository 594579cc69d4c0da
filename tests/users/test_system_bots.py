"""The server's own bots (the Welcome Bot, the Notification Bot: Zulip's cross-realm bots, in no
organization there) may be looked up and written to, never administered nor made members of
anything (the security QA pass: an administrator renamed the Welcome Bot, an owner made it an
owner, any member put it in a group)."""

import pytest
from django.db import connection

from apps.events.models import OutboxEvent
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.models import Message, NotificationBot
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.models import Role, User
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once
from tests.factories import UserFactory, create_group, create_stream


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


def test_a_new_organization_has_its_notification_bot_before_its_first_notice(db):
    """Made with the organization, as the Welcome Bot (the zulip-terminal QA pass: made at the first
    notice, it reached clients as a realm_user/add of an ordinary user while they listed the
    server's bots apart); the first notice announces no one new."""
    realm, owner = do_create_realm_with_owner("acme", "Acme", owner_email="o@acme.example", owner_full_name="Olga",
                                              acting_user=None)  # fmt: skip
    bot = NotificationBot.objects.get(realm=realm).bot
    assert (bot.full_name, bot.bot_owner, bot.is_active) == ("Notification Bot", None, True)
    state = assert_success(api_for(owner).post("/register", {"fetch_event_types": '["realm_user"]'}))
    assert bot.id in [listed["user_id"] for listed in state["cross_realm_bots"]]
    member = UserFactory(realm=realm)
    channel = create_stream(realm, "design", owner)
    users_announced = OutboxEvent.objects.filter(event_type="realm_user").count()
    assert_success(api_for(owner).post("/users/me/subscriptions", {"subscriptions": '[{"name": "design"}]',
                                                                   "principals": f"[{member.id}]"}))  # fmt: skip
    notice = Message.objects.filter(sender=bot, stream__isnull=True).get()
    assert notice.content == f"@_**Olga|{owner.id}** subscribed you to #**{channel.name}**."
    assert OutboxEvent.objects.filter(event_type="realm_user").count() == users_announced
    assert do_create_notification_bot(realm) == bot


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_an_older_organizations_first_notices_at_once_make_one_bot(realm):
    """An organization made before its bot was made with it gets one at its first notice: made
    once when notices come at the same moment (the organization's row is locked while it is)."""
    bots = at_once(*[lambda: do_create_notification_bot(realm)] * 4)
    assert len({bot.id for bot in bots}) == 1
    assert User.objects.filter(realm=realm, full_name="Notification Bot").count() == 1


def test_their_keys_sign_nobody_in(system_bot):
    """The verify QA pass: the Welcome Bot's key, read out of the admin, sent direct messages as it."""
    assert_error(api_for(system_bot).get("/users/me"), 401, "UNAUTHORIZED", "Invalid API key")
