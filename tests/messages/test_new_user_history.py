"""A new person's first messages (Zulip's add_new_user_history): the recent messages of the channels
they joined, the newest unread, so that their combined feed starts with the conversation under way
(the web app QA pass: a person who signed up through an invitation saw an empty feed, and only the
Welcome Bot's message)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.invites.actions.invites import do_create_multiuse_invite
from apps.invites.actions.signup import do_join_with_invite
from apps.messages.actions import history
from apps.messages.actions.send import do_send_message
from apps.messages.models import Message, UserMessage
from apps.subscriptions.actions.channels import do_set_default_channel
from apps.users.actions.create_user import do_create_user
from apps.users.models import BotType
from tests.api import api_for, assert_success
from tests.factories import create_stream


def post(sender, stream, count: int, topic: str = "plans") -> list[int]:
    return [
        do_send_message(sender, stream=stream, topic=topic, content=f"{stream.name} {n}", acting_user=None).id
        for n in range(count)
    ]


def rows_of(user) -> dict[int, bool]:
    """The user's channel messages: id -> unread."""
    rows = UserMessage.objects.filter(user=user, message__stream__isnull=False)
    return {row.message_id: not row.flags & UserMessage.READ for row in rows}


@pytest.fixture
def general(realm, owner):
    stream = create_stream(realm, "general", owner)
    do_set_default_channel(stream, True, acting_user=None)
    return stream


def test_a_new_person_has_the_recent_messages_of_their_channels_the_newest_unread(realm, owner, general):
    old = post(owner, general, 1)
    Message.objects.filter(id__in=old).update(date_sent=timezone.now() - timedelta(weeks=13))
    recent = post(owner, general, 25)
    protected = create_stream(realm, "protected", owner, private=True, history_public=False)
    post(owner, protected, 2)

    ann = do_create_user(realm, "ann@example.com", "Ann", acting_user=None)

    assert rows_of(ann) == {mid: mid in recent[-20:] for mid in recent}
    feed = assert_success(api_for(ann).get("/api/v1/messages", {"anchor": "newest", "num_before": 50, "num_after": 0}))
    assert [m["id"] for m in feed["messages"] if m["type"] == "stream"] == recent
    # What arrives afterwards, as any message does.
    [later] = post(owner, general, 1)
    assert rows_of(ann)[later] is True


def test_at_most_the_newest_thousand(realm, owner, general, monkeypatch):
    monkeypatch.setattr(history, "NEW_USER_HISTORY_MESSAGES", 7)
    monkeypatch.setattr(history, "NEW_USER_UNREAD_MESSAGES", 3)
    sent = post(owner, general, 10)
    ann = do_create_user(realm, "ann@example.com", "Ann", acting_user=None)
    assert rows_of(ann) == {mid: mid in sent[-3:] for mid in sent[-7:]}


def test_an_invitation_gives_the_history_of_its_channels_too(realm, owner, general):
    shared = create_stream(realm, "shared history", owner, private=True, history_public=True)
    elsewhere = create_stream(realm, "elsewhere", owner)
    in_general, in_shared = post(owner, general, 2), post(owner, shared, 2)
    post(owner, elsewhere, 2)
    invite = do_create_multiuse_invite(
        realm, streams=[shared], include_realm_default_subscriptions=True, acting_user=owner
    )
    bea = do_join_with_invite(realm, invite.key, email="bea@example.com", full_name="Bea", password="a long passphrase")
    assert sorted(rows_of(bea)) == sorted(in_general + in_shared)
    assert all(rows_of(bea).values())  # fewer than twenty: all unread

    # A link that leaves out the default channels leaves out their history.
    only_shared = do_create_multiuse_invite(realm, streams=[shared], acting_user=owner)
    cy = do_join_with_invite(
        realm, only_shared.key, email="cy@example.com", full_name="Cy", password="a long passphrase"
    )
    assert sorted(rows_of(cy)) == in_shared


def test_bots_and_people_without_channels_have_none(realm, owner, general):
    post(owner, general, 3)
    bot = do_create_user(
        realm, "helper-bot@example.com", "Helper", bot_type=BotType.GENERIC, bot_owner=owner, acting_user=None
    )
    assert rows_of(bot) == {}
    invite = do_create_multiuse_invite(realm, acting_user=owner)
    dee = do_join_with_invite(realm, invite.key, email="dee@example.com", full_name="Dee", password="a long passphrase")
    assert rows_of(dee) == {}
