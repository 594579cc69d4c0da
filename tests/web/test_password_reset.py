"""A forgotten password (/accounts/password/reset/, Zulip's addresses): the page answers the same
for any address and has the task worker email either a link or why there is none; the link sets a
new password once, for a person of the host's organization only, ends their other sessions and
their failed-login count; asking is limited per address."""

import re
from base64 import urlsafe_b64encode
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.db import connection
from django.test import Client

from apps.realms.actions import do_change_realm_settings
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import User
from tests.concurrency import at_once
from tests.factories import BotFactory
from tests.tasks import run_ready_tasks
from tests.web.conftest import browser, csrf_token, submit

NEW = "another long and unusual passphrase 48"
OLD = "correct horse battery"  # the factories' password (tests.factories.UserFactory)
LINK_RE = re.compile(r"https?://\S+/accounts/password/reset/\S+/")


def ask(email: str, host: str = "testserver"):
    return submit(browser(host), "/accounts/password/reset/", {"email": email})


def emailed(email: str) -> list[mail.EmailMessage]:
    run_ready_tasks()
    return [message for message in mail.outbox if message.to == [email]]


def link_in(message: mail.EmailMessage) -> str:
    return LINK_RE.search(message.body)[0]


def set_password(link: str, password: str = NEW, again: str | None = None, *, host: str = "testserver"):
    """Open the link as a browser does (sent on to the page without the token), then submit the form."""
    client = browser(host)
    opened = client.get(urlsplit(link).path, follow=True)
    if opened.status_code != 200:
        return opened
    path = opened.redirect_chain[-1][0]
    return client.post(path, {"csrfmiddlewaretoken": csrf_token(opened), "new_password1": password,
                              "new_password2": again if again is not None else password})  # fmt: skip


def logs_in(email: str, password: str) -> bool:
    return submit(browser(), "/login/", {"email": email, "password": password}).status_code == 302


def test_the_login_page_leads_to_it(realm):
    assert 'href="/accounts/password/reset/"' in browser().get("/login/").content.decode()
    do_change_realm_settings(realm, {"password_auth_enabled": False}, acting_user=None)
    assert "/accounts/password/reset/" not in browser().get("/login/").content.decode()


def test_a_person_sets_a_new_password_through_the_emailed_link(member):
    signed_in = browser()
    assert submit(signed_in, "/login/", {"email": member.delivery_email, "password": OLD}).status_code == 302
    response = ask("MEMBER@example.com")
    assert (response.status_code, response["Location"]) == (302, "/accounts/password/reset/done/")
    assert "Check your email" in browser().get(response["Location"]).content.decode()
    assert mail.outbox == []  # the task worker sends it
    [message] = emailed(member.delivery_email)
    assert message.subject == "Reset your password for Parley Test"
    link = link_in(message)
    assert link.startswith("http://testserver/accounts/password/reset/")

    refused = set_password(link, NEW, "not the same")
    assert refused.status_code == 400
    assert "two password fields" in refused.content.decode()
    assert set_password(link, "short").status_code == 400  # Django's validators: too short
    assert "too similar to the email address" in set_password(link, "member@example.com").content.decode()
    done = set_password(link)
    assert (done.status_code, done["Location"]) == (302, "/login/")

    assert logs_in(member.delivery_email, NEW)
    assert not logs_in(member.delivery_email, OLD)
    assert signed_in.get("/account/")["Location"] == "/login/"  # the other session ended
    entry = RealmAuditLog.objects.get(event_type=AuditLogEventType.USER_PASSWORD_CHANGED, modified_user=member)
    assert entry.acting_user_id == member.id
    used = set_password(link, "yet another unusual passphrase 49")
    assert used.status_code == 404
    assert "This link cannot be used" in used.content.decode()
    assert logs_in(member.delivery_email, NEW)


def test_logging_in_or_an_expired_link_ends_it(member, settings):
    ask(member.delivery_email)
    link = link_in(emailed(member.delivery_email)[0])
    assert logs_in(member.delivery_email, OLD)  # the link was for the password as it was before
    assert set_password(link).status_code == 404
    settings.PASSWORD_RESET_TIMEOUT = -1
    mail.outbox.clear()
    ask(member.delivery_email)
    assert set_password(link_in(emailed(member.delivery_email)[0])).status_code == 404
    assert logs_in(member.delivery_email, OLD)


def test_a_reset_ends_the_failed_login_count(member, settings):
    settings.RATE_LIMIT_AUTH_FAILURES = (2, 1800)
    for _ in range(2):
        assert not logs_in(member.delivery_email, "wrong")
    ask(member.delivery_email)
    assert set_password(link_in(emailed(member.delivery_email)[0])).status_code == 302
    assert logs_in(member.delivery_email, NEW)


@pytest.mark.parametrize("who", ["nobody", "bot", "deactivated"])
def test_an_address_without_an_account_here_is_told_so_and_the_page_says_the_same(realm, member, who):
    address = {"nobody": "nobody@example.com", "bot": "helper-bot@example.com", "deactivated": member.delivery_email}[
        who
    ]
    if who == "bot":
        BotFactory(realm=realm, bot_owner=member, delivery_email=address)
    if who == "deactivated":
        do_deactivate_user(member, acting_user=None)
    response = ask(address)
    assert (response.status_code, response["Location"]) == (302, "/accounts/password/reset/done/")
    [message] = emailed(address)
    assert not LINK_RE.search(message.body)
    expected = "has been deactivated" if who == "deactivated" else "There is no account with this address"
    assert expected in message.body


def test_each_organization_resets_its_own_people_only(realm, member, foreign_user):
    """foreign_user has member's address, in another organization (zephyr.testserver)."""
    ask(member.delivery_email, host="zephyr.testserver")
    [message] = emailed(member.delivery_email)
    assert "Zephyr" in message.subject
    foreign_link = link_in(message)
    assert foreign_link.startswith("http://zephyr.testserver/")
    here = foreign_link.replace("zephyr.testserver", "testserver")
    assert set_password(here).status_code == 404  # the link names zephyr's user
    assert logs_in(member.delivery_email, OLD)
    assert set_password(foreign_link, host="zephyr.testserver").status_code == 302
    assert User.objects.get(id=foreign_user.id).check_password(NEW)
    assert User.objects.get(id=member.id).check_password(OLD)


def test_a_link_naming_someone_else_does_not_work(member, admin):
    ask(member.delivery_email)
    link = link_in(emailed(member.delivery_email)[0])
    uid, token = link.rstrip("/").split("/")[-2:]
    admin_uid = urlsafe_b64encode(str(admin.id).encode()).decode().rstrip("=")
    for bad in (
        link.replace(uid, admin_uid),
        link.replace(token, "abc-123"),
        link.replace(uid, "%%%"),
        link.replace(uid, "OTIyMzM3MjAzNjg1NDc3NTgwOA"),
    ):  # fmt: skip  (2^63: no such id)
        assert set_password(bad).status_code == 404
    assert User.objects.get(id=admin.id).check_password(OLD)


def test_asking_is_limited_per_address_whatever_the_organization(member, foreign_user, settings):
    """foreign_user has member's address in another organization: one count for the address."""
    settings.RATE_LIMIT_PASSWORD_RESET = ((2, 3600), (5, 86400))
    assert ask(member.delivery_email).status_code == 302
    assert ask(member.delivery_email, host="zephyr.testserver").status_code == 302
    for host in ("testserver", "zephyr.testserver"):
        refused = ask(" Member@Example.com ", host=host)
        assert refused.status_code == 429
        assert "Too many password reset emails asked for!" in refused.content.decode()
    assert ask("admin@example.com").status_code == 302  # another address
    assert len(emailed(member.delivery_email)) == 2


def test_asking_is_limited_per_ip_address(member, settings):
    """Zulip's sends_email_by_ip: one client cannot have the form mail a list of addresses."""
    settings.RATE_LIMIT_PASSWORD_RESET_PER_IP_PER_DAY = 3
    assert [ask(f"someone{n}@elsewhere.example").status_code for n in range(4)] == [302, 302, 302, 429]
    assert run_ready_tasks() == 3
    other_ip = submit(Client(enforce_csrf_checks=True, REMOTE_ADDR="10.0.0.9"), "/accounts/password/reset/",
                      {"email": member.delivery_email})  # fmt: skip
    assert other_ip.status_code == 302


@pytest.mark.parametrize(
    ("email", "status", "message"),
    [
        ("not-an-address", 400, "Invalid address."),
        ("", 400, "This field is required."),
        ("a" * 255, 400, "at most 254"),
    ],
)
def test_bad_addresses_are_refused_on_the_page(member, email, status, message):
    response = ask(email)
    assert response.status_code == status
    assert message in response.content.decode()
    assert run_ready_tasks() == 0


def test_an_organization_without_passwords_says_so(realm, member):
    do_change_realm_settings(realm, {"password_auth_enabled": False}, acting_user=None)
    page = browser().get("/accounts/password/reset/").content.decode()
    assert "Logging in with a password is turned off in Parley Test" in page
    assert "<form" not in page
    response = Client(HTTP_HOST="testserver").post("/accounts/password/reset/", {"email": member.delivery_email})
    assert response.status_code == 400
    assert run_ready_tasks() == 0


def test_an_unknown_host_is_no_organization(db):
    assert browser("nowhere.testserver").get("/accounts/password/reset/").status_code == 404


def test_the_email_says_how_long_the_link_works(member, settings):
    settings.PASSWORD_RESET_TIMEOUT = 5400
    ask(member.delivery_email)
    assert "open this link within 90 minutes:" in emailed(member.delivery_email)[0].body


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_a_link_sent_twice_at_once_sets_one_password(member):
    """The token is checked again with the person's row locked: one of the two is refused."""
    ask(member.delivery_email)
    link = link_in(emailed(member.delivery_email)[0])
    clients, pages = [], []
    for _ in range(2):  # both opened the link: each session holds the token
        client = browser()
        pages.append(client.get(urlsplit(link).path, follow=True))
        clients.append(client)
    passwords = ["first unusual passphrase 61", "second unusual passphrase 62"]

    def post(index):
        path = pages[index].redirect_chain[-1][0]
        data = {"csrfmiddlewaretoken": csrf_token(pages[index]), "new_password1": passwords[index],
                "new_password2": passwords[index]}  # fmt: skip
        return clients[index].post(path, data).status_code

    assert sorted(at_once(lambda: post(0), lambda: post(1))) == [302, 404]
    assert RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_PASSWORD_CHANGED).count() == 1
    assert sum(User.objects.get(id=member.id).check_password(p) for p in passwords) == 1


def test_redis_unreachable_is_said_on_the_pages(member, redis_down):
    """The limits cannot be counted: each page says so (503), in its own words, not the API's JSON."""
    client = browser()
    page = client.get("/accounts/password/reset/")
    response = submit(client, "/accounts/password/reset/", {"email": member.delivery_email}, page=page)
    assert (response.status_code, response["Content-Type"]) == (503, "text/html; charset=utf-8")
    assert "Resetting passwords is not possible right now" in response.content.decode()
    assert run_ready_tasks() == 0
    login = submit(browser(), "/login/", {"email": member.delivery_email, "password": OLD})
    assert login.status_code == 503
    assert "Logging in is not possible right now" in login.content.decode()
