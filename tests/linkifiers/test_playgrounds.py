"""Code playgrounds: POST and DELETE /realm/playgrounds[/{id}] for administrators, Zulip's checks and
words, every refusal changing nothing, another organization's playgrounds, the audit log, the
realm_playgrounds event and the /register state."""

import pytest

from apps.events.models import OutboxEvent
from apps.linkifiers.models import Playground
from apps.realms.models import AuditLogEventType, RealmAuditLog
from tests.api import api_for, assert_error, assert_success

PYTHON = {"name": "Python playground", "pygments_language": "Python", "url_template": "https://py.example.com?c={code}"}


def add(user, **params):
    return api_for(user).post("/realm/playgrounds", {**PYTHON, **params})


def registered(user) -> list[dict]:
    body = assert_success(api_for(user).post("/register", {"fetch_event_types": '["realm_playgrounds"]'}))
    return body["realm_playgrounds"]


def db_state() -> tuple:
    return (
        list(Playground.objects.order_by("id").values()),
        RealmAuditLog.objects.count(),
        OutboxEvent.objects.count(),
    )


def test_an_administrator_adds_and_removes_a_playground(admin, member, capture_events):
    with capture_events(member) as received:
        playground_id = assert_success(add(admin, name=" Python playground ", pygments_language=" Python "))["id"]
    expected = {"id": playground_id, **PYTHON}
    assert received[member.id] == [{"type": "realm_playgrounds", "realm_playgrounds": [expected]}]
    assert registered(member) == [expected]
    rust = assert_success(add(admin, name="Rust", pygments_language="Rust", url_template="https://r.example/{?code}"))
    assert [p["id"] for p in registered(member)] == [playground_id, rust["id"]]
    entry = RealmAuditLog.objects.filter(event_type=AuditLogEventType.REALM_PLAYGROUND_ADDED).first()
    assert (entry.acting_user, entry.extra_data["added_playground"]) == (admin, expected)
    with capture_events(member) as received:
        assert_success(api_for(admin).delete(f"/realm/playgrounds/{playground_id}"))
    [event] = received[member.id]
    assert [p["id"] for p in event["realm_playgrounds"]] == [rust["id"]]
    assert RealmAuditLog.objects.filter(event_type=AuditLogEventType.REALM_PLAYGROUND_REMOVED).exists()
    assert_error(api_for(admin).delete(f"/realm/playgrounds/{playground_id}"), 400, "BAD_REQUEST",
                 "Invalid playground")  # fmt: skip


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({"name": "  "}, "This field cannot be blank."),
        ({"name": "x" * 101}, "Ensure this value has at most 100 characters (it has 101)."),
        ({"pygments_language": ""}, "This field cannot be blank."),
        ({"pygments_language": "py<script>"}, "Invalid characters in pygments language"),
        ({"pygments_language": "P" * 41}, "Ensure this value has at most 40 characters (it has 41)."),
        ({"url_template": "https://py.example.com?c={code"}, "Invalid URL template."),
        ({"url_template": "javascript:alert({code})"}, "URL template must expand to an http or https URL."),
        ({"url_template": "https://py.example.com"}, 'Missing the required variable "code" in the URL template'),
        (
            {"url_template": "https://{host}/?c={code}"},
            '"code" should be the only variable present in the URL template',
        ),
    ],
)
def test_bad_playgrounds_are_refused_in_zulips_words(admin, params, msg):
    before = db_state()
    assert_error(add(admin, **params), 400, "BAD_REQUEST", msg)
    assert db_state() == before


def test_one_name_per_language(admin):
    assert_success(add(admin))
    before = db_state()
    response = add(admin)
    duplicate = "Realm playground with this Realm, Pygments language and Name already exists."
    body = assert_error(response, 400, "BAD_REQUEST", duplicate)
    assert body["errors"] == {"__all__": [body["msg"]]}
    assert db_state() == before
    assert_success(add(admin, pygments_language="Python3"))


def test_only_administrators(member, moderator, admin, foreign_user):
    playground_id = assert_success(add(admin))["id"]
    before = db_state()
    for user in (member, moderator):
        assert_error(add(user, name="Mine"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
        response = api_for(user).delete(f"/realm/playgrounds/{playground_id}")
        assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    foreign_admin = foreign_user
    foreign_admin.role = admin.role
    foreign_admin.save()
    response = api_for(foreign_admin).delete(f"/realm/playgrounds/{playground_id}")
    assert_error(response, 400, "BAD_REQUEST", "Invalid playground")
    assert registered(foreign_admin) == []
    assert db_state() == before


def test_staff_list_and_remove_them(staff, admin, member):
    assert_success(add(admin))
    assert "Python playground" in staff.get("/admin/linkifiers/playground/").content.decode()
    playground = Playground.objects.get()
    response = staff.post("/admin/linkifiers/playground/", {"action": "remove", "_selected_action": [playground.id]})
    assert response.status_code == 302
    assert registered(member) == []
