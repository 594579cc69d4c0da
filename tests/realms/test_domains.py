"""Allowed email domains, as Zulip's: GET, POST /realm/domains and PATCH, DELETE /realm/domains/{domain}
(owners change them), the realm_domains state and events, emails_restricted_to_domains and
disallow_disposable_email_addresses (PATCH /realm, owners); and where an address is refused: the
sign-up page of an invitation link, an administrator's POST /users, a person's new address."""

import json

import pytest
from django.db import connection

from apps.invites.actions.invites import do_create_multiuse_invite
from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog, RealmDomain
from apps.users.models import Role, User
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once
from tests.web.conftest import PASSWORD, browser, join_path, submit

api = api_for


def domains(user) -> list[dict]:
    return assert_success(api(user).get("/realm/domains"))["domains"]


def refused(user, method: str, path: str, params: dict, msg: str, code: str = "BAD_REQUEST"):
    before = list(RealmDomain.objects.order_by("id").values()), RealmAuditLog.objects.count()
    assert_error(api(user).request(method, path, params), 400, code, msg)
    assert (list(RealmDomain.objects.order_by("id").values()), RealmAuditLog.objects.count()) == before


def restrict(owner, *allowed: tuple[str, bool]) -> None:
    for domain, subdomains in allowed:
        assert_success(
            api(owner).post("/realm/domains", {"domain": domain, "allow_subdomains": json.dumps(subdomains)})
        )
    assert_success(api(owner).patch("/realm", {"emails_restricted_to_domains": "true"}))


def test_owners_keep_the_list_everyone_reads_it_and_hears_of_it(owner, admin, member, capture_events):
    with capture_events(owner, member, event_types=["realm_domains", "realm"]) as received:
        answer = assert_success(
            api(owner).post("/realm/domains", {"domain": " Acme.COM ", "allow_subdomains": "false"})
        )
        assert_success(api(owner).patch("/realm/domains/acme.com", {"allow_subdomains": "true"}))
        assert_success(api(owner).post("/realm/domains", {"domain": "example.org", "allow_subdomains": "false"}))
    row = RealmDomain.objects.get(domain="acme.com")
    assert answer["new_domain"] == [row.id, "acme.com"]
    assert domains(member) == [{"domain": "acme.com", "allow_subdomains": True},
                               {"domain": "example.org", "allow_subdomains": False}]  # fmt: skip
    assert received[member.id] == [
        {"type": "realm_domains", "op": "add", "realm_domain": {"domain": "acme.com", "allow_subdomains": False}},
        {"type": "realm_domains", "op": "change", "realm_domain": {"domain": "acme.com", "allow_subdomains": True}},
        {"type": "realm_domains", "op": "add", "realm_domain": {"domain": "example.org", "allow_subdomains": False}},
    ]
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["realm_domains", "realm"]'}))
    assert state["realm_domains"] == domains(member)
    assert (state["realm_emails_restricted_to_domains"], state["realm_disallow_disposable_email_addresses"]) == (
        False, True)  # fmt: skip
    assert RealmAuditLog.objects.filter(event_type=AuditLogEventType.REALM_DOMAIN_ADDED).count() == 2


def test_removing_the_last_domain_lifts_the_restriction(owner, member, capture_events):
    restrict(owner, ("acme.com", False))
    with capture_events(member, event_types=["realm_domains", "realm"]) as received:
        assert_success(api(owner).delete("/realm/domains/acme.com"))
    assert received[member.id] == [
        {"type": "realm", "op": "update", "property": "emails_restricted_to_domains", "value": False},
        {"type": "realm_domains", "op": "remove", "domain": "acme.com"},
    ]
    assert not Realm.objects.get(id=owner.realm_id).emails_restricted_to_domains


def test_zulips_checks_and_texts(owner, admin, member):
    for user in (admin, member):
        refused(user, "POST", "/realm/domains", {"domain": "acme.com", "allow_subdomains": "false"},
                "Must be an organization owner", code="UNAUTHORIZED_PRINCIPAL")  # fmt: skip
        needs = "owner" if user.is_admin else "administrator"  # PATCH /realm: administrators
        assert_error(api(user).patch("/realm", {"emails_restricted_to_domains": "true"}), 400,
                     "UNAUTHORIZED_PRINCIPAL", f"Must be an organization {needs}")  # fmt: skip
    cases = {
        "": "Domain can't be empty.",
        "test": "Domain must have at least one dot (.)",
        ".com": "Domain cannot start or end with a dot (.)",
        "test...com": "Consecutive '.' are not allowed.",
        "test.-domain.com": "Subdomains cannot start or end with a '-'.",
        "test_domain.com": "Domain can only have letters, numbers, '.' and '-'s.",
        "a" * 100 + ".com": "Domain is too long",
    }
    for domain, problem in cases.items():
        refused(owner, "POST", "/realm/domains", {"domain": domain, "allow_subdomains": "false"},
                f"Invalid domain: {problem}")  # fmt: skip
    assert_success(api(owner).post("/realm/domains", {"domain": "x-x.y.3.z", "allow_subdomains": "false"}))
    refused(owner, "POST", "/realm/domains", {"domain": "X-X.y.3.z", "allow_subdomains": "true"},
            "The domain x-x.y.3.z is already a part of your organization.")  # fmt: skip
    refused(
        owner, "PATCH", "/realm/domains/other.com", {"allow_subdomains": "true"}, "No entry found for domain other.com."
    )
    refused(owner, "DELETE", "/realm/domains/other.com", {}, "No entry found for domain other.com.")
    refused(owner, "POST", "/realm/domains", {"domain": "a.com"}, "Missing 'allow_subdomains' argument",
            code="REQUEST_VARIABLE_MISSING")  # fmt: skip


def test_another_organizations_domains_are_not_seen_nor_reached(owner, foreign_user):
    restrict(owner, ("acme.com", False))
    assert domains(foreign_user) == []
    refused(foreign_user, "DELETE", "/realm/domains/acme.com", {}, "No entry found for domain acme.com.")


@pytest.mark.parametrize(
    ("email", "allowed"),
    [
        ("ann@acme.com", True),
        ("ann@ACME.com", True),
        ("ann@eu.acme.com", False),  # acme.com does not allow subdomains
        ("ann@x.corp.example.org", True),  # corp.example.org does
        ("ann@corp.example.org", True),
        ("ann@example.org", False),
        ("ann+tag@acme.com", False),
    ],
)
def test_who_may_join_a_restricted_organization(realm, owner, email, allowed):
    restrict(owner, ("acme.com", False), ("corp.example.org", True))
    invite = do_create_multiuse_invite(realm, invited_as=Role.MEMBER, acting_user=owner)
    page = submit(browser(), join_path(invite), {"email": email, "full_name": "Ann", "password": PASSWORD})
    assert User.objects.filter(delivery_email=email).exists() == allowed
    if not allowed:
        assert page.status_code == 400
        html = page.content.decode()
        assert ("containing + are not allowed in this organization" if "+" in email else
                f"Your email address, {email}, is not in one of the domains") in html  # fmt: skip


def test_administrators_and_people_changing_their_address_are_refused_too(owner, member):
    owner.can_create_users = True
    owner.save()
    restrict(owner, ("acme.com", False))
    body = {"email": "bob@elsewhere.com", "password": PASSWORD, "full_name": "Bob"}
    assert_error(
        api(owner).post("/users", body),
        400,
        "BAD_REQUEST",
        "Email 'bob@elsewhere.com' not allowed in this organization",
    )
    assert_success(api(owner).post("/users", {**body, "email": "bob@acme.com"}))
    assert_error(
        api(member).patch("/settings", {"email": "mel@elsewhere.com"}), 400, "BAD_REQUEST", "Outside your domain."
    )


def test_disposable_addresses_are_refused_where_the_organization_says(realm, owner):
    invite = do_create_multiuse_invite(realm, invited_as=Role.MEMBER, acting_user=owner)
    form = {"email": "throwaway@mailinator.com", "full_name": "Tim", "password": PASSWORD}
    page = submit(browser(), join_path(invite), form)
    assert page.status_code == 400
    assert "Please use your real email address." in page.content.decode()
    assert_success(api(owner).patch("/realm", {"disallow_disposable_email_addresses": "false"}))
    submit(browser(), join_path(invite), form)
    assert User.objects.filter(delivery_email="throwaway@mailinator.com").exists()


def test_staff_see_the_domains_on_the_organizations_page(staff, owner, realm):
    restrict(owner, ("acme.com", True))
    page = staff.get(f"/admin/realms/realm/{realm.id}/change/").content.decode()
    assert "acme.com (and subdomains)" in page


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_removing_the_last_two_at_once_still_lifts_the_restriction(realm, owner):
    restrict(owner, ("one.com", False), ("two.com", False))
    answers = at_once(*(lambda d=domain: api(owner).delete(f"/realm/domains/{d}") for domain in ("one.com", "two.com")))
    assert [answer.status_code for answer in answers] == [200, 200]
    assert not Realm.objects.get(id=realm.id).emails_restricted_to_domains
