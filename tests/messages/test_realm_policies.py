"""Organization policies on what messages may say and where they go: the organization's
topics_policy (for channels that inherit it) and can_mention_many_users_group (wildcard mentions
in channels and topics with more than 15 people), set with PATCH /realm, shown in /register, as
Zulip applies them."""

import importlib

import pytest
from django.apps import apps as django_apps

from apps.groups.models import SystemGroups, UserGroup
from apps.groups.selectors import get_system_group
from apps.realms.models import Realm
from tests.api import api_for, assert_error, assert_success
from tests.factories import UserFactory, realm_admin_form
from tests.messages.conftest import db_state, post_message


def realm_state(user):
    return assert_success(api_for(user).post("/register", {"fetch_event_types": ["realm"]}))


def to_channel(user, stream, content="hello", topic="lunch"):
    return post_message(user, type="stream", to=stream.name, topic=topic, content=content)


# --- topics_policy --------------------------------------------------------------------------------


def test_channels_that_inherit_follow_the_organization(make_stream, realm, admin, member, capture_events):
    inheriting = make_stream("design", member, admin)
    own = make_stream("chatter", member, admin)
    assert_success(api_for(admin).patch(f"/streams/{own.id}", {"topics_policy": "allow_empty_topic"}))
    state = realm_state(member)
    assert (state["realm_topics_policy"], state["realm_mandatory_topics"]) == ("allow_empty_topic", False)
    assert_success(to_channel(member, inheriting, topic=""))

    with capture_events(member) as received:
        answer = assert_success(api_for(admin).patch("/realm", {"topics_policy": "disable_empty_topic"}))
    assert answer["topics_policy"] == "disable_empty_topic"
    assert received[member.id] == [
        {"type": "realm", "op": "update", "property": "topics_policy", "value": "disable_empty_topic"},
        {"type": "realm", "op": "update", "property": "mandatory_topics", "value": True},  # its older form
    ]
    state = realm_state(member)
    assert (state["realm_topics_policy"], state["realm_mandatory_topics"]) == ("disable_empty_topic", True)
    before = db_state()
    assert_error(to_channel(member, inheriting, topic=""), 400, "BAD_REQUEST",
                 'Sending messages to the "general chat" topic is not allowed in this channel.')  # fmt: skip
    assert db_state() == before
    assert_success(to_channel(member, own, topic=""))  # its own policy wins
    assert_success(to_channel(member, inheriting, topic="plans"))


def test_topics_policy_is_checked(admin, member, realm):
    assert_error(api_for(admin).patch("/realm", {"topics_policy": "empty_topic_only"}), 400,
                 "REQUEST_VARIABLE_INVALID")  # fmt: skip
    assert_error(api_for(member).patch("/realm", {"topics_policy": "disable_empty_topic"}), 400,
                 "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")  # fmt: skip
    assert Realm.objects.get(id=realm.id).topics_policy == "allow_empty_topic"


# --- wildcard mentions ----------------------------------------------------------------------------


@pytest.fixture
def crowd(realm):
    """16 people: one more than a wildcard mention reaches without the permission."""
    return [UserFactory(realm=realm) for _ in range(16)]


def allow_mentions(admin, group_name):
    group = get_system_group(admin.realm_id, group_name)
    assert_success(api_for(admin).patch("/realm", {"can_mention_many_users_group": {"new": group.id}}))


def test_wildcard_mentions_in_big_channels_need_the_permission(make_stream, admin, member, crowd):
    big = make_stream("all-hands", member, admin, *crowd[:14])  # 16 subscribers
    small = make_stream("team", member, admin)
    assert realm_state(member)["realm_wildcard_mention_policy"] == 5  # administrators: Zulip's default
    before = db_state()
    for mention in ("@**all**", "@**everyone**", "@**channel**", "@**stream**"):
        assert_error(to_channel(member, big, f"{mention} hi"), 400, "STREAM_WILDCARD_MENTION_NOT_ALLOWED",
                     "You do not have permission to use channel wildcard mentions in this channel.")  # fmt: skip
    assert db_state() == before
    assert_success(to_channel(member, small, "@**all** hi"))
    assert_success(to_channel(admin, big, "@**all** hi"))
    assert_success(to_channel(member, big, "no mention here"))

    allow_mentions(admin, SystemGroups.MEMBERS)
    assert realm_state(member)["realm_wildcard_mention_policy"] == 2
    assert_success(to_channel(member, big, "@**all** hi"))


def test_topic_wildcard_mentions_count_the_topics_participants(make_stream, admin, member, crowd):
    big = make_stream("all-hands", member, admin, *crowd)
    for person in crowd[:14]:
        assert_success(to_channel(person, big, topic="party"))
    # 14 participants, and the sender makes 15: allowed.
    assert_success(to_channel(member, big, "@**topic** cake?", topic="party"))
    assert_success(to_channel(crowd[14], big, topic="party"))  # 16 now
    assert_error(to_channel(member, big, "@**topic** more cake?", topic="party"), 400,
                 "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
                 "You do not have permission to use topic wildcard mentions in this topic.")  # fmt: skip
    assert_success(to_channel(member, big, "@**topic** cake?", topic="a quiet topic"))


def test_edits_are_checked_too(make_stream, admin, member, crowd):
    big = make_stream("all-hands", member, admin, *crowd[:14])
    message_id = assert_success(to_channel(member, big, "hi"))["id"]
    assert_error(api_for(member).patch(f"/messages/{message_id}", {"content": "@**all** hi"}), 400,
                 "STREAM_WILDCARD_MENTION_NOT_ALLOWED")  # fmt: skip
    allow_mentions(admin, SystemGroups.EVERYONE)
    assert realm_state(member)["realm_wildcard_mention_policy"] == 1
    assert_success(api_for(member).patch(f"/messages/{message_id}", {"content": "@**all** hi"}))


# --- the Django admin -----------------------------------------------------------------------------


def test_the_admin_sets_the_policies(staff, make_stream, realm, admin, member, other_realm):
    private = make_stream("moderation", admin, private=True)
    public = make_stream("lobby", admin)
    foreign = make_stream("theirs", in_realm=other_realm, private=True)
    page = staff.get(f"/admin/realms/realm/{realm.id}/change/").content.decode()
    assert 'name="topics_policy"' in page
    # The moderation channel's choices: the organization's private channels only.
    choices = page.split('name="moderation_request_channel"')[1].split("</select>")[0]
    assert ">moderation<" in choices
    assert ">lobby<" not in choices
    assert ">theirs<" not in page
    url = f"/admin/realms/realm/{realm.id}/change/"
    for refused in (public, foreign):
        response = staff.post(url, realm_admin_form(realm, moderation_request_channel=refused.id))
        assert response.status_code == 200  # the form again, with the error
        assert Realm.objects.get(id=realm.id).moderation_request_channel_id is None
    response = staff.post(url, realm_admin_form(realm, waiting_period_threshold=10**7))
    assert "Ensure this value is less than or equal to 1000000." in response.content.decode()
    form = realm_admin_form(realm, moderation_request_channel=private.id, topics_policy="disable_empty_topic")
    assert staff.post(url, form).status_code == 302
    state = realm_state(member)
    assert state["realm_moderation_request_channel_id"] == private.id
    assert state["realm_topics_policy"] == "disable_empty_topic"


def test_existing_organizations_keep_wildcard_mentions_for_everyone(db):
    groups_migration = importlib.import_module("apps.groups.migrations.0002_system_groups_of_existing_realms")
    migration = importlib.import_module("apps.realms.migrations.0013_realm_policies")
    old = Realm.objects.create(string_id="old", name="Old")
    groups_migration.create_system_groups(django_apps, None)
    migration.keep_everyone(django_apps, None)
    everyone = UserGroup.objects.get(realm=old, name=SystemGroups.EVERYONE)
    assert Realm.objects.get(id=old.id).can_mention_many_users_group_id == everyone.id
