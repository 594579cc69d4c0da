"""The Welcome Bot: created with each organization (and for older ones by a migration), it greets
every new person with one direct message (the organization's text, or their invitation's); and
POST /realm/test_welcome_bot_custom_message, which sends an administrator that message."""

import importlib

import pytest
from django.apps import apps as django_apps

from apps.core.errors import JsonableError
from apps.groups.models import UserGroupMembership
from apps.invites.actions.welcome import GREETING, do_create_welcome_bot
from apps.invites.models import WelcomeBot
from apps.invites.selectors import get_welcome_bot
from apps.messages.models import Message, UserMessage
from apps.realms.actions import do_change_realm_settings
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.actions.create_user import do_create_user
from apps.users.models import BotType, Role, User
from apps.users.selectors import fake_email_domain
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import RealmFactory, UserFactory, realm_admin_form
from tests.invites.conftest import api

HEADING = "**A message from the administrators of {name}:**"


def welcomes_of(user: User) -> list[Message]:
    """The direct messages the user received from their organization's Welcome Bot."""
    bot = get_welcome_bot(user.realm_id)
    return list(Message.objects.filter(sender=bot, stream__isnull=True, user_messages__user=user).order_by("id"))


def greeting(realm: Realm) -> str:
    return GREETING.format(name=realm.name, url=realm.url)


@pytest.fixture
def welcome_bot(realm):
    """The default organization's Welcome Bot (the factories make organizations without one)."""
    return do_create_welcome_bot(realm)


# --- the bot ---------------------------------------------------------------------------------------


def test_new_organizations_have_a_welcome_bot_that_greets_their_owner(db):
    realm, owner = do_create_realm_with_owner("acme", "Acme", owner_email="o@acme.example", owner_full_name="Olga",
                                              acting_user=None)  # fmt: skip
    bot = get_welcome_bot(realm)
    assert (bot.full_name, bot.bot_type, bot.bot_owner, bot.role) == ("Welcome Bot", BotType.GENERIC, None, Role.MEMBER)
    assert bot.delivery_email == f"welcome-bot@{fake_email_domain(realm.host)}"
    assert not bot.has_usable_password()
    groups = set(UserGroupMembership.objects.filter(user=bot).values_list("user_group__name", flat=True))
    assert groups == set()  # the server's own bots are in no group of the organization
    [message] = welcomes_of(owner)
    assert message.content == greeting(realm)
    assert "Hello, and welcome to <strong>Acme</strong>!" in message.rendered_content
    assert (message.sending_client, message.recipient.type) == ("Internal", message.recipient.Type.PERSONAL)


def test_one_bot_per_organization(realm, welcome_bot):
    assert do_create_welcome_bot(realm) == welcome_bot
    assert WelcomeBot.objects.filter(realm=realm).count() == 1


def test_the_bots_address_is_numbered_when_taken(realm):
    UserFactory(realm=realm, delivery_email=f"welcome-bot@{fake_email_domain(realm.host)}")
    bot = do_create_welcome_bot(realm)
    assert bot.delivery_email == f"welcome-bot-2@{fake_email_domain(realm.host)}"


def test_the_migration_gives_older_organizations_a_bot(realm, other_realm, welcome_bot):
    migration = importlib.import_module("apps.invites.migrations.0003_welcome_bots_of_existing_realms")
    UserFactory(realm=other_realm, delivery_email=f"Welcome-Bot@{fake_email_domain(other_realm.host)}")
    migration.create_welcome_bots(django_apps, None)
    migration.create_welcome_bots(django_apps, None)  # organizations that have one are left alone
    assert get_welcome_bot(realm) == welcome_bot
    bot = get_welcome_bot(other_realm)
    assert bot.delivery_email == f"welcome-bot-2@{fake_email_domain(other_realm.host)}"
    assert (bot.full_name, bot.bot_type, bot.bot_owner, bot.role, bot.is_active) == (
        "Welcome Bot", BotType.GENERIC, None, Role.MEMBER, True,
    )  # fmt: skip
    assert len(bot.api_key) == 32
    assert not bot.has_usable_password()
    groups = set(UserGroupMembership.objects.filter(user=bot).values_list("user_group__name", flat=True))
    assert groups == {"role:members", "role:fullmembers"}
    entry = RealmAuditLog.objects.filter(realm=other_realm, event_type=AuditLogEventType.USER_CREATED).get()
    assert (entry.modified_user, entry.extra_data) == (bot, {"role": Role.MEMBER})
    # The bot it made greets newcomers like any other.
    newcomer = do_create_user(other_realm, "new@zephyr.example", "Nina New", acting_user=None)
    assert len(welcomes_of(newcomer)) == 1


# --- whom it greets, and with what ------------------------------------------------------------------


def test_every_person_is_greeted_with_the_organizations_text(realm, welcome_bot, admin):
    do_change_realm_settings(realm, {"welcome_message_custom_text": "Read #**rules**."}, acting_user=admin)
    person = do_create_user(realm, "new@example.com", "Nina New", acting_user=None)
    [message] = welcomes_of(person)
    assert message.content == greeting(realm) + "\n\n" + HEADING.format(name=realm.name) + "\n\nRead #**rules**."
    flags = UserMessage.objects.get(message=message, user=person).flags
    assert not flags & UserMessage.READ


def test_an_invitations_text_replaces_the_organizations(realm, welcome_bot, admin):
    do_change_realm_settings(realm, {"welcome_message_custom_text": "The default."}, acting_user=admin)
    invited = do_create_user(realm, "a@example.com", "Ann", welcome_message_custom_text="Yours.", acting_user=None)
    assert welcomes_of(invited)[0].content.endswith(HEADING.format(name=realm.name) + "\n\nYours.")
    quiet = do_create_user(realm, "b@example.com", "Bob", welcome_message_custom_text="", acting_user=None)
    assert welcomes_of(quiet)[0].content == greeting(realm)


def test_bots_are_not_greeted(realm, welcome_bot, member):
    bot = do_create_user(realm, "helper-bot@example.com", "Helper", bot_type=BotType.GENERIC, bot_owner=member,
                         acting_user=None)  # fmt: skip
    assert welcomes_of(bot) == []


def test_no_greeting_without_an_active_bot(realm, welcome_bot):
    no_bot_yet = RealmFactory(string_id="nobot")
    assert do_create_user(no_bot_yet, "x@example.com", "Xavier", acting_user=None)
    assert not Message.objects.exists()
    do_deactivate_user(welcome_bot, acting_user=None)
    assert welcomes_of(do_create_user(realm, "y@example.com", "Yan", acting_user=None)) == []


def test_only_system_bots_have_no_owner(realm):
    with pytest.raises(JsonableError, match="A bot needs an owner"):
        do_create_user(realm, "stray-bot@example.com", "Stray", bot_type=BotType.GENERIC, acting_user=None)
    with pytest.raises(JsonableError, match="A system bot is a bot without an owner"):
        do_create_user(realm, "person@example.com", "Person", system_bot=True, acting_user=None)


# --- the organization's text ------------------------------------------------------------------------


def test_the_organizations_text_is_in_register_and_bounded(realm, admin, staff):
    state = assert_success(api(admin).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_welcome_message_custom_text"] == ""
    with pytest.raises(JsonableError, match=r"welcome_message_custom_text is too long \(limit: 8000 characters\)"):
        do_change_realm_settings(realm, {"welcome_message_custom_text": "x" * 8001}, acting_user=admin)
    form = realm_admin_form(realm)
    response = staff.post(
        f"/admin/realms/realm/{realm.id}/change/", {**form, "welcome_message_custom_text": "y" * 8001}
    )
    assert "At most 8000 characters." in response.content.decode()
    response = staff.post(f"/admin/realms/realm/{realm.id}/change/", {**form, "welcome_message_custom_text": "Hi!"})
    assert response.status_code == 302
    assert Realm.objects.get(id=realm.id).welcome_message_custom_text == "Hi!"
    state = assert_success(api(admin).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_welcome_message_custom_text"] == "Hi!"


# --- POST /realm/test_welcome_bot_custom_message -----------------------------------------------------


def test_administrators_get_the_message_a_newcomer_would(realm, admin, capture_events):
    with capture_events(admin) as received:
        body = assert_success(
            api(admin).post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "Hi **you**"})
        )
    message = Message.objects.get(id=body["message_id"])
    bot = get_welcome_bot(realm)  # created for this organization, which had none
    assert message.sender == bot
    assert message.content == greeting(realm) + "\n\n" + HEADING.format(name=realm.name) + "\n\nHi **you**"
    assert UserMessage.objects.filter(message=message).count() == 2  # the administrator and the bot
    [event] = [e for e in received[admin.id] if e["type"] == "message"]
    assert (event["message"]["id"], event["message"]["sender_id"]) == (message.id, bot.id)
    assert_success(api(admin).post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "again"}))
    assert WelcomeBot.objects.filter(realm=realm).count() == 1


def test_the_test_message_takes_up_to_8000_code_points(admin, welcome_bot):
    body = assert_success(
        api(admin).post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "😀" * 8000})
    )
    assert Message.objects.get(id=body["message_id"]).content.endswith("😀" * 8000)


@pytest.mark.parametrize(
    ("params", "status", "code", "msg"),
    [
        ({}, 400, "REQUEST_VARIABLE_MISSING", "Missing 'welcome_message_custom_text' argument"),
        ({"welcome_message_custom_text": ""}, 400, "BAD_REQUEST", "Message must not be empty"),
        ({"welcome_message_custom_text": "x" * 8001}, 400, "REQUEST_VARIABLE_INVALID",
         "welcome_message_custom_text is too long (limit: 8000 characters)"),
    ],
)  # fmt: skip
def test_the_test_message_refusals_send_nothing(admin, welcome_bot, params, status, code, msg):
    assert_error(api(admin).post("/realm/test_welcome_bot_custom_message", params), status, code, msg)
    assert not Message.objects.exists()


def test_only_administrators_send_test_messages(member, moderator, guest, owner, welcome_bot):
    for user in (member, moderator, guest):
        response = api(user).post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "x"})
        assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    response = ApiClient().post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "x"})
    assert_error(response, 401, "UNAUTHORIZED")
    assert not Message.objects.exists()
    assert_success(api(owner).post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "x"}))


def test_a_deactivated_bot_sends_no_test_message(admin, welcome_bot):
    do_deactivate_user(welcome_bot, acting_user=None)
    response = api(admin).post("/realm/test_welcome_bot_custom_message", {"welcome_message_custom_text": "x"})
    assert_error(response, 400, "BAD_REQUEST", "The Welcome Bot is deactivated.")
    assert not Message.objects.exists()
