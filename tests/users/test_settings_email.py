"""PATCH /settings `email`: a confirmation link is emailed to the new address (Django's in-memory
outbox here); the address changes when the link is opened, and only then; links expire, are used
once, and belong to their organization."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client

from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import EmailChangeRequest, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import UserFactory

LINK_RE = re.compile(r"(https?://\S+/accounts/confirm_new_email/\w+)")


@pytest.fixture
def committing(django_capture_on_commit_callbacks):
    """Run what waits for the commit (the emails) at the end of the block."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def ask(user, committing, **params):
    with committing():
        return ApiClient(user).patch("/settings", params)


def link_in(message) -> str:
    return LINK_RE.search(message.body).group(1)


def path_of(link: str) -> str:
    return link.split("testserver", 1)[1]


def open_link(link: str, committing, *, host: str = "testserver"):
    """What a browser does: the page, then the form it submits."""
    browser = Client(HTTP_HOST=host)
    page = browser.get(path_of(link))
    with committing():
        return page, browser.post(path_of(link))


def email_of(user) -> str:
    return User.objects.get(id=user.id).delivery_email


def test_the_emails_are_plain_text(member, realm, committing):
    """Nothing in them is HTML-escaped, their subject included (the security QA pass: it read
    `Org &quot;&gt;` for an organization named `Org ">`)."""
    realm.name = 'Org "><b>'
    realm.save(update_fields=["name"])
    assert_success(ask(member, committing, email="mel.new@example.com"))
    [message] = mail.outbox
    assert message.subject == 'Confirm your new email address for Org "><b>'
    assert 'Org "><b>' in message.body


def test_the_address_changes_when_the_link_is_opened(member, admin, committing, capture_events):
    assert_success(ask(member, committing, email=" mel.new@example.com ", enter_sends=True))
    assert email_of(member) == "member@example.com"  # not yet
    assert User.objects.get(id=member.id).enter_sends  # the rest of the request is done
    [message] = mail.outbox
    assert message.to == ["mel.new@example.com"]
    assert message.subject == "Confirm your new email address for Parley Test"
    link = link_in(message)
    assert link.startswith("http://testserver/accounts/confirm_new_email/")
    assert "member@example.com" in message.body

    browser = Client()
    page = browser.get(path_of(link))
    assert page.status_code == 200
    assert page["Content-Type"] == "text/html; charset=utf-8"
    assert "mel.new@example.com" in page.content.decode()
    assert '<form method="post"' in page.content.decode()
    assert email_of(member) == "member@example.com"  # opening the page changes nothing yet

    with capture_events(admin) as received:
        done = browser.post(path_of(link))
    assert done.status_code == 200
    assert "is now <strong>mel.new@example.com</strong>" in done.content.decode()
    assert email_of(member) == "mel.new@example.com"
    assert {"user_id": member.id, "delivery_email": "mel.new@example.com"} in [
        e["person"] for e in received[admin.id] if e["type"] == "realm_user"
    ]
    assert RealmAuditLog.objects.filter(
        modified_user=member, acting_user=member, event_type=AuditLogEventType.USER_EMAIL_CHANGED
    ).exists()
    # The old address is told.
    notice = mail.outbox[-1]
    assert notice.to == ["member@example.com"]
    assert "mel.new@example.com" in notice.body
    # The new address signs in; the API key stays.
    assert_success(ApiClient(member, email="mel.new@example.com").get("/users/me"))


def test_a_link_is_used_once(member, committing):
    ask(member, committing, email="once@example.com")
    link = link_in(mail.outbox[0])
    _, first = open_link(link, committing)
    assert first.status_code == 200
    _, again = open_link(link, committing)
    assert again.status_code == 400
    assert "already been used" in again.content.decode()


def test_links_expire(member, committing, settings):
    ask(member, committing, email="late@example.com")
    link = link_in(mail.outbox[0])
    assert f"within {settings.EMAIL_CHANGE_LINK_VALIDITY_SECONDS // 3600} hours" in mail.outbox[0].body
    EmailChangeRequest.objects.update(
        created=EmailChangeRequest.objects.get().created
        - timedelta(seconds=settings.EMAIL_CHANGE_LINK_VALIDITY_SECONDS + 1)
    )
    page, done = open_link(link, committing)
    assert page.status_code == done.status_code == 400
    assert "expired" in done.content.decode()
    assert email_of(member) == "member@example.com"


def test_a_newer_request_revokes_the_older_link(member, committing):
    ask(member, committing, email="first@example.com")
    ask(member, committing, email="second@example.com")
    first, second = (link_in(message) for message in mail.outbox)
    _, refused = open_link(first, committing)
    assert refused.status_code == 400
    assert email_of(member) == "member@example.com"
    _, done = open_link(second, committing)
    assert done.status_code == 200
    assert email_of(member) == "second@example.com"


def test_an_address_taken_meanwhile_is_refused(realm, member, committing):
    ask(member, committing, email="wanted@example.com")
    UserFactory(realm=realm, delivery_email="Wanted@Example.com")
    _, refused = open_link(link_in(mail.outbox[0]), committing)
    assert refused.status_code == 400
    assert "already in use" in refused.content.decode()
    assert email_of(member) == "member@example.com"


def test_a_deactivated_user_cannot_confirm(member, admin, committing):
    ask(member, committing, email="ghost@example.com")
    do_deactivate_user(member, acting_user=admin)
    _, refused = open_link(link_in(mail.outbox[0]), committing)
    assert refused.status_code == 400
    assert email_of(member) == "member@example.com"


def test_a_link_belongs_to_its_organization(member, foreign_user, committing):
    ask(member, committing, email="here@example.com")
    link = link_in(mail.outbox[0])
    for host in ("zephyr.testserver", "nowhere.testserver"):
        page, refused = open_link(link, committing, host=host)
        assert page.status_code == refused.status_code == 404
        assert "here@example.com" not in page.content.decode()
    assert email_of(member) == "member@example.com"


@pytest.mark.parametrize("key", ["0" * 40, "short", "g" * 40, "x" * 400])
def test_unknown_links(realm, key, committing):
    page, refused = open_link(f"http://testserver/accounts/confirm_new_email/{key}", committing)
    assert page.status_code == refused.status_code == 404
    assert "not valid" in page.content.decode()


@pytest.mark.parametrize(
    ("email", "msg"),
    [
        ("not an address", "Invalid address."),
        ("owner@example.com", "Email 'owner@example.com' already in use"),
        ("OWNER@example.com", "Email 'OWNER@example.com' already in use"),
    ],
)
def test_refused_addresses(member, owner, committing, email, msg):
    assert_error(ask(member, committing, email=email, enter_sends=True), 400, "BAD_REQUEST", msg)
    assert mail.outbox == []
    assert not EmailChangeRequest.objects.exists()
    assert not User.objects.get(id=member.id).enter_sends


def test_the_same_address_is_no_change(member, committing):
    assert_success(ask(member, committing, email="member@example.com"))
    assert mail.outbox == []


def test_email_changes_are_rate_limited(member, committing, settings):
    settings.RATE_LIMIT_EMAIL_CHANGE = ((2, 3600), (5, 86400))
    assert_error(ask(member, committing, email="bad address"), 400, "BAD_REQUEST")  # costs nothing
    for n in range(2):
        assert_success(ask(member, committing, email=f"try{n}@example.com"))
    body = assert_error(ask(member, committing, email="try3@example.com", enter_sends=True), 429, "RATE_LIMIT_HIT")
    assert body["retry-after"] > 0
    assert len(mail.outbox) == 2
    assert not User.objects.get(id=member.id).enter_sends


def test_the_confirmation_is_protected_from_cross_site_posts(member, committing):
    ask(member, committing, email="csrf@example.com")
    link = link_in(mail.outbox[0])
    browser = Client(enforce_csrf_checks=True)
    refused = browser.post(path_of(link))
    assert refused.status_code == 403
    assert email_of(member) == "member@example.com"
    page = browser.get(path_of(link))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    with committing():
        done = browser.post(path_of(link), {"csrfmiddlewaretoken": token})
    assert done.status_code == 200
    assert email_of(member) == "csrf@example.com"


def test_staff_see_pending_changes_but_not_their_links(staff, member, committing):
    ask(member, committing, email="pending@example.com")
    request = EmailChangeRequest.objects.get()
    listing = staff.get("/admin/users/emailchangerequest/")
    assert listing.status_code == 200
    assert "pending@example.com" in listing.content.decode()
    page = staff.get(f"/admin/users/emailchangerequest/{request.id}/change/")
    assert page.status_code == 200
    assert request.key not in page.content.decode()
    assert (
        staff.post(f"/admin/users/emailchangerequest/{request.id}/change/", {"new_email": "x@example.com"}).status_code
        == 403
    )
    assert EmailChangeRequest.objects.get().new_email == "pending@example.com"
