"""A channel's can_create_topic_group (as Zulip's): who may start a topic, by sending to a topic the
channel has no message in, scheduling a message there, or moving messages there. Everyone by
default; anyone who may post still posts to the topics that exist."""

import importlib
import json
import time

import pytest
from django.apps import apps as django_apps

from apps.groups.models import SystemGroups
from apps.subscriptions.models import Stream
from tests.api import api_for, assert_error, assert_success
from tests.factories import BotFactory
from tests.messages.conftest import db_state, post_message

REFUSED = "You do not have permission to create new topics in this channel."


@pytest.fixture
def design(make_stream, member, admin, moderator):
    return make_stream("design", member, admin, moderator)


def to_topic(user, stream, topic, content="hello"):
    return post_message(user, type="stream", to=stream.id, topic=topic, content=content)


def restrict(admin, stream, value):
    assert_success(
        api_for(admin).patch(f"/streams/{stream.id}", {"can_create_topic_group": json.dumps({"new": value})})
    )


def refused(response):
    before = db_state()
    assert_error(response(), 400, "BAD_REQUEST", REFUSED)
    assert db_state() == before


def test_everyone_starts_topics_by_default(design, sys_groups, member, capture_events, admin):
    everyone = sys_groups[SystemGroups.EVERYONE].id
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["subscription"]}))
    (sub,) = [s for s in state["subscriptions"] if s["stream_id"] == design.id]
    assert sub["can_create_topic_group"] == everyone
    assert_success(to_topic(member, design, "new"))
    moderators = sys_groups[SystemGroups.MODERATORS].id
    with capture_events(member) as received:
        restrict(admin, design, moderators)
    assert {"type": "stream", "op": "update", "stream_id": design.id, "name": "design",
            "property": "can_create_topic_group", "value": moderators} in received[member.id]  # fmt: skip
    (stream,) = assert_success(api_for(member).get("/streams"))["streams"]
    assert stream["can_create_topic_group"] == moderators


def test_only_the_group_starts_topics_everyone_posts_in_those_that_exist(design, sys_groups, admin, moderator, member):
    assert_success(to_topic(member, design, "lunch"))
    restrict(admin, design, sys_groups[SystemGroups.MODERATORS].id)
    refused(lambda: to_topic(member, design, "dinner"))
    assert_success(to_topic(member, design, "Lunch"))  # the same topic, in another case
    assert_success(to_topic(moderator, design, "dinner"))
    assert_success(to_topic(member, design, "dinner"))  # now it exists
    restrict(admin, design, sys_groups[SystemGroups.NOBODY].id)
    refused(lambda: to_topic(admin, design, "breakfast"))  # nobody: administrators neither


def test_a_bot_starts_topics_by_its_owners_permission(design, realm, sys_groups, admin, member):
    theirs = BotFactory(realm=realm, bot_owner=member)
    mine = BotFactory(realm=realm, bot_owner=admin)
    restrict(admin, design, {"direct_members": [admin.id], "direct_subgroups": []})
    refused(lambda: to_topic(theirs, design, "alerts"))
    assert_success(to_topic(mine, design, "alerts"))


def test_scheduling_to_a_new_topic_is_checked(design, sys_groups, admin, member):
    restrict(admin, design, sys_groups[SystemGroups.MODERATORS].id)
    body = {"type": "stream", "to": design.id, "topic": "later", "content": "soon",
            "scheduled_delivery_timestamp": int(time.time()) + 3600}  # fmt: skip
    refused(lambda: api_for(member).post("/scheduled_messages", body))
    assert_success(api_for(admin).post("/scheduled_messages", body))


def test_moving_messages_to_a_new_topic_is_starting_it(design, make_stream, sys_groups, admin, member, moderator):
    other = make_stream("other", member, admin)
    first = assert_success(to_topic(member, design, "lunch"))["id"]
    second = assert_success(to_topic(member, design, "plans"))["id"]
    restrict(admin, design, sys_groups[SystemGroups.MODERATORS].id)
    restrict(admin, other, sys_groups[SystemGroups.MODERATORS].id)
    refused(lambda: api_for(member).patch(f"/messages/{first}", {"topic": "brunch"}))
    assert_success(api_for(member).patch(f"/messages/{first}", {"topic": "plans"}))  # into a topic that exists
    refused(lambda: api_for(member).patch(f"/messages/{second}", {"stream_id": other.id}))  # "plans" is new there
    # Resolving a topic renames it without starting one.
    assert_success(api_for(member).patch(f"/messages/{second}", {"topic": "✔ plans", "propagate_mode": "change_all"}))
    assert_success(api_for(moderator).patch(f"/messages/{second}", {"topic": "dinner"}))


def test_the_setting_is_checked(design, sys_groups, member, admin):
    response = api_for(member).patch(
        f"/streams/{design.id}", {"can_create_topic_group": json.dumps({"new": sys_groups[SystemGroups.NOBODY].id})}
    )
    assert_error(response, 400, "CANNOT_ADMINISTER_CHANNEL", "You do not have permission to administer this channel.")
    assert Stream.objects.get(id=design.id).can_create_topic_group_id == sys_groups[SystemGroups.EVERYONE].id
    created = assert_success(
        api_for(admin).post(
            "/users/me/subscriptions",
            {"subscriptions": json.dumps([{"name": "quiet"}]),
             "can_create_topic_group": json.dumps(sys_groups[SystemGroups.ADMINISTRATORS].id)},
        )
    )  # fmt: skip
    assert created["subscribed"]
    quiet = Stream.objects.get(realm=design.realm, name="quiet")
    assert quiet.can_create_topic_group_id == sys_groups[SystemGroups.ADMINISTRATORS].id


def test_existing_channels_let_everyone_start_topics(design, sys_groups):
    migration = importlib.import_module("apps.subscriptions.migrations.0011_stream_can_create_topic_group")
    Stream.objects.filter(id=design.id).update(can_create_topic_group=sys_groups[SystemGroups.NOBODY])
    migration.set_everyone(django_apps, None)
    assert Stream.objects.get(id=design.id).can_create_topic_group_id == sys_groups[SystemGroups.EVERYONE].id


INCOMPATIBLE = "Unsupported parameter combination: history_public_to_subscribers, can_create_topic_group"


def test_a_channel_with_protected_history_lets_everyone_start_topics(realm, sys_groups, admin, member):
    """As Zulip's: where subscribers do not see the whole history, nobody could tell which topics
    exist, so everyone starts topics (the setting is role:everyone alone)."""
    admins = sys_groups[SystemGroups.ADMINISTRATORS].id
    client = api_for(admin)

    def create(name, **options):
        body = {"subscriptions": json.dumps([{"name": name}]), **{k: json.dumps(v) for k, v in options.items()}}
        return client.post("/users/me/subscriptions", body)

    before = db_state()
    response = create("secret", invite_only=True, can_create_topic_group=admins)
    assert_error(response, 400, "BAD_REQUEST", INCOMPATIBLE)
    assert response.json()["parameters"] == "history_public_to_subscribers, can_create_topic_group"
    assert db_state() == before
    assert_success(
        create("secret", invite_only=True, history_public_to_subscribers=True, can_create_topic_group=admins)
    )
    assert_success(create("protected", invite_only=True))
    protected = Stream.objects.get(realm=realm, name="protected")
    assert_error(client.patch(f"/streams/{protected.id}", {"can_create_topic_group": json.dumps({"new": admins})}),
                 400, "BAD_REQUEST", INCOMPATIBLE)  # fmt: skip
    secret = Stream.objects.get(realm=realm, name="secret")
    assert_error(client.patch(f"/streams/{secret.id}", {"history_public_to_subscribers": "false"}),
                 400, "BAD_REQUEST", INCOMPATIBLE)  # fmt: skip
    assert Stream.objects.get(id=secret.id).history_public_to_subscribers is True
    everyone = sys_groups[SystemGroups.EVERYONE].id
    both = {"history_public_to_subscribers": "false", "can_create_topic_group": json.dumps({"new": everyone})}
    assert_success(client.patch(f"/streams/{secret.id}", both))
    assert Stream.objects.get(id=secret.id).history_public_to_subscribers is False
