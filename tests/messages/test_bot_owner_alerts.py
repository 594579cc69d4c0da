"""A bot that sends to a channel that does not exist, or has nobody in it, gets its owner a direct
message from the Notification Bot (Zulip's send_pm_if_empty_stream), at most once a minute per
bot; the bot's own request answers as before."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.messages.models import Message
from apps.users.models import BotType, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory


@pytest.fixture
def hook(realm, member):
    return BotFactory(realm=realm, bot_owner=member, bot_type=BotType.INCOMING_WEBHOOK, full_name="CI Bot")


def to_channel(user, to, content="build failed"):
    return ApiClient(user).post("/messages", {"type": "stream", "to": to, "topic": "ci", "content": content})


def notices_to(user) -> list[str]:
    """The contents of the Notification Bot's direct messages to `user`, oldest first."""
    sent = Message.objects.filter(sender__delivery_email__startswith="notification-bot@", stream__isnull=True)
    return list(sent.filter(user_messages__user=user).order_by("id").values_list("content", flat=True))


def test_a_missing_channel_is_refused_and_the_owner_told_once_a_minute(hook, member):
    assert_error(to_channel(hook, "alerts"), 400, "STREAM_DOES_NOT_EXIST", "Channel 'alerts' does not exist")
    expected = (
        f"Your bot `{hook.delivery_email}` tried to send a message to channel #**alerts**, but that channel "
        "does not exist. Click [here](#channels/new) to create it."
    )
    assert notices_to(member) == [expected]
    assert_error(to_channel(hook, "alerts"), 400, "STREAM_DOES_NOT_EXIST")
    assert notices_to(member) == [expected]  # not again within the minute
    User.objects.filter(id=hook.id).update(last_reminder=timezone.now() - timedelta(minutes=2))
    assert_error(to_channel(hook, 123456), 400, "STREAM_DOES_NOT_EXIST")
    assert notices_to(member)[1:] == [
        f"Your bot `{hook.delivery_email}` tried to send a message to channel ID 123456, but there is no channel "
        "with that ID."
    ]


def test_an_empty_channel_gets_the_message_and_the_owner_a_notice(hook, member, admin, make_stream):
    make_stream("quiet")
    message_id = assert_success(to_channel(hook, "quiet"))["id"]
    assert Message.objects.get(id=message_id).stream.name == "quiet"
    assert notices_to(member) == [
        f"Your bot `{hook.delivery_email}` tried to send a message to channel #**quiet**. The channel exists but "
        "does not have any subscribers."
    ]


def test_nobody_is_told_when_nothing_is_wrong_or_it_is_not_a_bots_owners_business(
    hook, member, admin, make_stream, realm
):
    make_stream("general", member)
    secret = make_stream("secret", admin, private=True)
    assert_success(to_channel(hook, "general"))
    assert_error(to_channel(hook, "secret"), 400, "STREAM_DOES_NOT_EXIST")  # exists, hidden from the bot
    assert_error(to_channel(hook, secret.id), 400, "STREAM_DOES_NOT_EXIST")  # by its id too
    for impossible in ("z" * 61, " ", "a\x07b"):  # names no channel may have
        assert to_channel(hook, impossible).status_code == 400
    assert_error(to_channel(member, "nowhere"), 400, "STREAM_DOES_NOT_EXIST")  # a person
    assert notices_to(member) == []
    orphan = BotFactory(realm=realm, bot_owner=admin, full_name="Orphan Bot")
    User.objects.filter(id=admin.id).update(is_active=False)
    assert_error(to_channel(orphan, "nowhere"), 400, "STREAM_DOES_NOT_EXIST")
    assert notices_to(admin) == []
