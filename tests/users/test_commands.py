"""Operator commands: their contract for scripts (--json) and their refusals."""

import json
import os
import re
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from apps.invites.models import MultiuseInvite
from apps.messages.models import Message
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog
from apps.subscriptions.models import Stream
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.create_user import do_create_user
from apps.users.models import BotService, BotType, Role, User
from apps.users.selectors import api_email
from tests.api import ApiClient, assert_success
from tests.factories import BotFactory, UserFactory
from tests.server import BASE_DIR


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def run_json(*args: str) -> dict:
    return json.loads(run(*args, "--json"))


def test_create_realm_json_and_the_key_works(db, tmp_path):
    password_file = tmp_path / "pw"
    password_file.write_text("a long enough password 42\n")
    out = run_json(
        "create_realm", "--string-id", "acme", "--name", "Acme Corp", "--owner-email", "boss@acme.example",
        "--owner-full-name", "Bea Boss", "--password-file", str(password_file),
    )  # fmt: skip
    owner = User.objects.get(id=out["user_id"])
    assert out["realm"] == "acme"
    assert out["api_key"] == owner.api_key
    assert owner.role == Role.OWNER
    assert owner.check_password("a long enough password 42")
    assert out["realm_url"] == "http://acme.testserver"
    body = assert_success(
        ApiClient(email=out["email"], api_key=out["api_key"], host="acme.testserver").get("/users/me")
    )
    assert body["user_id"] == owner.id


def test_a_new_organization_starts_with_general_and_sandbox_which_everyone_joins(db):
    # As a new Zulip organization: its people have somewhere to talk from the first minute.
    out = run_json(
        "create_realm", "--string-id", "acme", "--name", "Acme Corp", "--owner-email", "boss@acme.example",
        "--owner-full-name", "Bea Boss",
    )  # fmt: skip
    realm = Realm.objects.get(string_id="acme")
    owner_client = ApiClient(email=out["email"], api_key=out["api_key"], host="acme.testserver")
    subscriptions = assert_success(owner_client.get("/users/me/subscriptions"))["subscriptions"]
    assert sorted(sub["name"] for sub in subscriptions) == ["general", "sandbox"]
    assert all(not sub["invite_only"] for sub in subscriptions)
    general = Stream.objects.get(realm=realm, name="general")
    assert sorted(Stream.objects.filter(realm=realm, is_default=True).values_list("name", flat=True)) == [
        "general",
        "sandbox",
    ]
    assert (realm.new_stream_announcements_stream, realm.zulip_update_announcements_stream) == (general, general)
    # Someone who joins later joins both; a bot, neither.
    member = do_create_user(realm, "mo@acme.example", "Mo Member", acting_user=None)
    assert sorted(Stream.objects.filter(subscriptions__user=member).values_list("name", flat=True)) == [
        "general",
        "sandbox",
    ]
    owner = User.objects.get(id=out["user_id"])
    bot = do_create_user(
        realm, "bot@acme.example", "A Bot", bot_type=BotType.GENERIC, bot_owner=owner, acting_user=None
    )
    assert not Stream.objects.filter(subscriptions__user=bot).exists()


def test_create_default_realm(db):
    out = run_json(
        "create_realm",
        "--string-id",
        "",
        "--name",
        "Home",
        "--owner-email",
        "o@example.com",
        "--owner-full-name",
        "O Wner",
    )
    assert out["realm"] == ""
    assert Realm.objects.get(string_id="").name == "Home"


def test_create_realm_names_the_address_given_and_how_to_get_a_password(db):
    """The production QA pass: the owner was printed as user2@... (the API address its email
    visibility shows) with no word on how to log in without a password."""
    out = run("create_realm", "--string-id", "", "--name", "Home", "--owner-email", "o@example.com",
              "--owner-full-name", "O Wner")  # fmt: skip
    owner = User.objects.get(delivery_email="o@example.com")
    assert f"Owner: O Wner <o@example.com>  API key: {owner.api_key}" in out
    assert "No password yet: choose one with 'Forgot your password?' on http://testserver/login/" in out
    assert api_email(owner) != owner.delivery_email  # a new organization shows administrators only
    assert f"(shown to others, and in the API, as {api_email(owner)})" in out


@pytest.mark.parametrize(
    ("string_id", "msg"),
    [
        ("ab", "Subdomain needs to have length 3 or greater."),
        ("Bad_Id", "Subdomain can only have lowercase letters, numbers, and '-'s."),
        ("-acme", "Subdomain cannot start or end with a '-'."),
        ("www", "Subdomain unavailable. Please choose a different one."),
        ("zephyr", "Subdomain unavailable. Please choose a different one."),
    ],
)
def test_create_realm_refuses_bad_subdomains(other_realm, string_id, msg):
    with pytest.raises(CommandError, match=msg.replace(".", r"\.").replace("(", r"\(")):
        run(
            "create_realm",
            f"--string-id={string_id}",
            "--name",
            "X",
            "--owner-email",
            "o@example.com",
            "--owner-full-name",
            "O",
        )
    assert not User.objects.filter(delivery_email="o@example.com").exists()


@pytest.mark.parametrize("external_host", ["192.168.1.20:8000", "[::1]:8000", "10.0.0.7"])
def test_no_subdomain_organizations_on_an_ip_address(db, settings, external_host):
    """An organization at acme.192.168.1.20 would be reachable by nobody; the default one is fine."""
    settings.EXTERNAL_HOST = external_host
    with pytest.raises(CommandError, match="Organizations on subdomains need EXTERNAL_HOST to be a domain name; "):
        run("create_realm", "--string-id", "acme", "--name", "Acme", "--owner-email", "o@acme.example",
            "--owner-full-name", "Olga")  # fmt: skip
    assert not Realm.objects.filter(string_id="acme").exists()
    out = run("create_realm", "--string-id", "", "--name", "Home", "--owner-email", "o@example.com",
              "--owner-full-name", "Olga")  # fmt: skip
    assert f"Created organization 'Home' at http://{external_host}" in out


def test_create_realm_rolls_back_when_the_owner_is_invalid(db):
    with pytest.raises(CommandError, match="Invalid address"):
        run("create_realm", "--string-id", "acme", "--name", "Acme", "--owner-email", "nope", "--owner-full-name", "O")
    assert not Realm.objects.filter(string_id="acme").exists()


def test_create_user_roles(realm):
    out = run_json(
        "create_user", "--realm", "", "--email", "mod@example.org", "--full-name", "Mo Derator", "--role", "moderator"
    )
    assert User.objects.get(id=out["user_id"]).role == Role.MODERATOR
    assert out["role"] == "moderator"
    assert_success(ApiClient(email=out["email"], api_key=out["api_key"]).get("/users/me"))


def test_create_user_says_what_it_made(realm, member):
    out = run("create_user", "--realm", "", "--email", "b@example.com", "--full-name", "Bee",
              "--bot-type", "generic", "--bot-owner", member.delivery_email)  # fmt: skip
    assert out.startswith("Created generic bot Bee <")  # (the operator QA pass: "Created member Bee")
    out = run("create_user", "--realm", "", "--email", "g@example.com", "--full-name", "Gus", "--role", "guest")
    assert out.startswith("Created guest Gus <")


def test_create_bot_with_service(realm, member):
    out = run_json(
        "create_user", "--realm", "", "--email", "hook-bot@example.com", "--full-name", "Hook Bot",
        "--bot-type", "outgoing_webhook", "--bot-owner", member.delivery_email, "--service-url", "https://bots.example.com/hook",
    )  # fmt: skip
    bot = User.objects.get(id=out["user_id"])
    assert (bot.bot_type, bot.bot_owner_id, bot.has_usable_password()) == (BotType.OUTGOING_WEBHOOK, member.id, False)
    service = BotService.objects.get(bot=bot)
    assert service.base_url == "https://bots.example.com/hook"
    assert out["service_token"] == service.token
    assert out["service_url"] == "https://bots.example.com/hook"
    assert re.fullmatch(r"[A-Za-z0-9]{32}", service.token)  # about 190 bits
    # Named by its short name (zulip-botserver loads the bot its configuration's section names).
    assert service.name == out["service_name"] == "hook"
    out = run_json(
        "create_user", "--realm", "", "--email", "other-bot@example.com", "--full-name", "Other Bot",
        "--bot-type", "outgoing_webhook", "--bot-owner", member.delivery_email, "--service-url", "https://bots.example.com/x",
        "--service-name", "helloworld",
    )  # fmt: skip
    assert out["service_name"] == BotService.objects.get(bot_id=out["user_id"]).name == "helloworld"


@pytest.mark.parametrize(
    ("extra", "msg"),
    [
        (["--bot-type", "generic"], "--bot-owner is required"),
        (["--bot-owner", "member@example.com"], "need --bot-type"),
        (["--bot-type", "outgoing_webhook", "--bot-owner", "member@example.com"], "need a service URL"),
        (["--bot-type", "generic", "--bot-owner", "nobody@example.com"], "No user with email"),
        (["--bot-type", "embedded", "--bot-owner", "member@example.com"], "invalid choice: 'embedded'"),
    ],
)
def test_create_user_refusals(member, extra, msg):
    with pytest.raises(CommandError, match=msg):
        run("create_user", "--realm", "", "--email", "x-bot@example.com", "--full-name", "X Bot", *extra)
    assert not User.objects.filter(delivery_email="x-bot@example.com").exists()


def test_create_user_in_unknown_realm(db):
    with pytest.raises(CommandError, match="no organization with string_id 'nope'"):
        run("create_user", "--realm", "nope", "--email", "a@example.com", "--full-name", "A")


def test_create_user_duplicate_email(member):
    with pytest.raises(CommandError, match="already in use"):
        run("create_user", "--realm", "", "--email", "MEMBER@example.com", "--full-name", "Again")


def test_change_user_role(owner, member):
    assert "from member to administrator" in run("change_user_role", member.delivery_email, "administrator")
    member.refresh_from_db()
    assert member.role == Role.ADMINISTRATOR
    with pytest.raises(CommandError, match="already has this role"):
        run("change_user_role", member.delivery_email, "admin")  # Zulip's name for it
    with pytest.raises(CommandError, match="only organization owner"):
        run("change_user_role", owner.delivery_email, "member")


def test_change_user_role_permission(owner):
    run("change_user_role", owner.delivery_email, "can_change_user_emails")
    owner.refresh_from_db()
    assert owner.can_change_user_emails
    run("change_user_role", owner.delivery_email, "can_change_user_emails", "--revoke")
    owner.refresh_from_db()
    assert not owner.can_change_user_emails


def test_an_existing_owner_is_let_into_the_django_admin(owner):
    """The operator QA pass: create_realm's owner could not use /admin/, and createsuperuser refused
    their address ("already in use")."""
    client = Client()
    client.force_login(owner)
    assert client.get("/admin/").status_code == 302  # to the admin's login
    granted = run("change_user_role", owner.delivery_email, "is_staff")
    assert "Granted is_staff" in granted
    assert "shows and changes every organization of this server" in granted  # said (the operator QA pass)
    assert client.get("/admin/").status_code == 200
    assert "every organization" not in run("change_user_role", owner.delivery_email, "is_staff", "--revoke")
    assert client.get("/admin/").status_code == 302
    bot = BotFactory(realm=owner.realm, bot_owner=owner)
    with pytest.raises(CommandError, match="Bots have no special permissions"):
        run("change_user_role", bot.delivery_email, "is_staff")


def test_same_email_in_two_realms_needs_realm(member, other_realm):
    twin = UserFactory(realm=other_realm, delivery_email="member@example.com")
    with pytest.raises(CommandError, match="pass --realm"):
        run("change_user_role", "member@example.com", "moderator")
    run("change_user_role", "member@example.com", "moderator", "--realm", "zephyr")
    twin.refresh_from_db()
    member.refresh_from_db()
    assert (twin.role, member.role) == (Role.MODERATOR, Role.MEMBER)


def test_deactivate_is_a_dry_run_by_default(member, bot):
    out = run("deactivate_user", member.delivery_email)
    assert "Dry run" in out
    assert bot.delivery_email in out
    member.refresh_from_db()
    assert member.is_active
    assert "Deactivated 2 account(s)" in run("deactivate_user", member.delivery_email, "--for-real")
    member.refresh_from_db()
    bot.refresh_from_db()
    assert not member.is_active
    assert not bot.is_active
    with pytest.raises(CommandError, match="already deactivated"):
        run("deactivate_user", member.delivery_email, "--for-real")


def test_deactivate_refuses_the_only_owner(owner):
    with pytest.raises(CommandError, match="only organization owner"):
        run("deactivate_user", owner.delivery_email, "--for-real")


def test_reactivate(member):
    member.is_active = False
    member.save()
    run("reactivate_user", member.delivery_email)
    member.refresh_from_db()
    assert member.is_active
    with pytest.raises(CommandError, match="already active"):
        run("reactivate_user", member.delivery_email)


def test_rotate_api_key(member):
    old = member.api_key
    out = run_json("rotate_api_key", member.delivery_email, "--realm", "")
    member.refresh_from_db()
    assert out["api_key"] == member.api_key != old
    assert ApiClient(member, api_key=old).get("/users/me").status_code == 401
    assert_success(ApiClient(member).get("/users/me"))


def test_a_system_bot_gets_no_key_to_use(realm):
    """The operator QA pass: the key printed for the Welcome Bot sent direct messages as it."""
    bot = BotFactory(realm=realm, bot_owner=None)  # the server's own (the Welcome Bot's kind)
    old = bot.api_key
    with pytest.raises(CommandError, match="is a system bot: the server writes as it, nobody signs in as it"):
        run("rotate_api_key", bot.delivery_email)
    bot.refresh_from_db()
    assert bot.api_key == old


def test_user_found_by_hidden_api_email(realm):
    user = UserFactory(realm=realm, email_address_visibility=3)
    out = run_json("rotate_api_key", f"user{user.id}@parley.invalid")
    assert out["user_id"] == user.id


def test_list_realms(realm, other_realm, member, foreign_user):
    BotFactory(realm=realm, bot_owner=member)
    BotFactory(realm=realm, bot_owner=None)  # a system bot (the Welcome Bot's kind): the server's
    UserFactory(realm=realm, is_active=False)
    rows = run_json("list_realms")["realms"]
    assert [(r["string_id"], r["active_users"], r["active_bots"]) for r in rows] == [("", 1, 1), ("zephyr", 1, 0)]
    text = run("list_realms")
    assert "(default)" in text
    assert "zephyr" in text


def test_bootstrap_demo_only_on_an_empty_database(db):
    out = run("bootstrap_demo", "--url", "http://127.0.0.1:8000")
    owner = User.objects.get(delivery_email="owner@example.com")
    assert f"curl -u owner@example.com:{owner.api_key} http://127.0.0.1:8000/api/v1/users/me" in out
    assert {u.role for u in User.objects.filter(bot_type__isnull=True)} == {
        Role.OWNER,
        Role.ADMINISTRATOR,
        Role.MEMBER,
        Role.GUEST,
    }
    assert User.objects.filter(bot_type=BotType.GENERIC, bot_owner=owner).count() == 1
    # Every person of the demo logs in to the web app (http://127.0.0.1:8000/) with one password.
    password = out.split("with the password: ")[1].split()[0]
    for person in User.objects.filter(bot_type__isnull=True):
        assert person.check_password(password), person
    assert owner.is_staff
    demo_users = User.objects.exclude(User.SYSTEM_BOTS)  # not the organization's own bots
    for user in demo_users:
        assert user.api_key in out
    # Everyone is in #general, which has a first message.
    general = Stream.objects.get(name="general")
    assert set(general.subscriptions.values_list("user_id", flat=True)) == set(demo_users.values_list("id", flat=True))
    assert Message.objects.filter(stream=general, topic="welcome").count() == 1
    # One link for a first colleague, into #general.
    invite = MultiuseInvite.objects.get()
    # On EXTERNAL_HOST's address ("testserver" here), as every link the server gives, not --url's.
    assert f"Invite a colleague (valid 10 days): http://testserver/join/{invite.key}/" in out
    assert (invite.referred_by, list(invite.streams.all()), invite.revoked) == (owner, [general], False)
    again = run("bootstrap_demo", "--url", "http://127.0.0.1:8123")
    assert "already set up" in again
    assert "Sign in at http://127.0.0.1:8123/" in again
    assert demo_users.count() == 5
    # `make run`'s: the database migrated first, in the same process.
    out = run("bootstrap_demo", "--migrate")
    assert "No migrations to apply." in out
    assert "already set up" in out
    # #general is the organization's default channel: someone added later joins it, with its messages.
    assert general.is_default
    later = do_create_user(owner.realm, "later@example.com", "Lee Later", acting_user=None)
    assert general.subscriptions.filter(user=later, active=True).exists()
    assert Message.objects.filter(stream=general, topic="welcome", user_messages__user=later).exists()


def test_createsuperuser_makes_the_default_organization_and_an_owner_with_the_admin(db, tmp_path, monkeypatch):
    # Parley's own command (users belong to an organization), in place of Django's.
    password_file = tmp_path / "pw"
    password_file.write_text("a long enough password 42\n")
    out = run_json("createsuperuser", "--noinput", "--email", "root@example.com", "--password-file", str(password_file))
    user = User.objects.get(id=out["user_id"])
    assert (user.role, user.is_staff, user.is_superuser, user.realm.string_id) == (Role.OWNER, True, True, "")
    assert user.check_password("a long enough password 42")
    # A second one joins the existing organization; the environment may give what options do not.
    monkeypatch.setenv("DJANGO_SUPERUSER_EMAIL", "second@example.com")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "another long password 43")
    second = User.objects.get(id=run_json("createsuperuser", "--noinput")["user_id"])
    assert (second.realm_id, second.role, second.is_staff) == (user.realm_id, Role.OWNER, True)
    assert Realm.objects.count() == 1


def test_createsuperuser_without_a_terminal_says_what_it_needs(db):
    with pytest.raises(CommandError, match="Email is needed"):
        run("createsuperuser", "--noinput")
    # Without --noinput too, when nobody can answer (the verify QA pass: an EOFError's traceback).
    with pytest.raises(CommandError, match="Email is needed"):
        run("createsuperuser")
    with pytest.raises(CommandError, match="A password is needed"):
        run("createsuperuser", "--email", "root@example.com")
    assert not User.objects.exists()


# --- change_user_settings -------------------------------------------------------------------------


def test_change_user_settings_for_everyone(realm, owner, member, guest, bot, admin):
    do_deactivate_user(admin, acting_user=owner)
    out = run("change_user_settings", "--realm", "", "--setting", "emojiset", "--value", "text")
    assert out == 'emojiset is now "text" for 3 user(s) of http://testserver (3 changed).\n'
    emojisets = {u.id: u.emojiset for u in User.objects.filter(realm=realm)}
    assert emojisets == {owner.id: "text", member.id: "text", guest.id: "text", bot.id: "google", admin.id: "google"}
    # Through the action: audited with no acting user, so not as the users' own choice.
    entries = RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_SETTING_CHANGED)
    assert {(e.modified_user_id, e.acting_user_id) for e in entries} == {(u.id, None) for u in (owner, member, guest)}


def test_change_user_settings_for_some(realm, owner, member, guest):
    out = run_json(
        "change_user_settings", "--realm", "", "--setting", "twenty_four_hour_time", "--value", "true",
        "--users", member.delivery_email, guest.delivery_email,
    )  # fmt: skip
    assert out == {"setting": "twenty_four_hour_time", "value": True, "changed": sorted([member.id, guest.id])}
    assert [u.twenty_four_hour_time for u in User.objects.filter(id__in=[owner.id, member.id]).order_by("id")] == [
        False,
        True,
    ]
    again = run_json(
        "change_user_settings", "--realm", "", "--setting", "twenty_four_hour_time", "--value", "true",
        "--users", member.delivery_email,
    )  # fmt: skip
    assert again["changed"] == []


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (["--setting", "emojiset", "--value", "apple"], "Invalid emojiset"),
        (["--setting", "twenty_four_hour_time", "--value", "yes"], "twenty_four_hour_time is not valid JSON"),
        (["--setting", "color_scheme", "--value", "2.5"], "color_scheme is not an integer"),
        (["--setting", "email_notifications_batching_period_seconds", "--value", "0"], "Invalid email batching period"),
        (["--setting", "dense_mode", "--value", "true"], "Unknown setting 'dense_mode'"),
        (["--setting", "full_name", "--value", "x"], "Unknown setting 'full_name'"),
        (["--setting", "emojiset", "--value", "text", "--users", "nobody@example.com"], "No user with email"),
        (["--setting", "emojiset", "--value", "text", "--users", "bot"], "Bots have no settings"),
    ],
)
def test_change_user_settings_refusals(realm, member, bot, args, msg):
    args = [bot.delivery_email if arg == "bot" else arg for arg in args]
    with pytest.raises(CommandError, match=msg):
        run("change_user_settings", "--realm", "", *args)
    assert User.objects.get(id=member.id).emojiset == "google"


def test_change_user_settings_needs_an_organization(db):
    with pytest.raises(CommandError, match="no organization with string_id 'nowhere'"):
        run("change_user_settings", "--realm", "nowhere", "--setting", "emojiset", "--value", "text")


def test_bootstrap_demo_migrates_with_one_line_a_migration(tmp_path):
    """`make run`'s first start, its output through a pipe (a log, `| tee`): each "Applying ..." and
    its " OK" on one line (the newcomer QA pass: a hundred lines of " OK" alone)."""
    environment = os.environ | {"DATABASE_URL": f"sqlite:///{tmp_path / 'fresh.sqlite3'}", "REDIS_URL": ""}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    output = subprocess.run(
        [sys.executable, "manage.py", "bootstrap_demo", "--migrate", "--url", "http://127.0.0.1:8000"],
        cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=300, check=True,
    ).stdout  # fmt: skip
    assert "  Applying realms.0001_initial... OK\n" in output
    assert "\n OK\n" not in output
    assert "Created the demo organization 'Parley Demo'" in output


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda path: None, "No such file or directory"),
        (lambda path: path.mkdir(), "Is a directory"),
        (lambda path: path.write_bytes(b"\xff\xfe\n"), "not UTF-8 text"),
    ],
)
def test_a_password_file_that_cannot_be_read_is_a_message(db, tmp_path, make, reason):
    """The operator QA pass: a traceback (FileNotFoundError, IsADirectoryError, UnicodeDecodeError)."""
    path = tmp_path / "pw"
    make(path)
    with pytest.raises(CommandError, match=f"^The password file {path} cannot be read: {reason}.$"):
        run("create_realm", "--string-id", "delta", "--name", "Delta", "--owner-email", "d@d.example",
            "--owner-full-name", "Dee", "--password-file", str(path))  # fmt: skip
    assert not Realm.objects.filter(string_id="delta").exists()


def test_changepassword_sets_a_persons_password_in_their_organization(db, tmp_path, realm, other_realm):
    """Django's changepassword failed on an address two organizations share (MultipleObjectsReturned),
    and without a terminal (EOFError): the operator QA pass."""
    here = UserFactory(realm=realm, delivery_email="sam@example.com")
    there = UserFactory(realm=other_realm, delivery_email="sam@example.com")
    before = there.password
    path = tmp_path / "pw"
    path.write_text("a long enough password 42\n")
    with pytest.raises(CommandError, match=r"Several organizations have a user sam@example\.com; pass --realm\."):
        run("changepassword", "sam@example.com", "--password-file", str(path))
    assert "Password changed for sam@example.com" in run(
        "changepassword", "sam@example.com", "--realm", "", "--password-file", str(path)
    )
    here.refresh_from_db()
    there.refresh_from_db()
    assert here.check_password("a long enough password 42")
    assert there.password == before
    assert RealmAuditLog.objects.filter(modified_user=here, event_type=AuditLogEventType.USER_PASSWORD_CHANGED).exists()
    path.write_text("password\n")
    with pytest.raises(CommandError, match=r"This password is too common\."):
        run("changepassword", "sam@example.com", "--realm", "", "--password-file", str(path))
    with pytest.raises(CommandError, match="A password is needed: give --password-file"):
        run("changepassword", "sam@example.com", "--realm", "")  # no terminal here
    bot = BotFactory(realm=realm, bot_owner=here)
    with pytest.raises(CommandError, match="is a bot: bots have no password"):
        run("changepassword", bot.delivery_email, "--password-file", str(path))


def test_a_dump_is_loaded_into_a_new_database_only(realm, tmp_path):
    """The README's move to PostgreSQL: loaded after `make run` had made the demo, a dump's rows
    replaced the demo's of the same ids and joined the others (the verify QA pass)."""
    dump = tmp_path / "parley.jsonl"
    dump.write_text("")
    with pytest.raises(CommandError, match=r"already has 1 organization\(s\): a dump is loaded into a new one only"):
        run("loaddata", str(dump))


def test_the_demo_is_not_made_while_a_dump_waits_to_be_loaded(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    (tmp_path / "parley.jsonl").write_text("")
    out = run("bootstrap_demo")
    assert f"No demo made: {tmp_path / 'parley.jsonl'} is waiting to be loaded" in out
    assert not Realm.objects.exists()
