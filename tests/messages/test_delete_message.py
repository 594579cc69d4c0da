"""DELETE /messages/{id}: who may delete which message and until when (the organization's
can_delete_any_message_group, can_delete_own_message_group and message_content_delete_limit_seconds),
the delete_message events of channel and direct messages, the channel's first message, refusals
that change nothing, and the settings' migration and /register state."""

import importlib
import json
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.utils import timezone

from apps.groups.actions.settings import do_change_realm_permission_group_setting
from apps.groups.models import UserGroup
from apps.messages.actions.delete import do_delete_message
from apps.messages.actions.send import do_send_message
from apps.messages.errors import InvalidMessageError
from apps.messages.models import Message, UserMessage
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.users.models import Role, User
from tests.api import api_for, assert_error, assert_success
from tests.factories import BotFactory
from tests.messages.conftest import db_state

NO_PERMISSION = "You don't have permission to delete this message"
TOO_LATE = "The time limit for deleting this message has passed"


def delete(user, message_id):
    return api_for(user).delete(f"/messages/{message_id}")


def refused(user, message_id, msg, code="BAD_REQUEST") -> None:
    before = db_state()
    assert_error(delete(user, message_id), 400, code, msg)
    assert db_state() == before


def sent_ago(message_id: int, seconds: int) -> None:
    Message.objects.filter(id=message_id).update(date_sent=timezone.now() - timedelta(seconds=seconds))


def set_group(realm, setting: str, group_name: str) -> None:
    group = UserGroup.objects.get(realm=realm, name=group_name)
    do_change_realm_permission_group_setting(realm, setting, group.id, acting_user=None)


@pytest.fixture
def design(make_stream, member, admin, moderator, guest):
    return make_stream("design", member, admin, moderator, guest)


# --- who may --------------------------------------------------------------------------------------


def test_a_sender_deletes_their_own_message_and_everyone_is_told(design, send, member, admin, capture_events):
    keep = send(member, design, "first")
    message_id = send(member, design, "oops")
    with capture_events(admin, member, client_capabilities={"bulk_message_deletion": True}) as received:
        assert_success(delete(member, message_id))
    assert not Message.objects.filter(id=message_id).exists()
    assert not UserMessage.objects.filter(message_id=message_id).exists()
    expected = {"type": "delete_message", "message_type": "stream", "stream_id": design.id, "topic": "lunch",
                "message_ids": [message_id]}  # fmt: skip
    assert received[admin.id] == [expected]
    assert received[member.id] == [expected]
    assert Message.objects.filter(id=keep).exists()


def test_clients_without_bulk_deletion_get_message_id(design, send, member, admin, capture_events):
    message_id = send(member, design)
    with capture_events(admin) as received:
        assert_success(delete(member, message_id))
    [event] = [event for event in received[admin.id] if event["type"] == "delete_message"]
    assert event["message_id"] == message_id
    assert "message_ids" not in event


def test_deleting_a_channels_first_message_moves_its_first_message_id(design, send, member, admin, capture_events):
    first, second = send(member, design, "one"), send(member, design, "two")
    assert Stream.objects.get(id=design.id).first_message_id == first
    with capture_events(admin) as received:
        assert_success(delete(member, first))
    assert Stream.objects.get(id=design.id).first_message_id == second
    assert {"type": "stream", "op": "update", "property": "first_message_id", "value": second,
            "stream_id": design.id, "name": "design"} in received[admin.id]  # fmt: skip


def test_a_direct_message_is_deleted_for_its_people(send, member, admin, owner, capture_events):
    message_id = send(member, [admin])
    with capture_events(admin, member, owner, client_capabilities={"bulk_message_deletion": True}) as received:
        assert_success(delete(member, message_id))
    expected = [{"type": "delete_message", "message_type": "private", "message_ids": [message_id]}]
    assert received[admin.id] == expected
    assert received[member.id] == expected
    assert received[owner.id] == []
    assert not Message.objects.filter(id=message_id).exists()


def test_people_cannot_delete_others_messages(design, send, member, moderator, guest):
    message_id = send(moderator, design)
    refused(member, message_id, NO_PERMISSION)
    refused(guest, message_id, NO_PERMISSION)
    refused(member, send(guest, design), NO_PERMISSION)


def test_a_bots_owner_deletes_its_messages(realm, design, member, moderator):
    bot = BotFactory(realm=realm, bot_owner=member, full_name="Helper Bot")
    message = do_send_message(bot, stream=design, topic="t", content="beep", acting_user=bot)
    refused(moderator, message.id, NO_PERMISSION)
    assert_success(delete(member, message.id))
    assert not Message.objects.filter(id=message.id).exists()


@pytest.mark.parametrize("role", ["admin", "owner"])
def test_administrators_delete_any_message_at_any_time(request, role, design, send, member):
    message_id = send(member, design)
    sent_ago(message_id, 10 * 365 * 24 * 3600)
    assert_success(delete(request.getfixturevalue(role), message_id))


def test_own_messages_only_within_the_time_limit(realm, design, send, member):
    message_id = send(member, design)
    sent_ago(message_id, 601)
    refused(member, message_id, TOO_LATE)
    sent_ago(message_id, 590)
    assert_success(delete(member, message_id))
    realm.message_content_delete_limit_seconds = None
    realm.save(update_fields=["message_content_delete_limit_seconds"])
    late = send(member, design)
    sent_ago(late, 10 * 365 * 24 * 3600)
    assert_success(delete(member, late))


def test_the_groups_decide(realm, design, send, member, moderator, guest):
    set_group(realm, "can_delete_own_message_group", "role:moderators")
    refused(member, send(member, design), NO_PERMISSION)
    assert_success(delete(moderator, send(moderator, design)))
    set_group(realm, "can_delete_any_message_group", "role:members")
    assert_success(delete(member, send(moderator, design)))
    # Guests never hold a setting that cannot be everyone, even as its group's members.
    refused(guest, send(member, design), NO_PERMISSION)
    # Everyone (the default) lets guests delete their own.
    set_group(realm, "can_delete_own_message_group", "role:everyone")
    assert_success(delete(guest, send(guest, design)))


def channel_group(stream, setting: str, group_name: str, *, by) -> None:
    group = UserGroup.objects.get(realm=stream.realm, name=group_name)
    assert_success(api_for(by).patch(f"/streams/{stream.id}", {setting: json.dumps({"new": group.id})}))


def test_a_channels_own_groups_decide_too(realm, design, make_stream, send, member, moderator, admin, guest):
    """Zulip's feature level 407, as its test_delete_message_according_to_can_delete_*: the channel's
    groups add to the organization's, for that channel's messages only; its administrators hold
    them only as anyone else; direct messages follow the organization's alone."""
    other = make_stream("other", member, moderator, guest)
    set_group(realm, "can_delete_any_message_group", "role:nobody")
    set_group(realm, "can_delete_own_message_group", "role:nobody")
    refused(member, send(member, design), NO_PERMISSION)
    channel_group(design, "can_delete_own_message_group", "role:members", by=admin)
    assert_success(delete(member, send(member, design)))
    refused(guest, send(guest, design), NO_PERMISSION)  # not a member
    refused(member, send(member, other), NO_PERMISSION)
    refused(member, send(moderator, design), NO_PERMISSION)
    channel_group(design, "can_delete_any_message_group", "role:everyone", by=admin)
    assert_success(delete(guest, send(moderator, design)))  # the channel's setting may be everyone
    assert_success(delete(guest, send(guest, design)))  # who deletes any message deletes their own
    refused(guest, send(moderator, other), NO_PERMISSION)
    refused(member, send(member, [moderator]), NO_PERMISSION)
    shown = assert_success(api_for(member).get(f"/streams/{design.id}"))["stream"]
    everyone = UserGroup.objects.get(realm=realm, name="role:everyone").id
    assert (shown["can_delete_any_message_group"], shown["can_resolve_topics_group"]) == (
        everyone, UserGroup.objects.get(realm=realm, name="role:nobody").id)  # fmt: skip


def test_who_may_change_a_channels_delete_policy(realm, design, member, moderator, admin, owner):
    """The organization's can_set_delete_message_policy_group (moderators by default), beside
    administering the channel; anyone making a channel may leave these at nobody."""
    assert_success(api_for(moderator).post("/users/me/subscriptions", {"subscriptions": '[{"name": "mod"}]'}))
    mod = Stream.objects.get(name="mod")
    channel_group(mod, "can_delete_own_message_group", "role:members", by=moderator)
    assert_success(api_for(member).post("/users/me/subscriptions", {"subscriptions": '[{"name": "mine"}]'}))
    mine = Stream.objects.get(name="mine")  # administered by its creator, a member
    before = db_state()
    members = UserGroup.objects.get(realm=realm, name="role:members").id
    for setting in ("can_delete_own_message_group", "can_delete_any_message_group"):
        change = {setting: json.dumps({"new": members})}
        assert_error(
            api_for(member).patch(f"/streams/{mine.id}", change), 400, "BAD_REQUEST", "Insufficient permission"
        )
        params = {"subscriptions": '[{"name": "new"}]', setting: str(members)}
        assert_error(api_for(member).post("/users/me/subscriptions", params), 400, "BAD_REQUEST",
                     "Insufficient permission")  # fmt: skip
    assert db_state() == before
    nobody = UserGroup.objects.get(realm=realm, name="role:nobody").id
    params = {"subscriptions": '[{"name": "new"}]', "can_delete_own_message_group": str(nobody)}
    assert_success(api_for(member).post("/users/me/subscriptions", params))
    set_group(realm, "can_set_delete_message_policy_group", "role:members")
    channel_group(mine, "can_delete_any_message_group", "role:members", by=member)
    state = assert_success(api_for(owner).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_set_delete_message_policy_group"] == members
    assert state["realm_can_set_topics_policy_group"] == members


def test_messages_the_user_cannot_see_are_invalid(realm, make_stream, send, member, admin, foreign_user):
    secret = make_stream("secret", admin, private=True)
    hidden = send(admin, secret)
    refused(member, hidden, "Invalid message(s)")
    theirs = do_send_message(foreign_user, dm_with=[foreign_user], content="mine", acting_user=foreign_user)
    refused(admin, theirs.id, "Invalid message(s)")
    refused(admin, 99_999_999, "Invalid message(s)")


def test_a_message_is_deleted_once(design, send, member):
    message_id = send(member, design)
    assert_success(delete(member, message_id))
    refused(member, message_id, "Invalid message(s)")


def test_another_request_deleting_it_first_makes_this_one_invalid(design, send, member, admin):
    message_id = send(member, design)
    message = Message.objects.select_related("stream", "sender", "realm").get(id=message_id)
    do_delete_message(message, acting_user=admin)
    with pytest.raises(InvalidMessageError):
        do_delete_message(message, acting_user=member)


# --- settings -------------------------------------------------------------------------------------


def test_register_has_the_settings(realm, member):
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    groups = {g.name: g.id for g in UserGroup.objects.filter(realm=realm, is_system_group=True)}
    assert state["realm_can_delete_any_message_group"] == groups["role:administrators"]
    assert state["realm_can_delete_own_message_group"] == groups["role:everyone"]
    assert state["realm_message_content_delete_limit_seconds"] == 600


def test_the_migration_sets_existing_organizations_to_zulips_defaults(db):
    groups_migration = importlib.import_module("apps.groups.migrations.0002_system_groups_of_existing_realms")
    migration = importlib.import_module("apps.realms.migrations.0009_message_delete_policy")
    old = Realm.objects.create(string_id="old", name="Old")
    User.objects.create(realm=old, delivery_email="a@old.example", full_name="Old", role=Role.ADMINISTRATOR)
    groups_migration.create_system_groups(django_apps, None)
    migration.set_defaults(django_apps, None)
    old.refresh_from_db()
    assert old.can_delete_any_message_group.name == "role:administrators"
    assert old.can_delete_own_message_group.name == "role:everyone"
    assert old.message_content_delete_limit_seconds == 600
