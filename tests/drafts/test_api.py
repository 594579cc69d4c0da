"""The /drafts endpoints: GET and POST /drafts, PATCH and DELETE /drafts/{id}, with every rule of a
draft, another person's and another organization's drafts, the order drafts are listed in, the
synchronization setting, their events and the `drafts` state of POST /register."""

import time
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.drafts.models import Draft
from apps.drafts.selectors import MAX_DRAFTS_IN_REGISTER_RESPONSE
from apps.drafts.serializers import MAX_DRAFTS_PER_REQUEST
from apps.messages.models import Recipient
from apps.realms.limits import MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.users.actions.activation import do_deactivate_user
from tests.api import assert_error, assert_success
from tests.drafts.conftest import api, create, db_state, draft, listed, without_ids


def refused(user, method: str, path: str, params: dict, status: int, code: str, msg: str) -> None:
    """The request is refused with this error and changes nothing."""
    before = db_state()
    assert_error(api(user).request(method, path, params), status, code, msg)
    assert db_state() == before


def refused_draft(user, one: dict, msg: str, code: str = "BAD_REQUEST") -> None:
    """POST /drafts with this draft, beside a valid one, creates neither."""
    refused(user, "POST", "/drafts", {"drafts": [draft(content="fine"), one]}, 400, code, msg)


# --- creating and listing -------------------------------------------------------------------------


def test_create_every_kind_and_list_them_newest_first(member, admin, owner, design):
    ids = create(
        member,
        draft("stream", [design.id], "plans", "Channel draft", timestamp=1595479019),
        draft("private", [admin.id], "ignored", "To one person", timestamp=1595479021),
        draft("private", [owner.id, admin.id], "", "To a group", timestamp=1595479020),
        draft("", [], "ignored too", "To nobody", timestamp=1595479022),
    )
    assert ids == sorted(set(ids))
    assert len(ids) == 4
    drafts = listed(member)
    assert [d["id"] for d in drafts] == [ids[3], ids[1], ids[2], ids[0]]
    assert without_ids(drafts) == [
        draft("", [], "", "To nobody", timestamp=1595479022),
        draft("private", [admin.id], "", "To one person", timestamp=1595479021),
        draft("private", sorted([owner.id, admin.id]), "", "To a group", timestamp=1595479020),
        draft("stream", [design.id], "plans", "Channel draft", timestamp=1595479019),
    ]


def test_drafts_edited_at_the_same_second_newest_id_first(member):
    first, second = create(member, draft(content="a", timestamp=1000), draft(content="b", timestamp=1000))
    assert [d["id"] for d in listed(member)] == [second, first]


def test_a_user_lists_only_their_own_drafts(member, admin, foreign_user):
    [mine] = create(member, draft(content="mine"))
    create(admin, draft(content="the administrator's"))
    create(foreign_user, draft(content="another organization's"))
    assert [d["id"] for d in listed(member)] == [mine]
    assert [d["content"] for d in listed(admin)] == ["the administrator's"]
    assert [d["content"] for d in listed(foreign_user)] == ["another organization's"]


def test_empty_list_creates_nothing(member):
    assert create(member) == []
    assert listed(member) == []


def test_direct_message_drafts_addressees(member, admin, owner):
    to_self, self_and_other, repeated = create(
        member,
        draft("private", [member.id]),
        draft("private", [member.id, admin.id]),
        draft("private", [owner.id, admin.id, owner.id, member.id]),
    )
    by_id = {d["id"]: d for d in listed(member)}
    # A draft to oneself is addressed to oneself; otherwise the owner is not listed (as in Zulip).
    assert by_id[to_self]["to"] == [member.id]
    assert by_id[self_and_other]["to"] == [admin.id]
    assert by_id[repeated]["to"] == sorted([owner.id, admin.id])


def test_direct_message_drafts_share_the_recipient_of_messages(member, admin):
    message_recipients = Recipient.objects.count()
    create(member, draft("private", [admin.id]), draft("private", [admin.id, member.id]))
    [one, two] = Draft.objects.order_by("id")
    assert one.recipient_id == two.recipient_id
    assert (one.recipient.type, one.recipient.type_id) == (Recipient.Type.PERSONAL, admin.id)
    assert Recipient.objects.count() == message_recipients + 1


def test_a_private_draft_to_nobody_is_unaddressed(member):
    create(member, draft("private", [], "a topic", "no one yet"))
    assert without_ids(listed(member)) == [
        {**draft("", [], "", "no one yet"), "timestamp": pytest.approx(time.time(), abs=5)}
    ]


def test_unaddressed_drafts_ignore_to(member):
    # Ids that name nothing, or another organization's channel: not looked at.
    create(member, draft("", [0, -1, 2**70], "topic", "text"))
    assert listed(member)[0]["to"] == []


def test_timestamp_filled_in_kept_or_truncated(member):
    before = int(time.time())
    create(
        member,
        draft(content="now"),
        draft(content="then", timestamp=1595479019.999999),
        draft(content="null", timestamp=None),
    )
    by_content = {d["content"]: d["timestamp"] for d in listed(member)}
    assert before <= by_content["now"] <= int(time.time())
    assert before <= by_content["null"] <= int(time.time())
    assert by_content["then"] == 1595479019
    stored = Draft.objects.get(content="then").last_edit_time
    assert stored == datetime.fromtimestamp(1595479019.999999, tz=UTC)


def test_content_and_topic_too_long_are_cut(member, design):
    create(member, draft("stream", [design.id], "t" * (MAX_TOPIC_LENGTH + 1), "c" * (MAX_MESSAGE_LENGTH + 1) + "   "))
    [stored] = listed(member)
    assert stored["topic"] == "t" * (MAX_TOPIC_LENGTH - 3) + "..."
    assert len(stored["content"]) == MAX_MESSAGE_LENGTH
    assert stored["content"].endswith("\n[message truncated]")


def test_content_trailing_whitespace_is_dropped_topic_kept_as_typed(member, design):
    create(member, draft("stream", [design.id], "  spaced  ", "text \n\n"))
    [stored] = listed(member)
    assert (stored["topic"], stored["content"]) == ("  spaced  ", "text")


def test_public_channel_without_subscription_is_fine(member, make_stream, owner):
    lobby = make_stream("lobby", owner)
    create(member, draft("stream", [lobby.id], "hi"))
    assert listed(member)[0]["to"] == [lobby.id]


def test_bots_keep_drafts_too(bot, design):
    [draft_id] = create(bot, draft("private", [bot.bot_owner_id]))
    assert [d["id"] for d in listed(bot)] == [draft_id]


# --- what a draft may not be ----------------------------------------------------------------------


@pytest.mark.parametrize("to", [[], "two"], ids=["no channel", "two channels"])
def test_channel_draft_needs_exactly_one_channel(member, design, make_stream, to):
    ids = [] if to == [] else [design.id, make_stream("other", member).id]
    refused_draft(member, draft("stream", ids, "t"), "Must specify exactly 1 stream ID for stream messages")


def test_channels_the_owner_cannot_reach_are_invalid(member, guest, make_stream, owner, design, other_realm):
    secret = make_stream("secret", owner, private=True)
    archived = make_stream("archived", member)
    do_deactivate_stream(archived, acting_user=None)
    foreign = make_stream("foreign", in_realm=other_realm)
    for channel_id in (secret.id, archived.id, foreign.id, 0, -5, 2**63, 10**30, max(secret.id, foreign.id) + 100):
        refused_draft(member, draft("stream", [channel_id], "t"), "Invalid channel ID")
    # A guest reaches only the channels they are subscribed to.
    refused_draft(guest, draft("stream", [design.id], "t"), "Invalid channel ID")


def test_users_the_owner_cannot_reach_are_invalid(member, admin, foreign_user):
    for user_id in (foreign_user.id, 0, -1, 2**70, foreign_user.id + 1000):
        refused_draft(member, draft("private", [admin.id, user_id]), f"Invalid user ID {user_id}")
    do_deactivate_user(admin, acting_user=None)
    refused_draft(member, draft("private", [admin.id]), "'admin@example.com' is no longer using Parley.")


def test_null_bytes_refused(member, design):
    refused_draft(member, draft("stream", [design.id], "a\x00b"), "Topic must not contain null bytes")
    refused_draft(member, draft("private", [], "a\x00b"), "Topic must not contain null bytes")
    refused_draft(member, draft(content="a\x00b"), "Message must not contain null bytes")


@pytest.mark.parametrize("content", ["", "   ", "\n\t "])
def test_blank_content_refused(member, content):
    refused_draft(member, draft(content=content), 'drafts[1]["content"] cannot be blank', "REQUEST_VARIABLE_INVALID")


@pytest.mark.parametrize(
    ("timestamp", "msg"),
    [
        (-1, "Timestamp must not be negative."),
        (-0.5, "Timestamp must not be negative."),
        (253402300800, "Timestamp is too large."),
        (1e300, "Timestamp is too large."),
    ],
)
def test_bad_timestamps_refused(member, timestamp, msg):
    refused_draft(member, draft(timestamp=timestamp), msg)


@pytest.mark.parametrize(
    ("drafts", "msg"),
    [
        ("not json", "drafts is not valid JSON"),
        ({"type": ""}, "drafts is not a list"),
        ([1], "drafts[0] is not a dict"),
        ([{"to": [], "topic": "", "content": "x"}], "type key is missing from drafts[0]"),
        ([{"type": "", "topic": "", "content": "x"}], "to key is missing from drafts[0]"),
        ([{"type": "", "to": [], "content": "x"}], "topic key is missing from drafts[0]"),
        ([{"type": "", "to": [], "topic": ""}], "content key is missing from drafts[0]"),
        ([draft(id=5)], 'Argument "id" at drafts[0] is unexpected'),
        ([draft(type="channel")], 'Invalid drafts[0]["type"]'),
        ([draft(type=None)], 'Invalid drafts[0]["type"]'),
        ([{**draft(), "to": "1"}], 'drafts[0]["to"] is not a list'),
        ([draft(to=[True])], 'drafts[0]["to"][0] is not an integer'),
        ([draft(to=[1.5])], 'drafts[0]["to"][0] is not an integer'),
        ([draft(topic=3)], 'drafts[0]["topic"] is not a string'),
        ([draft(content=["x"])], 'drafts[0]["content"] is not a string'),
        ([draft(timestamp="1")], 'drafts[0]["timestamp"] is not a float'),
        ([draft(timestamp=True)], 'drafts[0]["timestamp"] is not a float'),
        ('[{"type": "", "to": [], "topic": "", "content": "x", "timestamp": NaN}]', 'Invalid drafts[0]["timestamp"]'),
        ('[{"type": "", "to": [], "topic": "", "content": "x", "timestamp": 1e999}]', 'Invalid drafts[0]["timestamp"]'),
    ],
)
def test_malformed_drafts_refused(member, drafts, msg):
    refused(member, "POST", "/drafts", {"drafts": drafts}, 400, "REQUEST_VARIABLE_INVALID", msg)


def test_at_most_a_hundred_drafts_per_request(member):
    assert len(create(member, *[draft(content=str(n)) for n in range(MAX_DRAFTS_PER_REQUEST)])) == 100
    drafts = [draft(content=str(n)) for n in range(MAX_DRAFTS_PER_REQUEST + 1)]
    before = db_state()
    response = api(member).post("/drafts", {"drafts": drafts})
    assert response.status_code == 400
    assert response.json()["code"] == "REQUEST_VARIABLE_INVALID"
    assert "drafts" in response.json()["msg"]
    assert db_state() == before


def test_a_user_keeps_at_most_a_thousand_drafts(member, admin):
    Draft.objects.bulk_create(
        Draft(user=member, content=str(n), last_edit_time=datetime.fromtimestamp(n, tz=UTC))
        for n in range(Draft.MAX_PER_USER - 1)
    )
    msg = "Too many drafts (limit: 1000); delete some first."
    refused(member, "POST", "/drafts", {"drafts": [draft(), draft()]}, 400, "BAD_REQUEST", msg)
    create(member, draft(content="the last one"))
    refused(member, "POST", "/drafts", {"drafts": [draft()]}, 400, "BAD_REQUEST", msg)
    # Editing is not creating, and the cap is each user's own.
    last = Draft.objects.filter(user=member).order_by("-id").first()
    assert_success(api(member).patch(f"/drafts/{last.id}", {"draft": draft(content="edited")}))
    create(admin, draft(content="the admin's first"))


def test_drafts_parameter_required(member):
    refused(member, "POST", "/drafts", {}, 400, "REQUEST_VARIABLE_MISSING", "Missing 'drafts' argument")


def test_unknown_parameters_are_reported(member):
    body = assert_success(api(member).post("/drafts", {"drafts": [draft()], "extra": "x"}))
    assert body["ignored_parameters_unsupported"] == ["extra"]


# --- editing and deleting -------------------------------------------------------------------------


def test_edit_replaces_the_draft(member, admin, design):
    [draft_id] = create(member, draft("stream", [design.id], "plans", "old", timestamp=1595505700))
    new = draft("private", [admin.id], "dropped", "new", timestamp=1595505800)
    assert assert_success(api(member).patch(f"/drafts/{draft_id}", {"draft": new})) == {"result": "success", "msg": ""}
    assert listed(member) == [{**new, "id": draft_id, "topic": ""}]
    back = draft("stream", [design.id], "plans again", "newer")
    assert_success(api(member).patch(f"/drafts/{draft_id}", {"draft": back}))
    [stored] = listed(member)
    assert (stored["type"], stored["to"], stored["topic"]) == ("stream", [design.id], "plans again")
    assert stored["timestamp"] >= int(time.time()) - 5


def test_edit_checks_the_new_draft(member, design, make_stream, owner):
    [draft_id] = create(member, draft(content="kept"))
    secret = make_stream("secret", owner, private=True)
    path = f"/drafts/{draft_id}"
    refused(member, "PATCH", path, {"draft": draft("stream", [secret.id])}, 400, "BAD_REQUEST", "Invalid channel ID")
    refused(
        member, "PATCH", path, {"draft": draft(timestamp=-3)}, 400, "BAD_REQUEST", "Timestamp must not be negative."
    )
    refused(
        member,
        "PATCH",
        path,
        {"draft": draft(content="\x00")},
        400,
        "BAD_REQUEST",
        "Message must not contain null bytes",
    )
    refused(member, "PATCH", path, {"draft": [draft()]}, 400, "REQUEST_VARIABLE_INVALID", "draft is not a dict")
    refused(member, "PATCH", path, {"draft": "{"}, 400, "REQUEST_VARIABLE_INVALID", "draft is not valid JSON")
    refused(
        member, "PATCH", path, {"draft": {"type": ""}}, 400, "REQUEST_VARIABLE_INVALID", "to key is missing from draft"
    )
    refused(member, "PATCH", path, {}, 400, "REQUEST_VARIABLE_MISSING", "Missing 'draft' argument")
    assert listed(member)[0]["content"] == "kept"


def test_another_persons_draft_is_a_missing_one(member, admin, foreign_user, design):
    [theirs] = create(admin, draft(content="the administrator's"))
    [foreign] = create(foreign_user, draft(content="another organization's"))
    missing = max(theirs, foreign) + 100
    for draft_id in (theirs, foreign, missing, 0, "9" * 19):
        path = f"/drafts/{draft_id}"
        # Looked up before the new draft is checked: its channel is not, nor reported.
        bad = draft("stream", [10**6])
        refused(member, "PATCH", path, {"draft": bad}, 404, "BAD_REQUEST", "Draft does not exist")
        refused(member, "DELETE", path, {}, 404, "BAD_REQUEST", "Draft does not exist")
    assert [d["content"] for d in listed(admin)] == ["the administrator's"]


def test_delete(member):
    keep, gone = create(member, draft(content="keep", timestamp=1), draft(content="gone", timestamp=2))
    assert assert_success(api(member).delete(f"/drafts/{gone}")) == {"result": "success", "msg": ""}
    assert [d["id"] for d in listed(member)] == [keep]
    refused(member, "DELETE", f"/drafts/{gone}", {}, 404, "BAD_REQUEST", "Draft does not exist")


# --- synchronization turned off -------------------------------------------------------------------


def test_every_endpoint_refused_when_synchronization_is_off(member):
    [draft_id] = create(member, draft())
    member.enable_drafts_synchronization = False
    member.save(update_fields=["enable_drafts_synchronization"])
    msg = "User has disabled synchronizing drafts."
    refused(member, "GET", "/drafts", {}, 400, "BAD_REQUEST", msg)
    refused(member, "POST", "/drafts", {"drafts": [draft()]}, 400, "BAD_REQUEST", msg)
    # Before the parameters are looked at, as in Zulip.
    refused(member, "POST", "/drafts", {"drafts": "nonsense"}, 400, "BAD_REQUEST", msg)
    refused(member, "PATCH", f"/drafts/{draft_id}", {"draft": draft(content="x")}, 400, "BAD_REQUEST", msg)
    refused(member, "DELETE", f"/drafts/{draft_id}", {}, 400, "BAD_REQUEST", msg)


# --- paths, methods, authentication ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/drafts", ["GET", "POST", "HEAD"]),
        ("DELETE", "/drafts", ["GET", "POST", "HEAD"]),
        ("GET", "/drafts/{id}", ["PATCH", "DELETE"]),
        ("PUT", "/drafts/{id}", ["PATCH", "DELETE"]),
        ("POST", "/drafts/{id}", ["PATCH", "DELETE"]),
    ],
)
def test_other_methods_are_405(member, method, path, allowed):
    [draft_id] = create(member, draft())
    response = api(member).request(method, path.format(id=draft_id))
    body = assert_error(response, 405, "BAD_REQUEST", "Method Not Allowed")
    assert body["allowed_methods"] == allowed


@pytest.mark.parametrize("path", ["/drafts/", "/drafts/abc", "/drafts/-1", "/drafts/1/x"])
def test_paths_are_zulips_exactly(member, path):
    assert_error(api(member).patch(path, {"draft": draft()}), 404, "BAD_REQUEST", "Not Found")


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/drafts"), ("POST", "/drafts"), ("PATCH", "/drafts/1"), ("DELETE", "/drafts/1")]
)
def test_authentication_comes_first(realm, anonymous, method, path):
    assert_error(anonymous.request(method, path), 401, "UNAUTHORIZED")


def test_listing_costs_the_same_queries_however_many_drafts(member, admin, owner, design):
    create(member, draft("private", [admin.id, owner.id]))
    with CaptureQueriesContext(connection) as few:
        listed(member)
    create(
        member,
        *[draft("private", [admin.id, owner.id]), draft("stream", [design.id]), draft("private", [admin.id])] * 5,
    )
    with CaptureQueriesContext(connection) as many:
        assert len(listed(member)) == 16
    assert len(many) == len(few)


# --- events and /register -------------------------------------------------------------------------


def test_events_go_to_the_owner_only(capture_events, member, admin, design):
    with capture_events(member, admin, event_types=["drafts"]) as received:
        [one, two] = create(
            member, draft("stream", [design.id], "t", "one", timestamp=5), draft(content="two", timestamp=6)
        )
        assert_success(
            api(member).patch(f"/drafts/{one}", {"draft": draft("private", [admin.id], "", "edited", timestamp=7)})
        )
        assert_success(api(member).delete(f"/drafts/{two}"))
    assert received[admin.id] == []
    assert received[member.id] == [
        {
            "type": "drafts",
            "op": "add",
            "drafts": [
                {"id": one, **draft("stream", [design.id], "t", "one", timestamp=5)},
                {"id": two, **draft("", [], "", "two", timestamp=6)},
            ],
        },
        {
            "type": "drafts",
            "op": "update",
            "draft": {"id": one, **draft("private", [admin.id], "", "edited", timestamp=7)},
        },
        {"type": "drafts", "op": "remove", "draft_id": two},
    ]


def test_refused_requests_send_no_event(capture_events, member, admin):
    [theirs] = create(admin, draft())
    with capture_events(member, admin, event_types=["drafts"]) as received:
        api(member).post("/drafts", {"drafts": [draft(), draft(timestamp=-1)]})
        api(member).delete(f"/drafts/{theirs}")
    assert received == {member.id: [], admin.id: []}


def test_register_gives_the_drafts_newest_first(member, admin):
    older, newer = create(member, draft(content="older", timestamp=10), draft(content="newer", timestamp=20))
    create(admin, draft(content="not the member's"))
    state = assert_success(api(member).post("/register", {"fetch_event_types": ["drafts"]}))
    assert [d["id"] for d in state["drafts"]] == [newer, older]
    assert state["drafts"][0] == {"id": newer, **draft(content="newer", timestamp=20)}


def test_register_gives_the_most_recent_thousand(member):
    Draft.objects.bulk_create(
        Draft(user=member, content=str(n), last_edit_time=datetime.fromtimestamp(n, tz=UTC))
        for n in range(MAX_DRAFTS_IN_REGISTER_RESPONSE + 1)
    )
    state = assert_success(api(member).post("/register", {"fetch_event_types": ["drafts"]}))
    assert len(state["drafts"]) == MAX_DRAFTS_IN_REGISTER_RESPONSE
    assert state["drafts"][-1]["content"] == "1"  # the oldest one is left out
    assert len(listed(member)) == MAX_DRAFTS_IN_REGISTER_RESPONSE + 1


def test_register_gives_no_drafts_when_synchronization_is_off(member):
    create(member, draft())
    member.enable_drafts_synchronization = False
    member.save(update_fields=["enable_drafts_synchronization"])
    state = assert_success(api(member).post("/register", {"fetch_event_types": ["drafts"]}))
    assert state["drafts"] == []


def test_register_without_drafts_in_fetch_types(member):
    create(member, draft())
    state = assert_success(api(member).post("/register", {"fetch_event_types": ["message"]}))
    assert "drafts" not in state
