"""GET /users/me/{stream_id}/topics: a channel's topics, latest first, each once whatever its case,
named as its latest message names it; all of them where history is public to subscribers, those
of messages the user received otherwise; channels the user may not see are invalid."""

import pytest

from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from tests.api import api_for, assert_error, assert_success


def topics(user, stream, **params) -> list[dict]:
    return assert_success(api_for(user).get(f"/users/me/{stream.id}/topics", params))["topics"]


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def test_topics_latest_first_once_each(design, send, member, admin):
    send(member, design, topic="lunch")
    send(member, design, topic="Plans")
    last_plans = send(admin, design, topic="plans")
    last_lunch = send(member, design, topic="lunch")
    empty = send(member, design, topic="")
    assert topics(admin, design) == [
        {"name": "general chat", "max_id": empty},
        {"name": "lunch", "max_id": last_lunch},
        {"name": "plans", "max_id": last_plans},
    ]
    assert topics(admin, design, allow_empty_topic_name=True)[0] == {"name": "", "max_id": empty}


def test_a_new_subscriber_sees_every_topic_of_a_public_history(design, send, member, owner):
    old = send(member, design, topic="before you came")
    bulk_add_subscriptions(design.realm, [design], [owner], acting_user=None)
    assert topics(owner, design) == [{"name": "before you came", "max_id": old}]


def test_protected_history_shows_only_what_the_user_received(make_stream, send, admin, owner):
    secret = make_stream("secret", admin, private=True, history_public=False)
    send(admin, secret, topic="before")
    bulk_add_subscriptions(secret.realm, [secret], [owner], acting_user=None)
    after = send(admin, secret, topic="after")
    assert topics(owner, secret) == [{"name": "after", "max_id": after}]
    assert [t["name"] for t in topics(admin, secret)] == ["after", "before"]


def test_channels_one_cannot_see_are_invalid(make_stream, send, member, admin, foreign_user):
    secret = make_stream("secret", admin, private=True)
    send(admin, secret, topic="hidden")
    for user in (member, foreign_user):
        assert_error(api_for(user).get(f"/users/me/{secret.id}/topics"), 400, "BAD_REQUEST", "Invalid channel ID")
