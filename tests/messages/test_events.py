"""The events messages send: shapes, flags per recipient, options of each queue."""

import functools

import pytest

from apps.subscriptions.actions.channels import NewChannel, create_streams
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from tests.api import ApiClient, assert_success
from tests.messages.conftest import UI_CLIENT

pytestmark = pytest.mark.django_db(transaction=True)


TYPES = ["message", "update_message_flags", "delete_message", "muted_users"]


@pytest.fixture
def queue_of(queue_of):
    """The shared `queue_of`, registering for message events unless told otherwise."""
    return functools.partial(queue_of, event_types=TYPES)


@pytest.fixture
def design(realm, owner, admin, member):
    [stream] = create_streams(realm, [NewChannel("design")], acting_user=None)
    bulk_add_subscriptions(realm, [stream], [owner, admin, member], acting_user=None)
    return stream


def send(user, **params):
    return assert_success(ApiClient(user).post("/messages", params, **UI_CLIENT))["id"]


def test_a_channel_message_reaches_subscribers_with_their_flags(queue_of, design, owner, admin, member, guest):
    sender, mentioned = queue_of(member), queue_of(admin, apply_markdown=True)
    other, outsider = queue_of(owner), queue_of(guest)
    message_id = send(member, type="stream", to="design", topic="plans", content="Hi @**Adam Admin**")

    [mine] = sender()
    assert (mine["type"], mine["flags"], mine["message"]["id"]) == ("message", ["read"], message_id)
    [theirs] = mentioned()
    assert theirs["flags"] == ["mentioned"]
    message = theirs["message"]
    assert (message["display_recipient"], message["subject"], message["stream_id"]) == ("design", "plans", design.id)
    assert message["content"] == f'<p>Hi <span class="user-mention" data-user-id="{admin.id}">@Adam Admin</span></p>'
    assert "raw_content" not in message
    assert "gravatar" not in message
    assert other()[0]["flags"] == []
    assert outsider() == []  # not subscribed


def test_message_events_follow_each_queues_options(queue_of, design, member, admin):
    markdown = queue_of(admin, apply_markdown=False, client_gravatar=True)
    html = queue_of(admin, apply_markdown=True, client_gravatar=False)
    send(member, type="stream", to="design", topic="", content="**bold**")
    [raw] = markdown()
    assert (raw["message"]["content"], raw["message"]["content_type"]) == ("**bold**", "text/x-markdown")
    assert raw["message"]["avatar_url"] is None  # the client computes the Gravatar URL itself
    assert raw["message"]["subject"] == "general chat"  # no empty_topic_name capability
    [rendered] = html()
    assert (rendered["message"]["content"], rendered["message"]["content_type"]) == (
        "<p><strong>bold</strong></p>",
        "text/html",
    )
    assert rendered["message"]["avatar_url"].startswith("https://secure.gravatar.com/")
    modern = queue_of(admin, client_capabilities={"notification_settings_null": True, "empty_topic_name": True})
    send(member, type="stream", to="design", topic="", content="again")
    assert modern()[0]["message"]["subject"] == ""


def test_without_gravatar_messages_carry_the_default_picture(settings, queue_of, design, member, admin):
    settings.ENABLE_GRAVATAR = False
    computes = queue_of(admin, client_gravatar=True)
    message_id = send(member, type="stream", to="design", topic="t", content="hi")
    assert computes()[0]["message"]["avatar_url"] == "/static/realms/default-picture.png?version=1"
    page = assert_success(ApiClient(admin).get("/messages", {"anchor": message_id, "num_before": 0, "num_after": 0}))
    assert page["messages"][0]["avatar_url"] == "/static/realms/default-picture.png?version=1"


def test_direct_messages_reach_only_their_people(queue_of, owner, admin, member, moderator):
    queues = {u.id: queue_of(u, apply_markdown=True) for u in (owner, admin, member, moderator)}
    send(member, type="private", to=[admin.id], content="just us")
    assert [e["message"]["content"] for e in queues[admin.id]()] == ["<p>just us</p>"]
    assert len(queues[member.id]()) == 1
    assert queues[owner.id]() == queues[moderator.id]() == []
    send(member, type="direct", to=f"{admin.delivery_email},{owner.delivery_email}", content="group")
    [event] = queues[owner.id]()
    assert [p["id"] for p in event["message"]["display_recipient"]] == sorted([owner.id, admin.id, member.id])


def test_flag_changes_are_sent_to_their_user(queue_of, design, member, admin):
    message_id = send(member, type="stream", to="design", topic="t", content="x")
    events = queue_of(admin)
    api = ApiClient(admin)
    assert_success(api.post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "read"}))
    assert_success(api.post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "read"}))  # no change
    assert_success(api.post("/messages/flags", {"messages": [message_id], "op": "remove", "flag": "read"}))
    added, removed = events()
    assert added == {
        "type": "update_message_flags", "op": "add", "operation": "add", "flag": "read",
        "messages": [message_id], "all": False,
    }  # fmt: skip
    assert removed["message_details"] == {
        str(message_id): {"type": "stream", "stream_id": design.id, "topic": "t", "unmuted_stream_msg": True}
    }


def test_muting_marks_messages_read_and_sends_the_list(queue_of, design, member, admin):
    old = send(member, type="stream", to="design", topic="t", content="before")
    events = queue_of(admin)
    assert_success(ApiClient(admin).post(f"/users/me/muted_users/{member.id}"))
    flags, muted = events()
    assert (flags["flag"], flags["messages"]) == ("read", [old])
    assert [m["id"] for m in muted["muted_users"]] == [member.id]
    send(member, type="stream", to="design", topic="t", content="after")
    [new] = events()
    assert new["flags"] == ["read"]  # arrives read: no notification


def test_deleting_a_topic_tells_those_who_saw_it(queue_of, design, member, admin, owner):
    first = send(member, type="stream", to="design", topic="gone", content="x")
    kept = send(member, type="stream", to="design", topic="kept", content="y")
    events = queue_of(
        owner, event_types=["delete_message", "stream"], client_capabilities={"bulk_message_deletion": True}
    )
    body = assert_success(ApiClient(admin).post(f"/streams/{design.id}/delete_topic", {"topic_name": "gone"}))
    assert body["complete"] is True
    deleted, update = events()
    assert deleted == {
        "type": "delete_message", "message_type": "stream", "stream_id": design.id, "topic": "gone",
        "message_ids": [first],
    }  # fmt: skip
    assert (update["type"], update["property"], update["value"]) == ("stream", "first_message_id", kept)


def test_register_state_of_messages(queue_of, design, member, admin):
    mentioned = send(member, type="stream", to="design", topic="t", content="@**Adam Admin**")
    dm = send(member, type="private", to=[admin.id], content="psst")
    api = ApiClient(admin)
    starred = send(admin, type="stream", to="design", topic="t", content="mine")
    assert_success(api.post("/messages/flags", {"messages": [starred], "op": "add", "flag": "starred"}))
    state = assert_success(
        api.post("/register", {"fetch_event_types": ["message", "update_message_flags", "starred_messages"]})
    )
    assert state["max_message_id"] == starred
    unread = state["unread_msgs"]
    assert unread["streams"] == [{"stream_id": design.id, "topic": "t", "unread_message_ids": [mentioned]}]
    assert unread["pms"] == [{"other_user_id": member.id, "sender_id": member.id, "unread_message_ids": [dm]}]
    assert (unread["mentions"], unread["count"], unread["old_unreads_missing"]) == ([mentioned], 2, False)
    assert state["starred_messages"] == [starred]


def test_unread_state_gathers_each_conversation_in_order(design, owner, admin, member):
    """A one-to-one conversation's unread messages in either direction are one entry; a group's are
    another; every list is in message order, mentions across conversations too."""
    dm_in = send(member, type="private", to=[admin.id], content="psst")
    group_first = send(member, type="private", to=[admin.id, owner.id], content="all of us")
    mentioned = send(member, type="stream", to="design", topic="t", content="@**Adam Admin**")
    dm_out = send(admin, type="private", to=[member.id], content="@**Mark Member**?", read_by_sender="false")
    group_second = send(owner, type="private", to=[admin.id, member.id], content="@**Adam Admin** yes")
    state = assert_success(
        ApiClient(admin).post("/register", {"fetch_event_types": ["message", "update_message_flags"]})
    )
    unread = state["unread_msgs"]
    assert unread["pms"] == [
        {"other_user_id": member.id, "sender_id": member.id, "unread_message_ids": [dm_in, dm_out]}
    ]
    everyone = ",".join(map(str, sorted([owner.id, admin.id, member.id])))
    assert unread["huddles"] == [{"user_ids_string": everyone, "unread_message_ids": [group_first, group_second]}]
    assert unread["streams"] == [{"stream_id": design.id, "topic": "t", "unread_message_ids": [mentioned]}]
    assert (unread["mentions"], unread["count"]) == ([mentioned, group_second], 5)


def test_unread_state_names_topics_as_the_message_events_do(queue_of, design, member, admin):
    empty = send(member, type="stream", to="design", topic="", content="x")
    lower = send(member, type="stream", to="design", topic="lunch", content="y")
    upper = send(member, type="stream", to="design", topic="LUNCH", content="z")
    api = ApiClient(admin)
    fetch = {"fetch_event_types": ["message", "update_message_flags"]}
    legacy = assert_success(api.post("/register", fetch))["unread_msgs"]["streams"]
    # As in Zulip: "general chat" (the name its message events carry) without the capability, and
    # one entry per topic whatever the case of its messages (topics are case-insensitive).
    assert legacy == [
        {"stream_id": design.id, "topic": "general chat", "unread_message_ids": [empty]},
        {"stream_id": design.id, "topic": "lunch", "unread_message_ids": [lower, upper]},
    ]
    capable = assert_success(api.post("/register", {**fetch, "client_capabilities": {"empty_topic_name": True}}))
    assert [s["topic"] for s in capable["unread_msgs"]["streams"]] == ["", "lunch"]


def test_muted_conversations_are_unread_but_not_counted(queue_of, design, realm, member, admin):
    [quiet] = create_streams(realm, [NewChannel("quiet")], acting_user=None)
    bulk_add_subscriptions(realm, [quiet], [admin, member], acting_user=None)
    api = ApiClient(admin)
    assert_success(api.patch(f"/users/me/subscriptions/{quiet.id}", {"property": "is_muted", "value": True}))
    assert_success(api.post("/user_topics", {"stream_id": design.id, "topic": "noise", "visibility_policy": 1}))
    assert_success(api.post("/user_topics", {"stream_id": quiet.id, "topic": "kept", "visibility_policy": 2}))
    in_muted_topic = send(member, type="stream", to="design", topic="Noise", content="@**all** hi")
    in_muted_channel = send(member, type="stream", to="quiet", topic="t", content="@**all** hi")
    unmuted_in_muted_channel = send(member, type="stream", to="quiet", topic="kept", content="@**all** hi")
    named = send(member, type="stream", to="quiet", topic="t", content="@**Adam Admin**")
    plain = send(member, type="stream", to="design", topic="t", content="hi")
    unread = assert_success(api.post("/register", {"fetch_event_types": ["message", "update_message_flags"]}))[
        "unread_msgs"
    ]
    # As in Zulip: all listed, muted ones not counted, and a wildcard mention there no mention.
    listed = sorted(i for entry in unread["streams"] for i in entry["unread_message_ids"])
    assert listed == sorted([in_muted_topic, in_muted_channel, unmuted_in_muted_channel, named, plain])
    assert unread["count"] == 2  # unmuted_in_muted_channel, plain
    assert sorted(unread["mentions"]) == [unmuted_in_muted_channel, named]

    events = queue_of(admin)
    ids = [in_muted_topic, in_muted_channel, unmuted_in_muted_channel, plain]
    assert_success(api.post("/messages/flags", {"messages": ids, "op": "add", "flag": "read"}))
    assert_success(api.post("/messages/flags", {"messages": ids, "op": "remove", "flag": "read"}))
    details = events()[1]["message_details"]
    assert {int(i): (d["unmuted_stream_msg"], d.get("mentioned", False)) for i, d in details.items()} == {
        in_muted_topic: (False, False),
        in_muted_channel: (False, False),
        unmuted_in_muted_channel: (True, True),
        plain: (True, False),
    }


def test_a_queue_with_a_narrow_shows_only_the_messages_it_matches(queue_of, design, realm, member, admin):
    [other] = create_streams(realm, [NewChannel("other")], acting_user=None)
    bulk_add_subscriptions(realm, [other], [admin, member], acting_user=None)
    narrowed = queue_of(admin, narrow=[["stream", "design"], {"operator": "sender", "operand": member.delivery_email}])
    send(member, type="stream", to="other", topic="t", content="elsewhere")
    send(admin, type="stream", to="design", topic="t", content="from someone else")
    wanted = send(member, type="stream", to="design", topic="t", content="this one")
    assert [e["message"]["id"] for e in narrowed()] == [wanted]


def test_a_queue_narrow_with_an_unsupported_operator_is_refused(event_backend, member):
    response = ApiClient(member).post("/register", {"narrow": [["search", "x"]]})
    assert response.status_code == 400
    assert response.json()["msg"] == "Operator search not supported."


def test_queue_narrows_on_is_follow_zulips_event_predicate(queue_of, design, member, admin):
    """Zulip's build_narrow_predicate: is:alerted and is:mentioned both mean a personal mention,
    is:unread the recipient's unread messages, is:resolved a resolved topic's; an "is" operand it
    does not filter on (is:muted) lets everything through; only is:followed is refused."""
    queues = {
        operand: queue_of(admin, narrow=[["is", operand]]) for operand in ("alerted", "unread", "resolved", "muted")
    }
    everyone = send(member, type="stream", to="design", topic="t", content="@**all** look")
    mention = send(member, type="stream", to="design", topic="t", content="@**Adam Admin** look")
    resolved = send(member, type="stream", to="design", topic="✔ done", content="fixed")
    own = send(admin, type="stream", to="design", topic="t", content="mine, so read")

    def ids(operand):
        return [e["message"]["id"] for e in queues[operand]()]

    assert ids("alerted") == [mention]
    assert ids("unread") == [everyone, mention, resolved]
    assert ids("resolved") == [resolved]
    assert ids("muted") == [everyone, mention, resolved, own]
    response = ApiClient(admin).post("/register", {"narrow": [["is", "followed"]]})
    assert (response.status_code, response.json()["msg"]) == (400, "Operand followed not supported.")


def test_a_waiting_poll_is_not_answered_with_hidden_events(event_backend, design, realm, member, admin, settings):
    import asyncio

    from apps.events.longpoll import long_poll

    settings.EVENTS_HEARTBEAT_SECONDS = (0.3, 0.4)
    [other] = create_streams(realm, [NewChannel("other")], acting_user=None)
    bulk_add_subscriptions(realm, [other], [admin, member], acting_user=None)
    params = {"event_types": ["message"], "narrow": [["stream", "design"]]}
    queue_id = assert_success(ApiClient(admin).post("/register", params))["queue_id"]
    send(member, type="stream", to="other", topic="t", content="hidden")
    events, _ = asyncio.run(long_poll(event_backend, queue_id, admin.id, -1, dont_block=False))
    # Not answered at once with nothing (the client would poll again at once, for ever): it waits,
    # then a heartbeat, whose id acknowledges the hidden event too.
    assert [(e["id"], e["type"]) for e in events] == [(1, "heartbeat")]


def test_events_a_narrow_hides_do_not_pile_up_until_the_queue_is_evicted(
    event_backend, design, member, admin, settings
):
    """Hidden events stay in the queue until the client acknowledges a later event, and count
    toward EVENT_QUEUE_MAX_EVENTS: once a few pile up, the poll answers with a heartbeat (well
    before the heartbeat interval), whose acknowledgement takes them out."""
    import asyncio

    from apps.events.longpoll import long_poll

    settings.EVENTS_HEARTBEAT_SECONDS = (30, 30)
    settings.EVENT_QUEUE_MAX_EVENTS = 5  # hidden events answered with a heartbeat from 2
    params = {"event_types": ["message"], "narrow": [["is", "dm"]]}
    queue_id = assert_success(ApiClient(admin).post("/register", params))["queue_id"]

    async def client():
        last, received = -1, []
        while not received or received[-1]["type"] != "message":
            events, _ = await asyncio.wait_for(long_poll(event_backend, queue_id, admin.id, last, dont_block=False), 10)
            received += events
            last = events[-1]["id"]
        return received

    async def scenario():
        polling = asyncio.create_task(client())
        for n in range(8):  # the queue would have been evicted at 6 events
            await asyncio.to_thread(send, member, type="stream", to="design", topic="t", content=f"hidden {n}")
        dm = await asyncio.to_thread(send, member, type="private", to=[admin.id], content="for you")
        return dm, await polling

    dm, received = asyncio.run(scenario())
    assert [e["type"] for e in received][-1] == "message"
    assert received[-1]["message"]["id"] == dm
    assert {e["type"] for e in received[:-1]} == {"heartbeat"}


def test_a_dont_block_poll_answers_piled_up_hidden_events_with_a_heartbeat(
    event_backend, design, member, admin, settings
):
    settings.EVENT_QUEUE_MAX_EVENTS = 5  # a heartbeat from 2 hidden events
    params = {"event_types": ["message"], "narrow": [["is", "dm"]]}
    api = ApiClient(admin)
    queue_id = assert_success(api.post("/register", params))["queue_id"]

    def poll(last):
        body = api.get("/events", {"queue_id": queue_id, "last_event_id": last, "dont_block": True})
        return [(e["id"], e["type"]) for e in assert_success(body)["events"]]

    send(member, type="stream", to="design", topic="t", content="hidden 0")
    assert poll(-1) == []  # one hidden event: nothing to say yet
    send(member, type="stream", to="design", topic="t", content="hidden 1")
    assert poll(-1) == [(2, "heartbeat")]
    assert poll(2) == []  # acknowledged, and the hidden events with it


def test_the_sending_client_gets_its_local_id_back(event_backend, design, member):
    api = ApiClient(member)
    sending = assert_success(api.post("/register", {"event_types": ["message"]}))["queue_id"]
    other = assert_success(api.post("/register", {"event_types": ["message"]}))["queue_id"]
    params = {"type": "stream", "to": "design", "topic": "t", "content": "x", "queue_id": sending, "local_id": "42.01"}
    message_id = assert_success(api.post("/messages", params))["id"]

    def events(queue_id):
        body = api.get("/events", {"queue_id": queue_id, "last_event_id": -1, "dont_block": True})
        return assert_success(body)["events"]

    [echoed] = events(sending)
    assert (echoed["message"]["id"], echoed["local_message_id"]) == (message_id, "42.01")
    assert "sender_queue_id" not in echoed
    [plain] = events(other)
    assert "local_message_id" not in plain
    assert "sender_queue_id" not in plain


def test_all_public_streams_queues_get_every_public_channel_message(queue_of, realm, member, admin, owner, guest):
    [public, private] = create_streams(realm, [NewChannel("public"), NewChannel("private")], acting_user=None)
    private.invite_only = True
    private.save()
    bulk_add_subscriptions(realm, [public, private], [member], acting_user=None)
    listening = queue_of(admin, all_public_streams=True)
    ordinary = queue_of(admin)  # the same user's other queue
    assert_success(ApiClient(owner).post("/register", {"all_public_streams": True}))
    refused = ApiClient(guest).post("/register", {"all_public_streams": True})
    assert refused.json()["msg"] == "User not authorized for this query"

    seen = send(member, type="stream", to="public", topic="t", content="for everyone")
    send(member, type="stream", to="private", topic="t", content="for members")
    send(member, type="private", to=[owner.id], content="not a channel message")
    [event] = listening()
    assert (event["message"]["id"], event["flags"]) == (seen, [])
    assert "all_public_streams" not in event
    assert ordinary() == []


def test_unread_counts_follow_the_fetched_types(event_backend, design, member, admin):
    send(member, type="stream", to="design", topic="t", content="unread")
    api = ApiClient(admin)
    both = {"event_types": ["update_message_flags"], "fetch_event_types": ["message", "update_message_flags"]}
    assert assert_success(api.post("/register", both))["unread_msgs"]["count"] == 1
    alone = {"event_types": ["message", "update_message_flags"], "fetch_event_types": ["update_message_flags"]}
    assert "unread_msgs" not in assert_success(api.post("/register", alone))


def test_marking_everything_read_says_all_and_lists_no_ids(queue_of, design, member, admin):
    send(member, type="stream", to="design", topic="t", content="one")
    send(member, type="private", to=[admin.id], content="two")
    events = queue_of(admin)
    assert_success(ApiClient(admin).post("/mark_all_as_read"))
    assert events() == [
        {"type": "update_message_flags", "op": "add", "operation": "add", "flag": "read", "messages": [], "all": True}
    ]
    assert_success(ApiClient(admin).post("/mark_all_as_read"))
    assert events() == []  # nothing left to mark
    state = assert_success(
        ApiClient(admin).post("/register", {"fetch_event_types": ["message", "update_message_flags"]})
    )
    assert state["unread_msgs"]["count"] == 0
