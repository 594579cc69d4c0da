"""Polls and to-do lists: the widget a `/poll` or `/todo` message makes, POST /submessage with
Zulip's rules (the sender attaches first; each change of a widget checked; only the author edits
the question or title), submessage events, and `submessages` in every Message object."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.messages.models import SubMessage
from apps.messages.widgets import widget_of
from tests.api import api_for, assert_error, assert_success
from tests.messages.conftest import db_state, get_messages


def submessage(user, message_id, content, msg_type="widget"):
    body = content if isinstance(content, str) else json.dumps(content)
    return api_for(user).post("/submessage", {"message_id": message_id, "msg_type": msg_type, "content": body})


def refused(user, message_id, content, msg) -> None:
    before = db_state(), list(SubMessage.objects.order_by("id").values())
    assert_error(submessage(user, message_id, content), 400, "BAD_REQUEST", msg)
    assert (db_state(), list(SubMessage.objects.order_by("id").values())) == before


def submessages_of(user, message_id) -> list[dict]:
    return assert_success(api_for(user).get(f"/messages/{message_id}"))["message"]["submessages"]


@pytest.fixture
def design(make_stream, member, admin, guest):
    return make_stream("design", member, admin, guest)


def test_widgets_are_parsed_as_zulip_does():
    assert widget_of("/poll Lunch?\n- Pizza\n* Sushi\n\n  Salad  ") == {
        "widget_type": "poll",
        "extra_data": {"question": "Lunch?", "options": ["Pizza", "Sushi", "Salad"]},
    }
    assert widget_of("/todo Launch\nWrite docs: the README\n- Ship") == {
        "widget_type": "todo",
        "extra_data": {"task_list_title": "Launch", "tasks": [{"task": "Write docs", "desc": "the README"},
                                                            {"task": "Ship", "desc": ""}]},
    }  # fmt: skip
    assert widget_of("/poll") == {"widget_type": "poll", "extra_data": {"question": "", "options": []}}
    assert widget_of("/me waves") is None
    assert widget_of("a /poll later") is None
    assert widget_of("/pollster") is None


def test_a_poll_message_carries_its_widget_in_the_event_and_when_read(design, send, member, admin, capture_events):
    with capture_events(admin) as received:
        message_id = send(member, design, "/poll Lunch?\nPizza\nSushi")
    [event] = [e for e in received[admin.id] if e["type"] == "message"]
    [widget] = event["message"]["submessages"]
    assert (widget["msg_type"], widget["sender_id"], widget["message_id"]) == ("widget", member.id, message_id)
    assert json.loads(widget["content"]) == {
        "widget_type": "poll",
        "extra_data": {"question": "Lunch?", "options": ["Pizza", "Sushi"]},
    }
    assert submessages_of(admin, message_id) == [widget]


def test_votes_and_options_from_readers_reach_everyone(design, send, member, admin, guest, capture_events):
    message_id = send(member, design, "/poll Lunch?\nPizza")
    vote = {"type": "vote", "key": "canned,0", "vote": 1}
    with capture_events(member, guest) as received:
        assert_success(submessage(admin, message_id, vote))
        assert_success(submessage(guest, message_id, {"type": "new_option", "idx": 1, "option": "Tacos"}))
    rows = submessages_of(member, message_id)
    assert [(r["sender_id"], json.loads(r["content"])) for r in rows[1:]] == [
        (admin.id, vote),
        (guest.id, {"type": "new_option", "idx": 1, "option": "Tacos"}),
    ]
    expected = {"type": "submessage", "msg_type": "widget", "message_id": message_id, "submessage_id": rows[1]["id"],
                "sender_id": admin.id, "content": json.dumps(vote)}  # fmt: skip
    assert received[member.id][0] == expected
    assert [e["type"] for e in received[guest.id]] == ["submessage", "submessage"]


@pytest.mark.parametrize(
    ("content", "msg"),
    [
        ("not json", "Invalid json for submessage"),
        ("[" * 1100, "Invalid json for submessage"),  # deeper than a parser goes (was a 500)
        ([1, 2], "poll data is not a dict"),
        ({"key": "x"}, 'poll data["type"] is not a string'),
        ({"type": "explode"}, "Unknown type for poll data: explode"),
        ({"type": "vote", "key": "canned,0"}, 'poll data["vote"] is missing'),
        ({"type": "vote", "key": 0, "vote": 1}, 'poll data["key"] is not a string'),
        ({"type": "vote", "key": "canned,0", "vote": True}, 'poll data["vote"] is not an integer'),
        ({"type": "vote", "key": "canned,0", "vote": 5}, 'Invalid poll data["vote"]'),
        ({"type": "vote", "key": "canned,0", "vote": 1, "more": 1}, "Unexpected arguments: more"),
        ({"type": "question", "question": "Dinner?"}, "You can't edit a question unless you are the author."),
    ],
)
def test_poll_changes_are_checked(design, send, member, admin, content, msg):
    message_id = send(member, design, "/poll Lunch?\nPizza")
    refused(admin, message_id, content, msg)


def test_the_author_edits_the_question(design, send, member):
    message_id = send(member, design, "/poll Lunch?")
    assert_success(submessage(member, message_id, {"type": "question", "question": "Dinner?"}))


def test_todo_changes_are_checked(design, send, member, admin):
    message_id = send(member, design, "/todo Launch\nShip")
    task = {"type": "new_task", "key": 2, "task": "Test", "desc": "", "completed": False}
    assert_success(submessage(admin, message_id, task))
    assert_success(submessage(admin, message_id, {"type": "strike", "key": "2,canned"}))
    refused(
        admin, message_id, {"type": "new_task", "key": 3, "task": "x", "desc": ""}, 'todo data["completed"] is missing'
    )
    refused(admin, message_id, {"type": "new_task_list_title", "title": "Mine"},
            "You can't edit the task list title unless you are the author.")  # fmt: skip
    assert_success(submessage(member, message_id, {"type": "new_task_list_title", "title": "Launch 2"}))


def test_only_the_sender_attaches_the_first_submessage(design, send, member, admin):
    message_id = send(member, design, "plain words")
    refused(admin, message_id, {"type": "vote"}, "You cannot attach a submessage to this message.")
    # The sender may attach anything first (Zulip's clients then build on it).
    assert_success(submessage(member, message_id, {"widget_type": "custom"}))
    assert_success(submessage(admin, message_id, {"anything": True}))


def test_messages_one_cannot_see_take_no_submessage(make_stream, send, member, admin):
    secret = make_stream("secret", admin, private=True)
    message_id = send(admin, secret, "/poll Secret?")
    refused(member, message_id, {"type": "vote", "key": "canned,0", "vote": 1}, "Invalid message(s)")


def test_a_page_of_messages_reads_submessages_in_one_query(design, send, member, admin):
    for n in range(4):
        message_id = send(member, design, f"/poll Question {n}?\nYes\nNo")
        assert_success(submessage(admin, message_id, {"type": "vote", "key": "canned,0", "vote": 1}))
    with CaptureQueriesContext(connection) as queries:
        messages = get_messages(admin)["messages"]
    assert [len(m["submessages"]) for m in messages] == [2] * 4
    assert len([q for q in queries if '"chat_messages_submessage"' in q["sql"]]) == 1
