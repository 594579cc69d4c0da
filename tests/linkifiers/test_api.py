"""The linkifier endpoints: POST, PATCH and DELETE /realm/filters, GET and PATCH /realm/linkifiers,
the legacy GET /realm/filters; who may use them, every refusal changing nothing, another
organization's linkifiers, the audit log, events and the /register state."""

import pytest
from django.db import connection

from apps.events.models import OutboxEvent
from apps.linkifiers.models import Linkifier
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.models import Role
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import done_or_refused, removed_while_changed
from tests.factories import UserFactory

ISSUE = r"#(?P<id>[0-9]+)"
ISSUE_URL = "https://github.com/zulip/zulip/issues/{id}"
JIRA = r"(?P<key>[A-Z]{2,}-\d+)"
JIRA_URL = "https://jira.example.com/browse/{key}"


def add(user, pattern=ISSUE, url_template=ISSUE_URL, **more) -> int:
    return assert_success(
        api_for(user).post("/realm/filters", {"pattern": pattern, "url_template": url_template, **more})
    )["id"]


def listed(user) -> list[dict]:
    return assert_success(api_for(user).get("/realm/linkifiers"))["linkifiers"]


def state() -> tuple:
    """Every row the endpoints write."""
    return (
        list(Linkifier.objects.order_by("id").values()),
        RealmAuditLog.objects.count(),
        OutboxEvent.objects.count(),
    )


def refused(user, method, path, params, status, code, msg) -> dict:
    before = state()
    body = assert_error(api_for(user).request(method, path, params), status, code, msg)
    assert state() == before
    return body


# --- adding and listing ---------------------------------------------------------------------------


def test_an_administrator_adds_linkifiers_listed_in_order_with_every_field(admin, member):
    first = add(admin)
    second = add(
        admin,
        JIRA,
        JIRA_URL,
        example_input="ABC-123",
        reverse_template="{key}",
        alternative_url_templates=["https://jira.example.com/issues/{key}"],
    )
    assert second > first
    assert listed(member) == [
        {
            "id": first,
            "pattern": ISSUE,
            "url_template": ISSUE_URL,
            "example_input": None,
            "reverse_template": None,
            "alternative_url_templates": [],
        },
        {
            "id": second,
            "pattern": JIRA,
            "url_template": JIRA_URL,
            "example_input": "ABC-123",
            "reverse_template": "{key}",
            "alternative_url_templates": ["https://jira.example.com/issues/{key}"],
        },
    ]
    assert assert_success(api_for(member).get("/realm/filters"))["filters"] == [
        [ISSUE, ISSUE_URL, first],
        [JIRA, JIRA_URL, second],
    ]


def test_owners_are_administrators_too(owner):
    assert add(owner)


@pytest.mark.parametrize("role", ["moderator", "member", "guest", "bot"])
def test_only_administrators_change_linkifiers(role, request, admin):
    user = request.getfixturevalue(role)
    existing = add(admin)
    message = "Must be an organization administrator"
    refused(
        user,
        "POST",
        "/realm/filters",
        {"pattern": JIRA, "url_template": JIRA_URL},
        400,
        "UNAUTHORIZED_PRINCIPAL",
        message,
    )
    refused(
        user,
        "PATCH",
        f"/realm/filters/{existing}",
        {"pattern": JIRA, "url_template": JIRA_URL},
        400,
        "UNAUTHORIZED_PRINCIPAL",
        message,
    )
    refused(user, "DELETE", f"/realm/filters/{existing}", {}, 400, "UNAUTHORIZED_PRINCIPAL", message)
    refused(
        user,
        "PATCH",
        "/realm/linkifiers",
        {"ordered_linkifier_ids": [existing]},
        400,
        "UNAUTHORIZED_PRINCIPAL",
        message,
    )
    assert [linkifier["id"] for linkifier in listed(user)] == [existing]


def test_listing_needs_authentication(realm, anonymous):
    assert_error(anonymous.get("/realm/linkifiers"), 401, "UNAUTHORIZED")


def test_an_invalid_linkifier_is_refused_with_every_error_by_field(admin):
    body = refused(
        admin, "POST", "/realm/filters", {"pattern": "(foo", "url_template": "https://x.com/{id"},
        400, "BAD_REQUEST", "Bad regular expression: missing ): (foo",
    )  # fmt: skip
    assert body["errors"] == {
        "pattern": ["Bad regular expression: missing ): (foo"],
        "url_template": ["Invalid URL template."],
    }
    body = refused(
        admin, "POST", "/realm/filters", {"pattern": ISSUE, "url_template": "https://x.com/{ticket}"},
        400, "BAD_REQUEST", "Group 'ticket' in URL template is not present in linkifier pattern.",
    )  # fmt: skip
    assert body["errors"] == {"__all__": ["Group 'ticket' in URL template is not present in linkifier pattern."]}


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"url_template": ISSUE_URL}, "REQUEST_VARIABLE_MISSING", "Missing 'pattern' argument"),
        ({"pattern": ISSUE}, "REQUEST_VARIABLE_MISSING", "Missing 'url_template' argument"),
        (
            {"pattern": ISSUE, "url_template": ISSUE_URL, "alternative_url_templates": "nope"},
            "REQUEST_VARIABLE_INVALID",
            "alternative_url_templates is not valid JSON",
        ),
        (
            {"pattern": ISSUE, "url_template": ISSUE_URL, "alternative_url_templates": '{"a": 1}'},
            "REQUEST_VARIABLE_INVALID",
            "alternative_url_templates is not a list",
        ),
        (
            {"pattern": ISSUE, "url_template": ISSUE_URL, "example_input": "#1x"},
            "BAD_REQUEST",
            "The example input does not match the pattern.",
        ),
        (
            {"pattern": ISSUE, "url_template": "javascript:alert({id})"},
            "BAD_REQUEST",
            "URL template must expand to an http or https URL.",
        ),
    ],
)
def test_malformed_requests_are_refused(admin, params, code, msg):
    refused(admin, "POST", "/realm/filters", params, 400, code, msg)


def test_a_pattern_is_unique_in_its_organization_only(admin, other_realm):
    add(admin)
    body = refused(
        admin, "POST", "/realm/filters", {"pattern": f" {ISSUE} ", "url_template": "https://other.example.com/{id}"},
        400, "BAD_REQUEST", "Realm filter with this Realm and Pattern already exists.",
    )  # fmt: skip
    assert body["errors"] == {"__all__": ["Realm filter with this Realm and Pattern already exists."]}
    assert add(UserFactory(realm=other_realm, role=Role.ADMINISTRATOR))


def test_another_organizations_linkifiers_are_neither_seen_nor_changed(admin, other_realm):
    their_admin = UserFactory(realm=other_realm, role=Role.ADMINISTRATOR)
    theirs = add(their_admin, JIRA, JIRA_URL)
    assert listed(admin) == []
    assert assert_success(api_for(admin).get("/realm/filters"))["filters"] == []
    for method, params in (("PATCH", {"pattern": ISSUE, "url_template": ISSUE_URL}), ("DELETE", {})):
        refused(admin, method, f"/realm/filters/{theirs}", params, 400, "BAD_REQUEST", "Linkifier not found.")
    refused(
        admin, "PATCH", "/realm/linkifiers", {"ordered_linkifier_ids": [theirs]},
        400, "BAD_REQUEST", "The ordered list must enumerate all existing linkifiers exactly once",
    )  # fmt: skip
    assert [linkifier["id"] for linkifier in listed(their_admin)] == [theirs]


# --- changing, removing, reordering ---------------------------------------------------------------


def test_patch_replaces_the_linkifier_in_its_place(admin, member):
    first = add(admin, example_input="#1", reverse_template="#{id}")
    second = add(admin, JIRA, JIRA_URL)
    assert_success(
        api_for(admin).patch(
            f"/realm/filters/{first}", {"pattern": r"T(?P<id>\d+)", "url_template": "https://t.example.com/{id}"}
        )
    )
    assert listed(member) == [
        {
            "id": first,
            "pattern": r"T(?P<id>\d+)",
            "url_template": "https://t.example.com/{id}",
            "example_input": None,
            "reverse_template": None,
            "alternative_url_templates": [],
        },
        {**listed(member)[1], "id": second},
    ]
    refused(
        admin, "PATCH", f"/realm/filters/{second}", {"pattern": r"T(?P<id>\d+)", "url_template": ISSUE_URL},
        400, "BAD_REQUEST", "Realm filter with this Realm and Pattern already exists.",
    )  # fmt: skip
    # Its own pattern is not a duplicate.
    assert_success(
        api_for(admin).patch(
            f"/realm/filters/{second}", {"pattern": JIRA, "url_template": "https://j.example.com/{key}"}
        )
    )
    refused(
        admin,
        "PATCH",
        f"/realm/filters/{second}",
        {"pattern": "(", "url_template": JIRA_URL},
        400,
        "BAD_REQUEST",
        "Bad regular expression: missing ): (",
    )
    refused(
        admin,
        "PATCH",
        "/realm/filters/999999",
        {"pattern": ISSUE, "url_template": ISSUE_URL},
        400,
        "BAD_REQUEST",
        "Linkifier not found.",
    )


def test_delete_removes_one_linkifier(admin, member):
    first, second = add(admin), add(admin, JIRA, JIRA_URL)
    assert_success(api_for(admin).delete(f"/realm/filters/{first}"))
    assert [linkifier["id"] for linkifier in listed(member)] == [second]
    refused(admin, "DELETE", f"/realm/filters/{first}", {}, 400, "BAD_REQUEST", "Linkifier not found.")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_changes_and_removals_at_the_same_moment(admin):
    # The QA pass's race: a PATCH reading the linkifier as it was removed answered a 500 (almost
    # every time), and two removals both succeeded, each audited.
    changes = [{"pattern": f"#{n}(?P<id>[0-9]+)", "url_template": ISSUE_URL} for n in range(4)]
    for _ in range(3):
        answers = removed_while_changed(lambda: api_for(admin), f"/realm/filters/{add(admin)}", changes)
        assert sorted(answer.status_code for answer in answers[:2]) == [200, 400]
        done_or_refused(answers, 400, "BAD_REQUEST", "Linkifier not found.")
    assert listed(admin) == []
    removals = RealmAuditLog.objects.filter(event_type=AuditLogEventType.REALM_LINKIFIER_REMOVED)
    assert removals.count() == 3


def test_reorder_changes_the_order_they_are_listed_and_applied_in(admin, member):
    ids = [add(admin), add(admin, JIRA, JIRA_URL), add(admin, r"T(?P<id>\d+)", "https://t.example.com/{id}")]
    assert_success(api_for(admin).patch("/realm/linkifiers", {"ordered_linkifier_ids": [ids[2], ids[0], ids[1]]}))
    assert [linkifier["id"] for linkifier in listed(member)] == [ids[2], ids[0], ids[1]]
    # A new linkifier comes last.
    newest = add(admin, r"PR(?P<id>\d+)", "https://pr.example.com/{id}")
    assert [linkifier["id"] for linkifier in listed(member)] == [ids[2], ids[0], ids[1], newest]


@pytest.mark.parametrize(
    ("ordered", "msg"),
    [
        ("dup", "The ordered list must not contain duplicated linkifiers"),
        ("missing", "The ordered list must enumerate all existing linkifiers exactly once"),
        ("unknown", "The ordered list must enumerate all existing linkifiers exactly once"),
    ],
)
def test_a_reorder_must_name_each_linkifier_once(admin, ordered, msg):
    first, second = add(admin), add(admin, JIRA, JIRA_URL)
    ids = {"dup": [first, first, second], "missing": [second], "unknown": [second, first, 99999]}[ordered]
    refused(admin, "PATCH", "/realm/linkifiers", {"ordered_linkifier_ids": ids}, 400, "BAD_REQUEST", msg)


def test_a_reorder_that_moves_nothing_writes_nothing(admin):
    first, second = add(admin), add(admin, JIRA, JIRA_URL)
    before = state()
    assert_success(api_for(admin).patch("/realm/linkifiers", {"ordered_linkifier_ids": [first, second]}))
    assert state() == before


# --- audit log, events, /register -----------------------------------------------------------------


def test_every_change_is_audited_with_the_list_after_it(admin):
    linkifier_id = add(admin)
    assert_success(api_for(admin).patch(f"/realm/filters/{linkifier_id}", {"pattern": JIRA, "url_template": JIRA_URL}))
    assert_success(api_for(admin).delete(f"/realm/filters/{linkifier_id}"))
    entries = list(RealmAuditLog.objects.filter(event_type__in=[223, 224, 225]).order_by("id"))
    assert [entry.event_type for entry in entries] == [
        AuditLogEventType.REALM_LINKIFIER_ADDED,
        AuditLogEventType.REALM_LINKIFIER_CHANGED,
        AuditLogEventType.REALM_LINKIFIER_REMOVED,
    ]
    assert all(entry.acting_user_id == admin.id for entry in entries)
    assert entries[0].extra_data["added_linkifier"]["pattern"] == ISSUE
    assert [linkifier["pattern"] for linkifier in entries[1].extra_data["realm_linkifiers"]] == [JIRA]
    assert entries[2].extra_data == {
        "realm_linkifiers": [],
        "removed_linkifier": entries[1].extra_data["changed_linkifier"],
    }


def test_only_clients_with_url_templates_are_told_of_linkifiers(admin, member, capture_events):
    """As Zulip since feature level 176: realm_linkifiers to clients with the capability; nothing
    to the others (the legacy realm_filters is sent to nobody: an old client would read the URL
    template as its format string; the QA pass of smaller endpoints)."""
    modern = {"client_capabilities": {"linkifier_url_template": True}}
    with capture_events(member, **modern) as received:
        linkifier_id = add(admin)
    expected = [{"id": linkifier_id, "pattern": ISSUE, "url_template": ISSUE_URL, "example_input": None,
                 "reverse_template": None, "alternative_url_templates": []}]  # fmt: skip
    assert received[member.id] == [{"type": "realm_linkifiers", "realm_linkifiers": expected}]
    with capture_events(member, event_types=["realm_linkifiers", "realm_filters"]) as received:
        assert_success(api_for(admin).delete(f"/realm/filters/{linkifier_id}"))
    assert received[member.id] == []


def test_register_state(admin, member):
    linkifier_id = add(admin)
    modern = assert_success(
        api_for(member).post("/register", {"client_capabilities": {"linkifier_url_template": True}})
    )
    assert [linkifier["id"] for linkifier in modern["realm_linkifiers"]] == [linkifier_id]
    assert modern["realm_filters"] == []
    legacy = assert_success(
        api_for(member).post("/register", {"fetch_event_types": ["realm_linkifiers", "realm_filters"]})
    )
    assert (legacy["realm_linkifiers"], legacy["realm_filters"]) == ([], [])
