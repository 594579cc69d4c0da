"""POST /invites, DELETE /invites/{id}, POST /invites/{id}/resend: invitations sent by email, as
Zulip's. Each address gets a link of its own, emailed by the task worker; the link makes one account
with that address; the errors are Zulip's (INVITATION_FAILED with the addresses and why) and change
nothing; an organization sends at most INVITATIONS_PER_DAY emails in 24 hours."""

import json
import re
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from apps.events.models import OutboxEvent
from apps.groups.selectors import group_member_ids
from apps.invites.actions.signup import do_join_with_invite
from apps.invites.errors import InvalidInvitationLinkError
from apps.invites.models import EmailInvitation
from apps.messages.models import Message
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.selectors import subscribed_stream_ids
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.create_user import do_create_user
from apps.users.models import Role, User
from tests.api import assert_error, assert_success
from tests.concurrency import at_once, done_or_refused
from tests.factories import UserFactory
from tests.invites.conftest import api, listed
from tests.invites.smtp_server import SmtpServer
from tests.invites.test_api import INVITE_PERMISSION_ERRORS
from tests.tasks import run_ready_tasks
from tests.web.conftest import PASSWORD, browser, submit

LINK_RE = re.compile(r"http://testserver/join/(?P<key>[a-z2-7]{32})/")


def invite(user, emails: str, **params):
    return api(user).post("/invites", {"invitee_emails": emails, "stream_ids": [], **params})


def invitations() -> list[EmailInvitation]:
    return list(EmailInvitation.objects.order_by("id"))


def db_state() -> dict:
    """Every row inviting writes: equal before and after a refused request."""
    return {
        "invitations": list(EmailInvitation.objects.order_by("id").values()),
        "audit": RealmAuditLog.objects.count(),
        "events": OutboxEvent.objects.count(),
        "tasks": DBTaskResult.objects.count(),
    }


def sent_links() -> dict[str, str]:
    """{address: the link its email carries} of the emails the worker sent (after running it)."""
    run_ready_tasks()
    return {message.to[0]: LINK_RE.search(message.body)[0] for message in mail.outbox}


def failed(response, msg: str, errors: list, *, sent: bool, daily: bool = False) -> None:
    body = assert_error(response, 400, "INVITATION_FAILED", msg)
    assert body["errors"] == errors
    assert (body["sent_invitations"], body["daily_limit_reached"], body["license_limit_reached"]) == (
        sent,
        daily,
        False,
    )


# --- inviting -------------------------------------------------------------------------------------


def test_each_address_gets_its_link_by_email(realm, admin, capture_events):
    with capture_events(admin) as received:
        assert_success(invite(admin, "Ann <ann@example.com>, bob@example.com\nBOB@example.com,\n"))
    ann, bob = invitations()
    assert (ann.email, bob.email) == ("ann@example.com", "bob@example.com")
    assert (ann.referred_by, ann.invited_as, ann.status) == (admin, Role.MEMBER, EmailInvitation.Status.PENDING)
    assert ann.notify_referrer_on_join
    assert ann.key != bob.key
    assert received[admin.id] == [{"type": "invites_changed"}]
    assert mail.outbox == []  # the worker sends them, after the commit
    links = sent_links()
    assert links == {"ann@example.com": ann.link_url, "bob@example.com": bob.link_url}
    [message] = [m for m in mail.outbox if m.to == ["ann@example.com"]]
    assert message.subject == f"{admin.full_name} invited you to join {realm.name}"
    assert message.reply_to == [admin.delivery_email]
    sent = RealmAuditLog.objects.filter(event_type=AuditLogEventType.INVITATION_EMAIL_SENT)
    assert sorted(entry.extra_data["email"] for entry in sent) == ["ann@example.com", "bob@example.com"]


def test_get_invites_lists_them_as_zulip_does(admin, member, make_stream, make_group):
    design = make_stream("design", admin)
    team = make_group(admin, "team")
    assert_success(invite(member, "ann@example.com", stream_ids=[design.id], invite_expires_in_minutes="null"))
    assert_success(invite(admin, "cid@example.com", group_ids=[team.id], notify_referrer_on_join="false"))
    ann, cid = invitations()
    assert listed(member) == [
        {
            "id": ann.id,
            "invited_by_user_id": member.id,
            "invited": int(ann.created.timestamp()),
            "expiry_date": None,
            "invited_as": Role.MEMBER,
            "email": "ann@example.com",
            "notify_referrer_on_join": True,
            "is_multiuse": False,
            "stream_ids": [design.id],
            "group_ids": [],
        }
    ]
    rows = listed(admin)
    assert [(row["id"], row["email"], row["notify_referrer_on_join"]) for row in rows] == [
        (ann.id, "ann@example.com", True),
        (cid.id, "cid@example.com", False),
    ]
    assert rows[1]["group_ids"] == [team.id]
    assert rows[1]["expiry_date"] is not None


def test_who_may_invite_is_the_organizations_setting(realm, admin, member, guest, owner, sys_groups):
    assert_error(invite(guest, "a@example.com"), 400, "BAD_REQUEST")
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_invite_users_group"] == sys_groups["role:members"].id  # Zulip's default
    new = json.dumps({"new": sys_groups["role:administrators"].id})
    everyone = json.dumps({"new": sys_groups["role:everyone"].id})  # guests may never invite
    assert_error(api(owner).patch("/realm", {"can_invite_users_group": everyone}), 400, "BAD_REQUEST")
    # Owners only, as Zulip's update_realm (administrators could; the users QA pass).
    refused_to_admins = api(admin).patch("/realm", {"can_invite_users_group": new})
    assert_error(refused_to_admins, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
    assert_success(api(owner).patch("/realm", {"can_invite_users_group": new}))
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_invite_users_group"] == sys_groups["role:administrators"].id
    before = db_state()
    assert_error(invite(member, "a@example.com"), 400, "BAD_REQUEST", "Insufficient permission")
    assert_error(
        invite(admin, "a@example.com", invite_as=Role.OWNER),
        400,
        "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization owner",
    )
    assert db_state() == before
    assert_success(invite(admin, "a@example.com", invite_as=Role.ADMINISTRATOR))
    assert_success(invite(owner, "b@example.com", invite_as=Role.OWNER))


def test_a_member_invites_members_and_guests_only(member):
    before = db_state()
    for role, (code, msg) in INVITE_PERMISSION_ERRORS.items():
        assert_error(invite(member, "a@example.com", invite_as=role), 400, code, msg)
    assert_error(invite(member, "a@example.com", welcome_message_custom_text="Hi"), 400, "BAD_REQUEST",
                 "Must be an organization administrator")  # fmt: skip
    assert db_state() == before
    assert_success(invite(member, "a@example.com", invite_as=Role.GUEST))


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"invitee_emails": ""}, "BAD_REQUEST", "You must specify at least one email address."),
        ({"invitee_emails": " ,\n, "}, "BAD_REQUEST", "You must specify at least one email address."),
        ({"stream_ids": [2**62]}, "BAD_REQUEST", f"Invalid channel ID {2**62}. No invites were sent."),
        ({"group_ids": [2**62]}, "BAD_REQUEST", "Invalid user group"),
        ({"stream_ids": "[1, "}, "REQUEST_VARIABLE_INVALID", "stream_ids is not valid JSON"),
        ({"invite_expires_in_minutes": 0}, "REQUEST_VARIABLE_INVALID", None),
        ({"invite_as": 250}, "REQUEST_VARIABLE_INVALID", None),
        ({"notify_referrer_on_join": "maybe"}, "REQUEST_VARIABLE_INVALID", None),
    ],
)
def test_bad_requests_change_nothing(admin, params, code, msg):
    before = db_state()
    response = api(admin).post("/invites", {"invitee_emails": "a@example.com", "stream_ids": [], **params})
    body = assert_error(response, 400, code, msg)
    assert body["msg"]
    assert db_state() == before


def test_stream_ids_and_invitee_emails_are_required_as_in_zulip(admin):
    assert_error(api(admin).post("/invites", {"invitee_emails": "a@example.com"}), 400, "REQUEST_VARIABLE_MISSING")
    assert_error(api(admin).post("/invites", {"stream_ids": "[]"}), 400, "REQUEST_VARIABLE_MISSING")


def test_an_invalid_address_stops_every_invitation(admin, member):
    deactivated = UserFactory(realm=admin.realm, delivery_email="gone@example.com")
    do_deactivate_user(deactivated, acting_user=None)
    before = db_state()
    response = invite(admin, f"ok@example.com, not-an-address, {member.delivery_email.upper()}, gone@example.com")
    failed(
        response,
        "Some emails did not validate, so we didn't send any invitations.",
        [
            ["not-an-address", "Invalid address.", False],
            [member.delivery_email.upper(), "Already has an account.", False],
            ["gone@example.com", "Account has been deactivated.", True],
        ],
        sent=False,
    )
    assert db_state() == before


def test_addresses_with_an_account_are_skipped_and_the_others_invited(admin, member):
    response = invite(admin, f"new@example.com, {member.delivery_email}")
    failed(
        response,
        "Some of those addresses are already using Zulip, so we didn't send them an invitation. "
        "We did send invitations to everyone else!",
        [[member.delivery_email, "Already has an account.", False]],
        sent=True,
    )
    assert [i.email for i in invitations()] == ["new@example.com"]
    assert list(sent_links()) == ["new@example.com"]


def test_nobody_to_invite(admin, member):
    before = db_state()
    failed(
        invite(admin, member.delivery_email),
        "We weren't able to invite anyone.",
        [[member.delivery_email, "Already has an account.", False]],
        sent=False,
    )
    assert db_state() == before


def test_the_organizations_address_rules_apply(realm, admin):
    realm.emails_restricted_to_domains = True
    realm.disallow_disposable_email_addresses = True
    realm.save()
    realm.domains.create(domain="example.com")
    before = db_state()
    failed(
        invite(admin, "a@example.com, b@elsewhere.org, c+tag@example.com"),
        "Some emails did not validate, so we didn't send any invitations.",
        [
            ["b@elsewhere.org", "Outside your domain.", False],
            ["c+tag@example.com", "Email addresses containing + are not allowed.", False],
        ],
        sent=False,
    )
    assert db_state() == before


def test_the_daily_limit_counts_every_email(settings, admin):
    settings.INVITATIONS_PER_DAY = 3
    assert_success(invite(admin, "a@example.com, b@example.com"))
    first = invitations()[0]
    assert_success(api(admin).post(f"/invites/{first.id}/resend"))
    before = db_state()
    failed(
        invite(admin, "c@example.com"),
        "To protect users, Zulip limits the number of invitations you can send in one day. Because you have "
        "reached the limit, no invitations were sent.",
        [],
        sent=False,
        daily=True,
    )
    response = api(admin).post(f"/invites/{first.id}/resend")
    assert assert_error(response, 400, "INVITATION_FAILED")["daily_limit_reached"] is True
    assert db_state() == before
    # A day later the count starts again.
    RealmAuditLog.objects.filter(event_type=AuditLogEventType.INVITATION_EMAIL_SENT).update(
        event_time=first.created - timedelta(days=1, seconds=1)
    )
    assert_success(invite(admin, "c@example.com"))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_simultaneous_requests_count_each_others_emails(settings, admin, member):
    settings.INVITATIONS_PER_DAY = 3
    answers = at_once(*(lambda user=user: invite(user, f"a{user.id}@example.com, b{user.id}@example.com")
                        for user in (admin, member)))  # fmt: skip
    assert sorted(answer.status_code for answer in answers) == [200, 400]
    assert EmailInvitation.objects.count() == 2


# --- the link -------------------------------------------------------------------------------------


def test_the_link_makes_one_account_with_its_address(realm, admin, make_stream, make_group, capture_events):
    design = make_stream("design", admin)
    team = make_group(admin, "team")
    assert_success(
        invite(admin, "nora@example.com", invite_as=Role.MODERATOR, stream_ids=[design.id], group_ids=[team.id])
    )
    link = sent_links()["nora@example.com"]
    path = link.removeprefix("http://testserver")
    page = browser().get(path).content.decode()
    assert 'value="nora@example.com" readonly' in page
    assert 'name="email"' not in page
    with capture_events(admin) as received:
        # The address the form would send is not used: the invitation's is.
        response = submit(browser(), path, {"email": "other@example.com", "full_name": "Nora", "password": PASSWORD})
    assert response.status_code == 302
    user = User.objects.get(realm=realm, delivery_email="nora@example.com")
    assert not User.objects.filter(delivery_email="other@example.com").exists()
    assert user.role == Role.MODERATOR
    assert design.id in subscribed_stream_ids(user)
    assert user.id in group_member_ids(team.id)
    used = EmailInvitation.objects.get()
    assert (used.status, used.created_user) == (EmailInvitation.Status.USED, user)
    assert {"type": "invites_changed"} in received[admin.id]
    assert listed(admin) == []
    # The Notification Bot tells the inviter.
    [notice] = Message.objects.filter(sender__full_name="Notification Bot", user_messages__user=admin)
    assert notice.content == f"@_**Nora|{user.id}** accepted your invitation to join {realm.name}!"
    # Used up: a second visit finds no usable link.
    assert browser().get(path).status_code == 404


def test_no_notice_when_the_inviter_did_not_ask(realm, admin):
    assert_success(invite(admin, "nora@example.com", notify_referrer_on_join="false"))
    path = sent_links()["nora@example.com"].removeprefix("http://testserver")
    submit(browser(), path, {"full_name": "Nora", "password": PASSWORD})
    assert not Message.objects.filter(sender__full_name="Notification Bot").exists()


def test_joining_closes_the_other_invitations_to_that_address(realm, admin, member):
    assert_success(invite(admin, "nora@example.com"))
    assert_success(invite(member, "Nora@Example.com, ted@example.com"))
    do_create_user(realm, "NORA@example.com", "Nora", acting_user=admin)  # any way of joining
    statuses = {(i.email, i.referred_by_id): i.status for i in invitations()}
    assert statuses == {
        ("nora@example.com", admin.id): EmailInvitation.Status.REVOKED,
        ("Nora@Example.com", member.id): EmailInvitation.Status.REVOKED,
        ("ted@example.com", member.id): EmailInvitation.Status.PENDING,
    }
    # Their emails, still queued, are not sent.
    assert list(sent_links()) == ["ted@example.com"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_two_invitations_to_one_address_used_at_once(realm, admin, member):
    """Each sign-up would hold its invitation and wait for the other's (joining closes the other
    invitations to the address): a deadlock, before they took turns on the organization's row."""
    assert_success(invite(admin, "twin@example.com"))
    assert_success(invite(member, "twin@example.com"))
    keys = [i.key for i in invitations()]

    def join(key):
        try:
            return do_join_with_invite(realm, key, email="", full_name="Twin", password=PASSWORD).id
        except InvalidInvitationLinkError:
            return None

    results = at_once(*(lambda key=key: join(key) for key in keys))
    assert sorted(result is None for result in results) == [False, True]
    assert User.objects.filter(delivery_email="twin@example.com").count() == 1
    assert sorted(i.status for i in invitations()) == [EmailInvitation.Status.USED, EmailInvitation.Status.REVOKED]


# --- revoking and resending -----------------------------------------------------------------------


def test_revoking(realm, admin, member, owner, foreign_user, capture_events):
    assert_success(invite(member, "a@example.com"))
    assert_success(invite(owner, "b@example.com", invite_as=Role.OWNER))
    mine, owners = invitations()
    other = UserFactory(realm=realm)
    before = db_state()
    assert_error(api(other).delete(f"/invites/{mine.id}"), 400, "BAD_REQUEST", "Must be an organization administrator")
    assert_error(
        api(admin).delete(f"/invites/{owners.id}"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner"
    )
    assert_error(api(foreign_user).delete(f"/invites/{mine.id}"), 400, "BAD_REQUEST", "No such invitation")
    assert_error(api(admin).delete("/invites/999999999999999999"), 400, "BAD_REQUEST", "No such invitation")
    assert db_state() == before
    with capture_events(member) as received:
        assert_success(api(member).delete(f"/invites/{mine.id}"))
    assert received[member.id] == [{"type": "invites_changed"}]
    assert EmailInvitation.objects.get(id=mine.id).status == EmailInvitation.Status.REVOKED
    assert_error(api(member).delete(f"/invites/{mine.id}"), 400, "BAD_REQUEST", "No such invitation")
    assert browser().get(f"/join/{mine.key}/").status_code == 404
    assert_success(api(owner).delete(f"/invites/{owners.id}"))
    assert sent_links() == {}  # revoked before the worker ran


def test_resending_emails_the_same_link(admin, member):
    assert_success(invite(member, "a@example.com"))
    [sent] = invitations()
    first = sent_links()
    mail.outbox.clear()
    assert_success(api(admin).post(f"/invites/{sent.id}/resend"))
    assert sent_links() == first
    assert_error(api(UserFactory(realm=admin.realm)).post(f"/invites/{sent.id}/resend"), 400, "BAD_REQUEST")
    assert_success(api(member).delete(f"/invites/{sent.id}"))
    assert_error(api(member).post(f"/invites/{sent.id}/resend"), 400, "BAD_REQUEST", "No such invitation")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_revoked_while_resent(settings, admin):
    # The QA pass: a resend (the organization's row locked, then the invitation's) and a revocation
    # (the invitation's row, then its audit entry, which refers to the organization) deadlocked: 503s.
    settings.INVITATIONS_PER_DAY = 100

    def race(path: str) -> list:
        resends = (lambda: api(admin).post(f"{path}/resend") for _ in range(4))
        return at_once(lambda: api(admin).delete(path), *resends)

    for n in range(3):
        assert_success(invite(admin, f"a{n}@example.com"))
        answers = race(f"/invites/{invitations()[-1].id}")
        assert_success(answers[0])
        done_or_refused(answers[1:], 400, "BAD_REQUEST", "No such invitation")
    assert {invitation.status for invitation in invitations()} == {EmailInvitation.Status.REVOKED}


def test_a_deactivated_inviters_invitations_stop_working(admin, member):
    assert_success(invite(member, "a@example.com"))
    assert_success(invite(admin, "b@example.com"))
    do_deactivate_user(member, acting_user=admin)
    assert [(i.email, i.status) for i in invitations()] == [
        ("a@example.com", EmailInvitation.Status.REVOKED),
        ("b@example.com", EmailInvitation.Status.PENDING),
    ]


# --- the email ------------------------------------------------------------------------------------


@pytest.fixture
def smtp(settings):
    """Use a mail server on 127.0.0.1 answering each recipient with the code given."""
    servers = []

    def start(rcpt_reply: str) -> SmtpServer:
        server = SmtpServer(rcpt_reply)
        servers.append(server)
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", server.port, 5
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        return server

    yield start
    for server in servers:
        server.stop()


def email_tasks():
    return DBTaskResult.objects.filter(task_path__endswith=".send_invitation_email")


def retries() -> list[DBTaskResult]:
    return list(email_tasks().filter(status=TaskResultStatus.READY))


@pytest.mark.parametrize("rcpt_reply", [None, "451 try again later"])
def test_a_mail_server_down_or_refusing_for_now_is_tried_again(settings, smtp, admin, rcpt_reply):
    if rcpt_reply is None:  # nothing listens
        server = smtp("250 ok")
        server.stop()
    else:
        smtp(rcpt_reply)
    assert_success(invite(admin, "a@example.com"))
    assert run_ready_tasks() == 1
    [retry] = retries()
    assert retry.run_after is not None
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    DBTaskResult.objects.filter(id=retry.id).update(run_after=timezone.now())
    assert list(sent_links()) == ["a@example.com"]


def test_an_address_the_mail_server_refuses_for_good_is_not_retried(smtp, admin, caplog):
    smtp("550 no such user")
    assert_success(invite(admin, "a@example.com"))
    assert run_ready_tasks() == 1
    assert retries() == []
    assert "refused the invitation" in caplog.text


def test_a_mail_server_that_accepts_gets_the_email(smtp, admin):
    smtp("250 ok")
    assert_success(invite(admin, "a@example.com"))
    assert run_ready_tasks() == 1
    assert retries() == []
    assert email_tasks().get().status == TaskResultStatus.SUCCESSFUL


def test_staff_list_and_revoke_them(staff, admin):
    assert_success(invite(admin, "a@example.com, b@example.com"))
    first, _ = invitations()
    page = staff.get("/admin/invites/emailinvitation/?q=a%40example.com").content.decode()
    assert "a@example.com" in page
    assert "b@example.com" not in page
    assert staff.get(f"/admin/invites/emailinvitation/{first.id}/change/").status_code == 200
    response = staff.post(
        "/admin/invites/emailinvitation/", {"action": "revoke", "confirmed": "yes", "_selected_action": [first.id]}
    )
    assert response.status_code == 302
    assert [(i.email, i.status) for i in invitations()] == [
        ("a@example.com", EmailInvitation.Status.REVOKED),
        ("b@example.com", EmailInvitation.Status.PENDING),
    ]
    assert staff.get("/admin/invites/emailinvitation/add/").status_code == 403


# --- the reminder ---------------------------------------------------------------------------------


def reminders():
    return DBTaskResult.objects.filter(task_path__endswith=".send_invitation_reminder").order_by("enqueued_at")


def due_now(tasks) -> None:
    tasks.update(run_after=timezone.now())


def test_a_reminder_two_days_before_a_link_of_four_days_or_more_expires(realm, admin):
    assert_success(invite(admin, "long@example.com"))  # 10 days, Zulip's default
    assert_success(invite(admin, "short@example.com", invite_expires_in_minutes=3 * 24 * 60))
    assert_success(invite(admin, "never@example.com", invite_expires_in_minutes="null"))
    long_invite = EmailInvitation.objects.get(email="long@example.com")
    [reminder] = reminders()
    assert reminder.run_after == long_invite.expiry_date - timedelta(days=2)
    sent_links()
    mail.outbox.clear()
    assert run_ready_tasks() == 0  # not due yet
    due_now(reminders())
    links = sent_links()
    assert links == {"long@example.com": long_invite.link_url}
    assert mail.outbox[0].subject == f"Reminder: {admin.full_name} invited you to join {realm.name}"


def test_only_the_last_emails_reminder_counts_and_none_for_a_closed_invitation(admin):
    assert_success(invite(admin, "a@example.com, b@example.com"))
    first, second = invitations()
    assert_success(api(admin).post(f"/invites/{first.id}/resend"))
    assert reminders().count() == 3
    assert_success(api(admin).delete(f"/invites/{second.id}"))
    sent_links()
    mail.outbox.clear()
    due_now(reminders())
    assert sent_links() == {"a@example.com": first.link_url}  # one reminder: the resend's
