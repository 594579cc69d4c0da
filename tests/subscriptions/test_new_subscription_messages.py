"""Whoever is subscribed to existing channels by someone else hears it from the Notification Bot,
as in Zulip: one direct message each (not to the one subscribing, not to bots, not about channels
the request creates), unless the request says `send_new_subscription_messages` false or subscribes
more than max_bulk_new_subscription_messages people (then `new_subscription_messages_sent` false)."""

import pytest

from apps.messages.models import Message, UserMessage
from apps.messages.rendering import silent_mention
from tests.api import ApiClient, assert_success
from tests.subscriptions.test_api import subscribe


def notices_to(user) -> list[Message]:
    """The Notification Bot's direct messages `user` received, oldest first."""
    sent = Message.objects.filter(sender__delivery_email__startswith="notification-bot@", stream__isnull=True)
    return list(sent.filter(user_messages__user=user).order_by("id"))


def test_people_subscribed_by_someone_else_are_told(admin, member, moderator, bot, make_stream):
    design = make_stream("design", admin)
    secret = make_stream("secret", admin, private=True)
    answer = assert_success(
        subscribe(admin, "design", "secret", "fresh", principals=[admin.id, member.id, moderator.id, bot.id])
    )
    assert answer["new_subscription_messages_sent"] is True
    assert sorted(answer["subscribed"][str(member.id)]) == ["design", "fresh", "secret"]
    [notice] = notices_to(member)
    assert notice.content == (
        f"{silent_mention(admin)} subscribed you to the following channels:\n\n* #**design**\n* #**secret**\n"
    )
    # Linked as the one subscribing knows them, the private channel too; unread for its reader.
    assert f'href="/#narrow/channel/{secret.id}-secret"' in notice.rendered_content
    assert f'href="/#narrow/channel/{design.id}-design"' in notice.rendered_content
    assert not UserMessage.objects.get(user=member, message=notice).flags & UserMessage.READ
    assert [n.content for n in notices_to(moderator)] == [notice.content]
    assert notices_to(admin) == []
    assert notices_to(bot) == []


def test_one_channel_is_named_in_the_sentence(admin, member, make_stream):
    make_stream("design", admin)
    assert_success(subscribe(admin, "design", principals=[member.id]))
    assert [n.content for n in notices_to(member)] == [f"{silent_mention(admin)} subscribed you to #**design**."]
    # Already subscribed: nothing new to tell.
    assert_success(subscribe(admin, "design", principals=[member.id]))
    assert len(notices_to(member)) == 1


def test_subscribing_yourself_or_only_to_new_channels_tells_nobody(admin, member, make_stream):
    make_stream("design", admin)
    assert assert_success(subscribe(member, "design"))["new_subscription_messages_sent"] is True
    assert_success(subscribe(admin, "brand new", principals=[member.id]))
    assert notices_to(member) == []


def test_the_request_may_ask_for_no_messages(admin, member, make_stream):
    make_stream("design", admin)
    answer = assert_success(subscribe(admin, "design", principals=[member.id], send_new_subscription_messages=False))
    assert "new_subscription_messages_sent" not in answer
    assert notices_to(member) == []


def test_too_many_people_at_once_are_not_told(admin, member, moderator, make_stream, monkeypatch):
    monkeypatch.setattr("apps.subscriptions.actions.subscriptions.MAX_BULK_NEW_SUBSCRIPTION_MESSAGES", 1)
    make_stream("design", admin)
    answer = assert_success(subscribe(admin, "design", principals=[member.id, moderator.id]))
    assert answer["new_subscription_messages_sent"] is False
    assert len(answer["subscribed"]) == 2
    assert notices_to(member) == notices_to(moderator) == []


@pytest.mark.parametrize("value", ["maybe", "1.5"])
def test_the_flag_is_a_boolean(admin, member, make_stream, value):
    make_stream("design", admin)
    response = subscribe(admin, "design", principals=[member.id], send_new_subscription_messages=value)
    assert response.status_code == 400
    assert notices_to(member) == []


def test_register_gives_the_limit(member):
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["max_bulk_new_subscription_messages"] == 100
