"""/saved_snippets: create, list, edit and delete a user's snippets with Zulip's rules and errors,
another person's snippets, the cap, their events and the `saved_snippets` state of POST /register."""

import pytest
from django.db import connection

from apps.events.models import OutboxEvent
from apps.snippets.models import SavedSnippet
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import done_or_refused, removed_while_changed


def create(user, title="Greeting", content="Hello, and welcome!") -> int:
    body = assert_success(api_for(user).post("/saved_snippets", {"title": title, "content": content}))
    return body["saved_snippet_id"]


def listed(user) -> list[dict]:
    return assert_success(api_for(user).get("/saved_snippets"))["saved_snippets"]


def rows() -> list[dict]:
    return list(SavedSnippet.objects.order_by("id").values())


def test_create_list_edit_delete(member, capture_events):
    with capture_events(member) as received:
        snippet_id = create(member, "  Greeting ", " Hello! ")
        assert_success(api_for(member).patch(f"/saved_snippets/{snippet_id}", {"content": "Hi!"}))
        assert_success(api_for(member).delete(f"/saved_snippets/{snippet_id}"))
    created = received[member.id][0]["saved_snippet"]
    assert {k: created[k] for k in ("id", "title", "content")} == {
        "id": snippet_id,
        "title": "Greeting",
        "content": "Hello!",
    }
    assert isinstance(created["date_created"], int)
    assert [(e["type"], e["op"]) for e in received[member.id]] == [
        ("saved_snippets", "add"),
        ("saved_snippets", "update"),
        ("saved_snippets", "remove"),
    ]
    assert received[member.id][1]["saved_snippet"]["content"] == "Hi!"
    assert received[member.id][2]["saved_snippet_id"] == snippet_id
    assert listed(member) == []


def test_listed_oldest_first_and_in_register(member):
    first, second = create(member, "One"), create(member, "Two")
    assert [s["id"] for s in listed(member)] == [first, second]
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["saved_snippets"]}))
    assert [s["title"] for s in state["saved_snippets"]] == ["One", "Two"]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"title": "   ", "content": "x"}, "REQUEST_VARIABLE_INVALID"),
        ({"title": "x" * 61, "content": "x"}, "REQUEST_VARIABLE_INVALID"),
        ({"title": "x", "content": ""}, "REQUEST_VARIABLE_INVALID"),
        ({"title": "x", "content": "y" * 10_001}, "REQUEST_VARIABLE_INVALID"),
        ({"content": "x"}, "REQUEST_VARIABLE_MISSING"),
    ],
)
def test_bad_snippets_are_refused(member, params, code):
    before = rows()
    assert_error(api_for(member).post("/saved_snippets", params), 400, code)
    assert rows() == before


def test_another_persons_snippet_does_not_exist(member, admin, foreign_user):
    theirs = create(admin)
    for user in (member, foreign_user):
        for method, params in (("PATCH", {"title": "Mine"}), ("DELETE", {})):
            before = rows()
            assert_error(api_for(user).request(method, f"/saved_snippets/{theirs}", params), 404, "BAD_REQUEST",
                         "Saved snippet does not exist.")  # fmt: skip
            assert rows() == before
    assert listed(member) == []


def test_an_edit_with_nothing_to_change_sends_nothing(member, capture_events):
    snippet_id = create(member)
    with capture_events(member) as received:
        assert_success(api_for(member).patch(f"/saved_snippets/{snippet_id}", {}))
    assert received[member.id] == []


def test_a_user_keeps_a_bounded_number(member, monkeypatch):
    monkeypatch.setattr(SavedSnippet, "MAX_PER_USER", 2)
    create(member, "One")
    create(member, "Two")
    before = rows()
    assert_error(api_for(member).post("/saved_snippets", {"title": "Three", "content": "x"}), 400, "BAD_REQUEST",
                 "Too many saved snippets (limit: 2); delete some first.")  # fmt: skip
    assert rows() == before


def test_staff_see_snippets_read_only(staff, member):
    create(member, "Findable")
    assert "Findable" in staff.get("/admin/snippets/savedsnippet/?q=Findable").content.decode()
    assert staff.get("/admin/snippets/savedsnippet/add/").status_code == 403


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_edits_and_deletions_at_the_same_moment(member):
    # The QA pass's race: an edit reading the snippet as it was deleted answered a 500, and two
    # deletions both succeeded, each with its event.
    for _ in range(3):
        snippet_id = create(member)
        titles = [{"title": f"new {n}"} for n in range(4)]
        answers = removed_while_changed(lambda: api_for(member), f"/saved_snippets/{snippet_id}", titles)
        assert sorted(answer.status_code for answer in answers[:2]) == [200, 404]
        done_or_refused(answers, 404, "BAD_REQUEST", "Saved snippet does not exist.")
        removed = f'"op": "remove", "saved_snippet_id": {snippet_id}}}'
        assert OutboxEvent.objects.filter(event_type="saved_snippets", payload__contains=removed).count() == 1
    assert listed(member) == []
