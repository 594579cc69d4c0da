"""/login/ (counted against the address in the limit POST /fetch_api_key uses), the account page
(API email and key, zuliprc, curl line) with its key rotation, and logging out."""

import json
import re
from urllib.parse import unquote

import pytest
from django.test import Client

from apps.realms.actions import do_change_realm_settings
from apps.realms.models import AuditLogEventType, EmailVisibility, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import BotService, BotType, User
from apps.users.selectors import api_email
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory, UserFactory
from tests.web.conftest import browser, submit

# The factories' password (tests.factories.UserFactory).
RIGHT = "correct horse battery"


def log_in(client: Client, email: str, password: str = RIGHT):
    return submit(client, "/login/", {"email": email, "password": password})


# --- logging in ------------------------------------------------------------------------------------


def test_logging_in_leads_to_the_account_page(member):
    client = browser()
    page = client.get("/login/")
    assert page.status_code == 200
    assert "<script" not in page.content.decode()
    response = log_in(client, "MEMBER@example.com")
    assert (response.status_code, response["Location"]) == (302, "/")
    assert member.api_key in client.get("/account/").content.decode()
    again = client.get("/login/")  # already logged in
    assert (again.status_code, again["Location"]) == (302, "/")


def test_the_login_page_shows_the_organizations_description(realm, admin, member):
    """Rendered as Zulip renders it (Markdown; nothing of a page's own runs), after a refusal too."""
    assert 'class="realm-description"' not in browser().get("/login/").content.decode()  # none yet: nothing said
    description = "Where **Acme** talks.\n\n<script>alert(1)</script> <img src=x onerror=alert(1)>"
    do_change_realm_settings(realm, {"description": description}, acting_user=admin)
    for page in (browser().get("/login/"), log_in(browser(), member.delivery_email, "wrong")):
        html = page.content.decode()
        assert '<div class="realm-description" dir="auto"><p>Where <strong>Acme</strong> talks.</p>' in html
        assert "<script" not in html
        assert "<img" not in html
    # Rendered as a message is: mentions name people (the API's test checks the rest).
    do_change_realm_settings(realm, {"description": f"Ask @**{member.full_name}**."}, acting_user=admin)
    html = browser().get("/login/").content.decode()
    assert f'<span class="user-mention" data-user-id="{member.id}">@{member.full_name}</span>' in html


@pytest.mark.parametrize(
    ("email", "password", "status", "message"),
    [
        ("member@example.com", "wrong", 401, "Your username or password is incorrect"),
        ("nobody@example.com", RIGHT, 401, "Your username or password is incorrect"),
        ("not-an-address", RIGHT, 401, "Enter a valid email address."),
        ("member@example.com", "", 400, "This field is required."),
    ],
)
def test_wrong_credentials_log_nobody_in(member, email, password, status, message):
    client = browser()
    response = log_in(client, email, password)
    assert response.status_code == status
    assert message in response.content.decode()
    assert client.get("/account/")["Location"] == "/login/"


def test_another_organizations_user_is_unknown_here(realm, foreign_user):
    response = log_in(browser(), foreign_user.delivery_email)
    assert response.status_code == 401
    assert "Your username or password is incorrect" in response.content.decode()
    assert log_in(browser("zephyr.testserver"), foreign_user.delivery_email).status_code == 302


def test_deactivated_accounts_cannot_log_in(member, owner):
    do_deactivate_user(member, acting_user=owner)
    response = log_in(browser(), member.delivery_email)
    assert response.status_code == 401
    assert "Account is deactivated" in response.content.decode()


def test_failed_attempts_from_one_address_are_limited_whatever_the_usernames(
    member, admin, rate_limit_backend, settings
):
    """One password tried against many accounts (the security QA pass: each address's 5 attempts,
    and no end to the addresses): the address's failures are limited too; its successes are not
    counted, and another address is not concerned."""
    settings.RATE_LIMIT_AUTH_FAILURES_BY_IP = (3, 1800)
    api = ApiClient()
    assert_success(api.post("/fetch_api_key", {"username": admin.delivery_email, "password": RIGHT}))
    for number in range(3):
        guess = {"username": f"someone{number}@example.com", "password": "Winter2026"}
        assert_error(api.post("/fetch_api_key", guess), 401, "AUTHENTICATION_FAILED")
    # The address has had its failures: even the right password is refused, on the login page too.
    right = {"username": member.delivery_email, "password": RIGHT}
    assert_error(api.post("/fetch_api_key", right), 429, "RATE_LIMIT_HIT")
    assert log_in(browser(), member.delivery_email).status_code == 429
    # From another address, the same person logs in (the username's own limit was not touched).
    assert_success(api.post("/fetch_api_key", right, REMOTE_ADDR="192.0.2.7"))


def test_attempts_are_limited_with_fetch_api_keys_count(member, rate_limit_backend):
    api = ApiClient()
    for _ in range(3):
        assert_error(api.post("/fetch_api_key", {"username": member.delivery_email, "password": "x"}), 401,
                     "AUTHENTICATION_FAILED")  # fmt: skip
    client = browser()
    for _ in range(2):
        assert log_in(client, member.delivery_email, "wrong").status_code == 401
    refused = log_in(client, member.delivery_email)  # the right password, but too many attempts
    assert refused.status_code == 429
    assert "Too many attempts! Try again in" in refused.content.decode()
    assert client.get("/account/")["Location"] == "/login/"
    assert_error(api.post("/fetch_api_key", {"username": member.delivery_email, "password": RIGHT}), 429,
                 "RATE_LIMIT_HIT")  # fmt: skip


def test_a_page_whose_session_ended_is_told_why_it_logs_in_again(member):
    """The web app sends an ended session here (?session_ended): the page says why (the web admin QA
    pass: a deactivated person's open tab showed the login page with no word)."""
    client = browser()
    assert "Your session ended" not in client.get("/login/").content.decode()
    assert "Your session ended" in client.get("/login/?session_ended").content.decode()


def test_password_logins_can_be_disabled(member, realm, admin):
    do_change_realm_settings(realm, {"password_auth_enabled": False}, acting_user=admin)
    page = browser().get("/login/").content.decode()
    assert "Logging in with a password is turned off in this organization" in page
    assert "<form" not in page
    assert "/accounts/password/reset/" not in page
    client = Client(HTTP_HOST="testserver")  # no form to take the CSRF token from
    assert client.post("/login/", {"email": member.delivery_email, "password": RIGHT}).status_code == 401
    assert client.get("/account/")["Location"] == "/login/"


def test_login_needs_the_csrf_token(member):
    client = browser()
    assert client.post("/login/", {"email": member.delivery_email, "password": RIGHT}).status_code == 403
    assert client.get("/account/")["Location"] == "/login/"


def test_a_form_sent_without_its_token_says_what_to_do(member):
    # A login page left open past its cookie: a page of Parley's, not Django's (which speaks of DEBUG).
    response = browser().post("/login/", {"email": member.delivery_email, "password": RIGHT}, HTTP_ACCEPT="text/html")
    assert (response.status_code, response["Content-Type"]) == (403, "text/html; charset=utf-8")
    text = response.content.decode()
    assert all(words in text for words in ("This page has expired", "reload the page"))
    assert not any(words in text for words in ("DEBUG", "CSRF"))
    # A client that is not a browser: Zulip's envelope.
    response = browser().post("/login/", {"email": member.delivery_email})
    assert_error(response, 403, "CSRF_FAILED", "CSRF error: CSRF cookie not set.")


def test_pages_without_collected_static_files_say_so_with_503(realm, settings, tmp_path):
    """The operator QA pass: every page was a 500 (a missing manifest entry) while the API worked."""
    settings.STATIC_ROOT = str(tmp_path)  # nothing collected there
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
    }
    client = Client(raise_request_exception=False, HTTP_ACCEPT="text/html")
    response = client.get("/login/")
    assert response.status_code == 503
    assert "Temporarily unavailable" in response.content.decode()
    assert response["Retry-After"]


def test_paths_without_the_slash_redirect(member):
    for path in ("/login", "/account"):
        response = browser().get(path)
        assert (response.status_code, response["Location"]) == (302, f"{path}/")


# --- the account page ------------------------------------------------------------------------------


def test_the_account_page_shows_what_a_client_needs(member, realm):
    client = browser()
    log_in(client, member.delivery_email)
    page = client.get("/account/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    email = api_email(member)
    assert f'<dd id="api-email">{email}</dd>' in html
    assert f'<dd id="api-key">{member.api_key}</dd>' in html
    assert f"[api]\nemail={email}\nkey={member.api_key}\nsite=http://testserver\n" in html
    # ... and as a file (Zulip's "Download zuliprc"): the same text.
    link = re.search(
        r'<a id="download-zuliprc" [^>]*download="zuliprc" href="data:application/octet-stream,([^"]+)"', html
    )
    assert unquote(link[1]) == f"[api]\nemail={email}\nkey={member.api_key}\nsite=http://testserver\n"
    assert f"curl -u {email}:{member.api_key} http://testserver/api/v1/users/me" in html
    # No script but the page's own (asking before the key is rotated).
    assert re.findall(r"<script[^>]*>", html) == ['<script type="module" src="/static/web/account.js">']


def test_the_account_page_gives_the_files_of_ones_bots(member, admin, realm):
    """As Zulip's settings (the bots QA pass: a bot's zuliprc could only be pieced together): each
    active bot of one's own, and for an outgoing-webhook bot a botserverrc with its token."""
    helper = BotFactory(realm=realm, bot_owner=member, full_name="Helper", delivery_email="helper-bot@example.com")
    served = BotFactory(
        realm=realm, bot_owner=member, bot_type=BotType.OUTGOING_WEBHOOK, delivery_email="served-bot@example.com"
    )
    service = BotService.objects.create(bot=served, name="helloworld", base_url="http://bots.example.com/", token="t0k")
    gone = BotFactory(realm=realm, bot_owner=member, is_active=False, delivery_email="gone-bot@example.com")
    theirs = BotFactory(realm=realm, bot_owner=admin, delivery_email="theirs-bot@example.com")
    client = browser()
    log_in(client, member.delivery_email)
    html = client.get("/account/").content.decode()
    files = {
        (name, unquote(text))
        for name, text in re.findall(
            r'download="(zuliprc|botserverrc)" href="data:application/octet-stream,([^"]+)"', html
        )
    }
    site = "http://testserver"
    assert files == {
        ("zuliprc", f"[api]\nemail={api_email(member)}\nkey={member.api_key}\nsite={site}\n"),
        ("zuliprc", f"[api]\nemail=helper-bot@example.com\nkey={helper.api_key}\nsite={site}\n"),
        ("zuliprc", f"[api]\nemail=served-bot@example.com\nkey={served.api_key}\nsite={site}\n"),
        (
            "botserverrc",
            f"[helloworld]\nemail=served-bot@example.com\nkey={served.api_key}\nsite={site}\ntoken={service.token}\n",
        ),
    }
    assert gone.api_key not in html
    assert theirs.api_key not in html


def test_a_bot_is_made_on_the_account_page(member, realm):
    """The bots QA pass: only the API made a bot (the admin's "Add bot" is refused). Made here, its
    files are on the page at once; a refusal is said on the page and makes nothing."""
    client = browser()
    log_in(client, member.delivery_email)
    html = client.get("/account/").content.decode()
    assert 'id="make-bot"' in html
    kinds = re.findall(r'<option value="(\d)"', re.search(r'<select name="bot_type".*?</select>', html, re.S)[0])
    assert kinds == ["1", "2", "3"]  # what the organization lets a member make (every kind by default)
    fields = {"full_name": "Deploy Bot", "short_name": "deploy", "bot_type": "3",
              "payload_url": "https://bots.example.com/deploy", "interface_type": "2"}  # fmt: skip
    account = client.get("/account/")
    made = submit(client, "/account/bots/", fields, page=account)
    assert (made.status_code, made["Location"]) == (302, "/account/")
    bot = User.objects.get(full_name="Deploy Bot")
    assert (bot.bot_owner, bot.bot_type, bot.full_name) == (member, BotType.OUTGOING_WEBHOOK, "Deploy Bot")
    service = bot.services.get()
    assert (service.base_url, service.interface) == ("https://bots.example.com/deploy", BotService.Interface.SLACK)
    page = client.get("/account/").content.decode()
    assert "Deploy Bot was made: its zuliprc is below." in page
    assert f"key%3D{bot.api_key}" in page
    assert "botserverrc" in page

    count = User.objects.count()
    refusals = [  # said beside their fields, in the form's words (the verify QA pass)
        ({"short_name": "deploy", "bot_type": "1"}, "short_name", "already has this username&#x27;s address"),
        ({"short_name": "a b", "bot_type": "1"}, "short_name", "Use letters, digits and - only."),
        ({"short_name": "hook", "bot_type": "3", "payload_url": ""}, "payload_url", "needs the URL of its service"),
        ({"short_name": "hook", "bot_type": "3", "payload_url": "ftp://x.example/"}, "payload_url", "Not a URL"),
        ({"short_name": "hook", "bot_type": "4"}, "bot_type", "Select a valid choice."),
    ]
    for fields, field, why in refusals:
        refused = submit(
            client, "/account/bots/", {"full_name": "Another", "interface_type": "1", **fields}, page=account
        )
        assert refused.status_code == 400
        beside = re.search(rf'<div class="field" id="field-{field}">.*?</div>', refused.content.decode(), re.S)[0]
        assert why in beside
        assert 'aria-invalid="true"' in beside
    assert User.objects.count() == count


def test_a_bot_is_made_only_while_the_page_shows_keys(member, settings):
    """The form is on the page, and the new bot's key shown, only once the password was typed lately:
    a form sent later makes nothing, and says to type it again."""
    client = browser()
    log_in(client, member.delivery_email)
    account = client.get("/account/")
    session = client.session
    session["parley_password_typed_at"] = 0
    session.save()
    fields = {"full_name": "Late", "short_name": "late", "bot_type": "1", "interface_type": "1"}
    late = submit(client, "/account/bots/", fields, page=account)
    assert (late.status_code, late["Location"]) == (302, "/account/")
    assert "Type your password again to make a bot." in client.get("/account/").content.decode()
    assert not User.objects.filter(full_name="Late").exists()


def test_a_member_the_organization_lets_make_no_bot_is_offered_none(member, admin, sys_groups):
    for name in ("can_create_bots_group", "can_create_write_only_bots_group"):
        new = json.dumps({"new": sys_groups["role:administrators"].id})
        assert_success(ApiClient(admin).patch("/realm", {name: new}))
    client = browser()
    log_in(client, member.delivery_email)
    account = client.get("/account/")
    assert 'id="make-bot"' not in account.content.decode()
    fields = {"full_name": "Sneaky", "short_name": "sneaky", "bot_type": "1"}
    refused = submit(client, "/account/bots/", fields, page=account)
    assert (refused.status_code, refused["Location"]) == (302, "/account/")
    assert "Your organization does not let you make bots." in client.get("/account/").content.decode()
    assert not User.objects.filter(full_name="Sneaky").exists()


def test_the_curl_line_can_be_pasted_into_a_shell(realm):
    # An address with & in it (the hostile QA pass: the shell took the line apart there).
    odd = UserFactory(
        realm=realm, delivery_email="o+x&y@example.com", email_address_visibility=EmailVisibility.EVERYONE
    )
    client = browser()
    log_in(client, odd.delivery_email)
    html = client.get("/account/").content.decode()
    assert f"curl -u &#x27;o+x&amp;y@example.com:{odd.api_key}&#x27; http://testserver/api/v1/users/me" in html


def test_a_hidden_address_is_the_api_email(member, realm):
    User.objects.filter(id=member.id).update(email_address_visibility=EmailVisibility.ADMINS)
    client = browser()
    log_in(client, member.delivery_email)
    html = client.get("/account/").content.decode()
    hidden = f"user{member.id}@parley.invalid"
    assert f'<dd id="api-email">{hidden}</dd>' in html
    assert_success(ApiClient(email=hidden, api_key=member.api_key).get("/users/me"))


def test_anonymous_and_foreign_sessions_are_sent_to_log_in(member, foreign_user):
    assert browser().get("/account/")["Location"] == "/login/"
    client = browser()
    client.force_login(foreign_user)  # a session of another organization's user
    assert client.get("/account/")["Location"] == "/login/"
    assert client.get("/account/", HTTP_HOST="zephyr.testserver").status_code == 200


def test_a_deactivated_users_session_ends(member, owner):
    client = browser()
    log_in(client, member.delivery_email)
    do_deactivate_user(member, acting_user=owner)
    assert client.get("/account/")["Location"] == "/login/"


def test_the_key_is_shown_only_after_the_password_was_typed_lately(member, settings):
    """As Zulip asks for the password before showing a key: a session that did not type it lately
    (left open, or stolen) sees a form asking for it; typing it shows the key for a while."""
    settings.RATE_LIMIT_AUTH_FAILURES = (2, 1800)
    client = browser()
    client.force_login(member)  # a session whose password was never typed in it
    page = client.get("/account/")
    html = page.content.decode()
    assert page.status_code == 200
    assert member.api_key not in html
    assert 'id="show-key"' in html
    assert 'id="rotate"' not in html
    assert f'<dd id="api-email">{api_email(member)}</dd>' in html
    wrong = submit(client, "/account/", {"password": "wrong"}, page=page)
    assert wrong.status_code == 401
    assert "Your password is incorrect." in wrong.content.decode()
    assert member.api_key not in wrong.content.decode()
    assert submit(client, "/account/", {"password": ""}, page=page).status_code == 400
    right = submit(client, "/account/", {"password": RIGHT}, page=page)
    assert (right.status_code, right["Location"]) == (302, "/account/")
    assert f'<dd id="api-key">{member.api_key}</dd>' in client.get("/account/").content.decode()
    # Guesses count against the address, as logging in does (a success frees the slots).
    guesser = browser()
    guesser.force_login(member)
    for status in (401, 401, 429):
        assert submit(guesser, "/account/", {"password": "wrong"}).status_code == status
    assert "Too many attempts!" in submit(guesser, "/account/", {"password": RIGHT}).content.decode()


def test_the_typed_password_shows_the_key_for_fifteen_minutes(member):
    client = browser()
    log_in(client, member.delivery_email)
    assert member.api_key in client.get("/account/").content.decode()
    session = client.session
    session["parley_password_typed_at"] -= 15 * 60 + 1
    session.save()
    assert member.api_key not in client.get("/account/").content.decode()


def test_without_password_logins_the_key_is_shown(member, realm, admin):
    do_change_realm_settings(realm, {"password_auth_enabled": False}, acting_user=admin)
    client = browser()
    client.force_login(member)  # a session opened by signing up
    assert f'<dd id="api-key">{member.api_key}</dd>' in client.get("/account/").content.decode()


def test_rotating_the_key(member):
    client = browser()
    log_in(client, member.delivery_email)
    old_key = member.api_key
    page = client.get("/account/")
    response = submit(client, "/account/api_key/regenerate", {}, page=page)
    assert (response.status_code, response["Location"]) == (302, "/account/")
    member.refresh_from_db()
    assert member.api_key != old_key
    html = client.get("/account/").content.decode()
    assert member.api_key in html
    assert old_key not in html
    assert "Your API key was replaced" in html
    assert_error(ApiClient(email=member.delivery_email, api_key=old_key).get("/users/me"), 401, "UNAUTHORIZED")
    assert_success(ApiClient(member).get("/users/me"))
    entry = RealmAuditLog.objects.get(event_type=AuditLogEventType.USER_API_KEY_CHANGED)
    assert (entry.acting_user, entry.modified_user) == (member, member)


def test_rotation_is_a_post_with_the_token_of_a_logged_in_user(member):
    old_key = member.api_key
    client = browser()
    log_in(client, member.delivery_email)
    assert client.get("/account/api_key/regenerate").status_code == 405
    assert client.post("/account/api_key/regenerate").status_code == 403  # no CSRF token
    anonymous = browser()
    page = anonymous.get("/login/")
    assert submit(anonymous, "/account/api_key/regenerate", {}, page=page)["Location"] == "/login/"
    member.refresh_from_db()
    assert member.api_key == old_key


def test_logging_out(member):
    client = browser()
    log_in(client, member.delivery_email)
    page = client.get("/account/")
    response = submit(client, "/logout/", {}, page=page)
    assert (response.status_code, response["Location"]) == (302, "/login/")
    assert client.get("/account/")["Location"] == "/login/"
    assert "You are logged out." in client.get("/login/").content.decode()


def test_an_unknown_host_has_no_pages(realm):
    for path in ("/login/", "/account/"):
        page = browser("nowhere.testserver").get(path)
        assert page.status_code == 404
        assert "There is no organization here" in page.content.decode()
