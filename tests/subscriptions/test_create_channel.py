"""POST /channels/create (Zulip 11, feature level 417): one channel, its settings and its first
subscribers, answered with its id; a name taken is Zulip's 409 CHANNEL_ALREADY_EXISTS; the checks
of creating by subscribing (POST /users/me/subscriptions) hold the same way."""

import pytest
from django.db import connection

from apps.groups.models import SystemGroups
from apps.groups.selectors import system_groups
from apps.subscriptions.models import Stream, Subscription
from tests.api import ApiClient, assert_error, assert_success
from tests.concurrency import at_once
from tests.factories import UserFactory
from tests.subscriptions.test_api import db_state, refused
from tests.subscriptions.test_channel_creation import PRIVATE, set_policy


def create(user, name, subscribers=(), **params):
    return ApiClient(user).post("/channels/create", {"name": name, "subscribers": list(subscribers), **params})


def subscriber_ids(stream: Stream) -> set[int]:
    return set(Subscription.objects.filter(stream=stream, active=True).values_list("user_id", flat=True))


def test_creates_the_channel_with_its_subscribers_and_answers_its_id(member, admin, bot):
    body = assert_success(create(member, "  design ", [member.id, admin.id, bot.id], description="Pixels"))
    stream = Stream.objects.get(id=body["id"])
    assert (stream.name, stream.description, stream.creator_id) == ("design", "Pixels", member.id)
    assert not stream.invite_only
    assert stream.history_public_to_subscribers
    assert subscriber_ids(stream) == {member.id, admin.id, bot.id}
    assert stream.subscriber_count == 3
    # Its creator administers it, as a channel created by subscribing.
    assert list(stream.can_administer_channel_group.direct_members.values_list("id", flat=True)) == [member.id]


def test_no_subscribers_means_nobody_not_even_the_creator(member):
    stream = Stream.objects.get(id=assert_success(create(member, "empty"))["id"])
    assert subscriber_ids(stream) == set()
    assert stream.subscriber_count == 0
    # The creator still sees it (they administer it) and may join it.
    channels = assert_success(ApiClient(member).get("/streams"))["streams"]
    assert stream.id in {c["stream_id"] for c in channels}


def test_private_channel_with_settings(owner, member, sys_groups):
    moderators = sys_groups[SystemGroups.MODERATORS].id
    params = {
        "invite_only": True,
        "history_public_to_subscribers": False,
        "message_retention_days": 30,
        "topics_policy": "disable_empty_topic",
        "can_send_message_group": moderators,
    }
    body = assert_success(create(owner, "secret", [owner.id, member.id], **params))
    stream = Stream.objects.get(id=body["id"])
    assert stream.invite_only
    assert not stream.history_public_to_subscribers
    assert (stream.message_retention_days, stream.topics_policy) == (30, "disable_empty_topic")
    assert stream.can_send_message_group_id == moderators
    # A member subscribed to it sees it in their subscriptions.
    subs = assert_success(ApiClient(member).get("/users/me/subscriptions"))["subscriptions"]
    assert [s["name"] for s in subs if s["stream_id"] == stream.id] == ["secret"]


def test_default_channel_for_administrators(admin, member):
    stream = Stream.objects.get(id=assert_success(create(admin, "welcome", is_default_stream=True))["id"])
    assert stream.is_default
    refused(create(member, "mine", is_default_stream=True), "Insufficient permission", db_state())


@pytest.mark.parametrize("name", ["design", "DESIGN", " Design "])
def test_a_name_taken_is_a_409(member, admin, make_stream, name):
    make_stream("Design", admin, private=True)  # one the member cannot see, as in Zulip
    before = db_state()
    body = assert_error(create(member, name, [member.id]), 409, "CHANNEL_ALREADY_EXISTS")
    assert body["msg"] == f"Channel '{name.strip()}' already exists"
    assert db_state() == before


def test_an_archived_channels_name_is_taken_too(member, admin, make_stream):
    stream = make_stream("old", admin)
    assert_success(ApiClient(admin).delete(f"/streams/{stream.id}"))
    assert_error(create(member, "old"), 409, "CHANNEL_ALREADY_EXISTS", "Channel 'old' already exists")


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({"name": ""}, "Channel name can't be empty."),
        ({"name": "x" * 61}, "Channel name too long (limit: 60 characters)."),
        ({"name": "a\u0007b"}, "Invalid character in channel name, at position 2."),
        ({"is_web_public": True}, "Web-public channels are not enabled."),
        ({"invite_only": True, "is_default_stream": True}, "Insufficient permission"),
        ({"can_delete_any_message_group": '{"direct_members": [], "direct_subgroups": []}'}, "Insufficient permission"),
        ({"topics_policy": "nonsense"}, "Invalid topics_policy"),
        ({"message_retention_days": 30}, "Must be an organization owner"),
        ({"description": "x" * 1025}, "description is too long (limit: 1024 characters)"),
        ({"folder_id": 999999}, "Invalid channel folder ID"),
    ],
)
def test_refusals_change_nothing(member, params, msg):
    before = db_state()
    body = create(member, **{"name": "new", **params}).json()
    assert (body["result"], body["msg"]) == ("error", msg)
    assert db_state() == before


def test_subscribers_are_checked_before_anything_changes(realm, member, foreign_user):
    deactivated_user = UserFactory(realm=realm, is_active=False)
    before = db_state()
    for subscribers, msg in [([foreign_user.id], "No such user"), ([deactivated_user.id], "User is deactivated")]:
        refused(create(member, "new", subscribers), msg, before)
    body = assert_error(ApiClient(member).post("/channels/create", {"name": "new"}), 400, "REQUEST_VARIABLE_MISSING")
    assert body["var_name"] == "subscribers"
    not_a_list = ApiClient(member).post("/channels/create", {"name": "new", "subscribers": "nope"})
    assert_error(not_a_list, 400, "REQUEST_VARIABLE_INVALID")
    assert db_state() == before


def test_the_organizations_policy_and_guests(realm, member, admin, guest):
    set_policy(realm, PRIVATE, SystemGroups.ADMINISTRATORS)
    before = db_state()
    refused(create(member, "closed", invite_only=True), "Insufficient permission", before)
    refused(create(guest, "open"), "Not allowed for guest users", before, code="BAD_REQUEST")
    assert_success(create(admin, "closed", invite_only=True))


def test_creation_counts_against_the_rate_limit(rate_limit_backend, member, settings):
    settings.RATE_LIMIT_CHANNEL_CREATION = (2, 3600)
    assert_success(create(member, "one"))
    assert_success(create(member, "two"))
    assert_error(create(member, "three"), 429, "RATE_LIMIT_HIT")
    assert not Stream.objects.filter(name="three").exists()


def test_events_tell_viewers_and_subscribers(capture_events, realm, member, admin, moderator):
    with capture_events(member, admin, moderator) as received:
        stream_id = assert_success(create(member, "news", [admin.id], description="**bold**"))["id"]
    for user in (member, admin, moderator):
        creates = [e for e in received[user.id] if e["type"] == "stream" and e["op"] == "create"]
        assert [s["stream_id"] for e in creates for s in e["streams"]] == [stream_id]
        assert creates[0]["streams"][0]["rendered_description"] == "<p><strong>bold</strong></p>"
    [add] = [e for e in received[admin.id] if e["type"] == "subscription" and e["op"] == "add"]
    assert [s["stream_id"] for s in add["subscriptions"]] == [stream_id]
    assert not [e for e in received[member.id] if e["type"] == "subscription" and e["op"] == "add"]


def test_private_channel_is_announced_only_to_who_can_see_it(capture_events, member, admin, moderator):
    with capture_events(member, admin, moderator) as received:
        assert_success(create(member, "hidden", [member.id], invite_only=True))
    assert not [e for e in received[moderator.id] if e["type"] == "stream"]
    assert [e["op"] for e in received[member.id] if e["type"] == "stream"] == ["create"]
    assert [e["op"] for e in received[admin.id] if e["type"] == "stream"] == ["create"]


def test_other_organizations_groups_are_refused(member, other_realm):
    foreign = system_groups(other_realm.id)[SystemGroups.MEMBERS].id
    before = db_state()
    body = assert_error(create(member, "new", can_send_message_group=foreign), 400, "BAD_REQUEST")
    assert "group" in body["msg"].lower()
    assert db_state() == before


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_two_requests_for_one_name_create_it_once(member, admin):
    for round_number in range(5):
        name = f"launch {round_number}"
        responses = at_once(lambda: create(member, name), lambda: create(admin, name))  # noqa: B023
        codes = sorted(response.status_code for response in responses)
        assert codes == [200, 409], [r.content for r in responses]
        assert Stream.objects.filter(name=name).count() == 1
