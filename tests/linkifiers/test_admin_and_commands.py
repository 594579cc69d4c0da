"""Linkifiers for operators: `manage.py edit_linkifiers` and the Django admin, both through the
actions and checked by the code the API checks with."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from apps.linkifiers.actions import check_add_linkifier
from apps.linkifiers.models import Linkifier
from apps.linkifiers.patterns import LinkifierFields
from apps.linkifiers.selectors import linkifiers_for_realm
from apps.realms.models import AuditLogEventType, RealmAuditLog

ISSUE = r"#(?P<id>[0-9]+)"
ISSUE_URL = "https://github.com/zulip/zulip/issues/{id}"


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def add(realm, pattern, url_template="https://x.example.com/{id}") -> Linkifier:
    return check_add_linkifier(realm, fields=LinkifierFields(pattern, url_template), acting_user=None)


# --- edit_linkifiers ------------------------------------------------------------------------------


def test_command_adds_lists_and_removes(realm):
    out = run("edit_linkifiers", "--realm", "", "--add", ISSUE, ISSUE_URL)
    linkifier = Linkifier.objects.get()
    assert out == f"Added linkifier {linkifier.id}: {ISSUE} -> {ISSUE_URL}\n"
    assert RealmAuditLog.objects.get(event_type=AuditLogEventType.REALM_LINKIFIER_ADDED).acting_user is None
    assert run("edit_linkifiers", "--realm", "", "--list") == f"{linkifier.id:>6}  {ISSUE}  ->  {ISSUE_URL}\n"
    listed = json.loads(run("edit_linkifiers", "--realm", "", "--list", "--json"))
    assert listed == {"linkifiers": linkifiers_for_realm(realm.id)}
    assert json.loads(run("edit_linkifiers", "--realm", "", "--remove", str(linkifier.id), "--json")) == {
        "id": linkifier.id
    }
    assert run("edit_linkifiers", "--realm", "", "--list") == "http://testserver has no linkifiers.\n"


def test_command_refuses_what_the_api_refuses(realm, other_realm):
    with pytest.raises(CommandError, match=r"^Bad regular expression: missing \): \(\nURL template must expand"):
        run("edit_linkifiers", "--realm", "", "--add", "(", "javascript:x")
    theirs = add(other_realm, r"T(?P<id>\d+)")
    with pytest.raises(CommandError, match=r"^Linkifier not found\.$"):
        run("edit_linkifiers", "--realm", "", "--remove", str(theirs.id))
    with pytest.raises(CommandError):
        run("edit_linkifiers", "--realm", "")  # one of --list, --add, --remove
    assert Linkifier.objects.filter(realm=realm).count() == 0


# --- the Django admin -----------------------------------------------------------------------------

FORM = {
    "pattern": ISSUE,
    "url_template": ISSUE_URL,
    "example_input": "",
    "reverse_template": "",
    "alternative_url_templates": "",
    "position": "",
}


def test_admin_lists_them_in_order_and_adds_through_the_action(staff, realm, owner):
    add(realm, r"A(?P<id>\d+)")
    response = staff.post("/admin/linkifiers/linkifier/add/", {**FORM, "realm": realm.id, "position": "1",
                          "alternative_url_templates": "https://gh.example.com/{id}\n\n"})  # fmt: skip
    assert response.status_code == 302, response.content
    assert [linkifier["pattern"] for linkifier in linkifiers_for_realm(realm.id)] == [ISSUE, r"A(?P<id>\d+)"]
    created = Linkifier.objects.get(pattern=ISSUE)
    assert created.alternative_url_templates == ["https://gh.example.com/{id}"]
    assert (
        RealmAuditLog.objects.get(
            event_type=AuditLogEventType.REALM_LINKIFIER_ADDED, extra_data__added_linkifier__id=created.id
        ).acting_user
        == owner
    )
    page = staff.get("/admin/linkifiers/linkifier/").content.decode()
    assert page.index("#(?P&lt;id&gt;[0-9]+)") < page.index("A(?P&lt;id&gt;\\d+)")


def test_admin_shows_the_apis_errors_and_changes_nothing(staff, realm):
    add(realm, ISSUE)
    response = staff.post("/admin/linkifiers/linkifier/add/", {**FORM, "realm": realm.id})
    assert response.status_code == 200
    assert "Realm filter with this Realm and Pattern already exists." in response.content.decode()
    response = staff.post("/admin/linkifiers/linkifier/add/", {**FORM, "realm": realm.id, "pattern": "T(?P<x>\\d+)"})
    assert "Group &#x27;id&#x27; in URL template is not present in linkifier pattern." in response.content.decode()
    response = staff.post(
        "/admin/linkifiers/linkifier/add/",
        {**FORM, "realm": realm.id, "pattern": "(?=x)", "url_template": "https://x.com/"},
    )
    assert "Bad regular expression: invalid perl operator: (?=" in response.content.decode()
    assert Linkifier.objects.count() == 1


def test_admin_changes_moves_and_deletes_through_the_actions(staff, realm):
    first, second = add(realm, ISSUE, ISSUE_URL), add(realm, r"T(?P<id>\d+)")
    response = staff.post(
        f"/admin/linkifiers/linkifier/{second.id}/change/",
        {**FORM, "pattern": r"TT(?P<id>\d+)", "url_template": "https://tt.example.com/{id}", "position": "1"},
    )
    assert response.status_code == 302, response.content
    assert [(linkifier["id"], linkifier["pattern"]) for linkifier in linkifiers_for_realm(realm.id)] == [
        (second.id, r"TT(?P<id>\d+)"),
        (first.id, ISSUE),
    ]
    response = staff.post(f"/admin/linkifiers/linkifier/{first.id}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert [linkifier["id"] for linkifier in linkifiers_for_realm(realm.id)] == [second.id]
    assert RealmAuditLog.objects.filter(event_type=AuditLogEventType.REALM_LINKIFIER_REMOVED).count() == 1
