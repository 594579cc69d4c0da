"""Who may send direct messages: the organization's direct_message_permission_group (every direct
message must include one of its people, the sender or a recipient) and
direct_message_initiator_group (only its people start conversations; anyone answers one), set with
PATCH /realm, shown in /register, applied as Zulip applies them to sends and scheduled messages."""

import importlib
import time

import pytest
from django.apps import apps as django_apps

from apps.groups.models import SystemGroups, UserGroup
from apps.realms.models import Realm
from tests.api import api_for, assert_error, assert_success
from tests.factories import UserFactory
from tests.messages.conftest import db_state, post_message

DISABLED = "Direct messages are disabled in this organization."
UNAUTHORIZED = "This conversation does not include any users who can authorize it."
NOT_STARTER = "You are not allowed to start direct message conversations."


def dm(sender, *people, content="hello"):
    return post_message(sender, type="private", to=[person.id for person in people], content=content)


def set_group(admin, name, value):
    assert_success(api_for(admin).patch("/realm", {name: {"new": value}}))


def refused(response, msg):
    before = db_state()
    assert_error(response(), 400, "BAD_REQUEST", msg)
    assert db_state() == before


@pytest.fixture
def colleague(realm):
    return UserFactory(realm=realm)


def test_by_default_anyone_sends_to_anyone(realm, sys_groups, member, colleague, guest):
    state = assert_success(api_for(guest).post("/register", {"fetch_event_types": ["realm"]}))
    everyone = sys_groups[SystemGroups.EVERYONE].id
    assert state["realm_direct_message_permission_group"] == everyone
    assert state["realm_direct_message_initiator_group"] == everyone
    assert_success(dm(guest, member))
    assert_success(dm(member, colleague, guest))


def test_nobody_authorizes_direct_messages_but_to_oneself_and_bots(
    realm, sys_groups, admin, member, colleague, bot, capture_events
):
    nobody = sys_groups[SystemGroups.NOBODY].id
    with capture_events(member) as received:
        set_group(admin, "direct_message_permission_group", nobody)
    assert received[member.id] == [
        {"type": "realm", "op": "update_dict", "property": "default",
         "data": {"direct_message_permission_group": nobody}}
    ]  # fmt: skip
    refused(lambda: dm(member, colleague), DISABLED)
    refused(lambda: dm(admin, member), DISABLED)  # administrators too
    refused(lambda: dm(member, colleague, bot), DISABLED)
    assert_success(dm(member, member))  # a note to oneself
    assert_success(dm(member, bot))  # a bot, or several, only
    assert_success(dm(bot, member))  # bots are never refused (the server's notices, a bot's answers)


def test_a_conversation_needs_one_person_of_the_group(realm, sys_groups, admin, moderator, member, colleague, guest):
    set_group(admin, "direct_message_permission_group", sys_groups[SystemGroups.MODERATORS].id)
    refused(lambda: dm(member, colleague), UNAUTHORIZED)
    refused(lambda: dm(guest, member, colleague), UNAUTHORIZED)
    assert_success(dm(member, moderator))  # a recipient authorizes it
    assert_success(dm(admin, member))  # the sender does (administrators are moderators)
    assert_success(dm(guest, member, admin))
    # The group may be any people: here one member named directly.
    set_group(admin, "direct_message_permission_group", {"direct_members": [colleague.id], "direct_subgroups": []})
    assert_success(dm(member, colleague))
    refused(lambda: dm(member, moderator), UNAUTHORIZED)


def test_only_initiators_start_conversations_anyone_answers(realm, sys_groups, admin, member, colleague, guest):
    set_group(admin, "direct_message_initiator_group", sys_groups[SystemGroups.ADMINISTRATORS].id)
    refused(lambda: dm(member, colleague), NOT_STARTER)
    refused(lambda: dm(colleague, member), NOT_STARTER)
    assert_success(dm(admin, member))
    assert_success(dm(member, admin))  # the answer, in the conversation the administrator started
    # A group conversation exists once one message was sent to its people, whoever sent it.
    refused(lambda: dm(member, colleague, guest), NOT_STARTER)
    assert_success(dm(admin, member, colleague))
    assert_success(dm(colleague, member, admin))
    refused(lambda: dm(member, colleague, guest), NOT_STARTER)  # other people: another conversation
    # A conversation is its own people's: member's with the administrator opens none with colleague.
    refused(lambda: dm(member, colleague), NOT_STARTER)
    assert_success(dm(member, member))


def test_both_settings_apply_together(realm, sys_groups, admin, moderator, member, colleague):
    set_group(admin, "direct_message_permission_group", sys_groups[SystemGroups.MODERATORS].id)
    set_group(admin, "direct_message_initiator_group", sys_groups[SystemGroups.MODERATORS].id)
    refused(lambda: dm(member, moderator), NOT_STARTER)  # authorized by the moderator, not started by one
    assert_success(dm(moderator, member))
    assert_success(dm(member, moderator))
    refused(lambda: dm(member, colleague), UNAUTHORIZED)  # the first rule is said first


def test_scheduled_direct_messages_are_checked_when_scheduled(realm, sys_groups, admin, member, colleague):
    set_group(admin, "direct_message_permission_group", sys_groups[SystemGroups.NOBODY].id)
    body = {"type": "direct", "to": [colleague.id], "content": "later",
            "scheduled_delivery_timestamp": int(time.time()) + 3600}  # fmt: skip
    refused(lambda: api_for(member).post("/scheduled_messages", body), DISABLED)
    assert_success(api_for(member).post("/scheduled_messages", {**body, "to": [member.id]}))


def test_the_settings_are_checked(realm, sys_groups, admin, member, other_realm):
    theirs = UserGroup.objects.get(realm=other_realm, name=SystemGroups.NOBODY)
    for name in ("direct_message_permission_group", "direct_message_initiator_group"):
        assert_error(api_for(admin).patch("/realm", {name: {"new": theirs.id}}), 400, "BAD_REQUEST",
                     "Invalid user group")  # fmt: skip
        assert_error(api_for(member).patch("/realm", {name: {"new": sys_groups[SystemGroups.NOBODY].id}}), 400,
                     "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")  # fmt: skip
    realm = Realm.objects.get(id=realm.id)
    everyone = sys_groups[SystemGroups.EVERYONE].id
    assert (realm.direct_message_permission_group_id, realm.direct_message_initiator_group_id) == (everyone, everyone)


def test_existing_organizations_let_everyone_send_direct_messages(db):
    groups_migration = importlib.import_module("apps.groups.migrations.0002_system_groups_of_existing_realms")
    migration = importlib.import_module("apps.realms.migrations.0026_direct_message_groups")
    old = Realm.objects.create(string_id="old", name="Old")
    groups_migration.create_system_groups(django_apps, None)
    migration.set_default(django_apps, None)
    everyone = UserGroup.objects.get(realm=old, name=SystemGroups.EVERYONE)
    old = Realm.objects.get(id=old.id)
    assert (old.direct_message_permission_group_id, old.direct_message_initiator_group_id) == (everyone.id,) * 2
