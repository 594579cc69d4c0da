"""POST /streams/{stream_id}/delete_topic: administrators only; newest first, in batches, within
a time budget (complete: false until done); siblings untouched; users' topic policies reset; the
first_message_id update and delete_message events; concurrent calls on PostgreSQL."""

import threading

import pytest
from django.db import connection

from apps.messages.models import Message, Recipient, UserMessage
from apps.messages.recipients import get_recipient
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.models import Stream, Subscription, UserTopic
from tests.api import ApiClient, assert_error, assert_success
from tests.concurrency import at_once
from tests.messages.conftest import db_state

BULK = {"bulk_message_deletion": True}


def delete_topic(user, stream, topic_name):
    return ApiClient(user).post(f"/streams/{stream.id}/delete_topic", {"topic_name": topic_name})


def topic_ids(stream, topic) -> list[int]:
    return list(Message.objects.filter(stream=stream, topic=topic).order_by("id").values_list("id", flat=True))


def bulk_topic(stream, sender, topic: str, count: int) -> list[int]:
    """`count` messages from `sender` in the topic, each with the rows of the channel's subscribers
    (written in bulk: sending thousands one by one would only slow the test down)."""
    recipient = get_recipient(Recipient.Type.STREAM, stream.id)
    Message.objects.bulk_create(
        Message(
            realm_id=stream.realm_id,
            sender=sender,
            recipient=recipient,
            stream=stream,
            topic=topic,
            content=f"message {n}",
            rendered_content=f"<p>message {n}</p>",
        )
        for n in range(count)
    )
    ids = topic_ids(stream, topic)[-count:]
    users = list(Subscription.objects.filter(stream=stream, active=True).values_list("user_id", flat=True))
    UserMessage.objects.bulk_create(UserMessage(user_id=u, message_id=m) for m in ids for u in users)
    return ids


def set_policy(user, stream, topic, policy):
    assert_success(
        ApiClient(user).post("/user_topics", {"stream_id": stream.id, "topic": topic, "visibility_policy": policy})
    )


@pytest.fixture
def design(make_stream, member, admin, owner):
    return make_stream("design", member, admin, owner)


# --- who may -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["moderator", "member", "guest", "bot"])
def test_delete_topic_by_non_administrator_is_refused(request, role, design, send, member):
    send(member, design, topic="gone")
    user = request.getfixturevalue(role)
    before = db_state()
    assert_error(
        delete_topic(user, design, "gone"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator"
    )
    assert db_state() == before


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_delete_topic_by_administrator_deletes_the_topic(request, role, design, send, member):
    gone = [send(member, design, f"m{n}", topic="gone") for n in range(3)]
    user = request.getfixturevalue(role)
    assert assert_success(delete_topic(user, design, "gone"))["complete"] is True
    assert not Message.objects.filter(id__in=gone).exists()
    assert not UserMessage.objects.filter(message_id__in=gone).exists()


def test_delete_topic_by_non_administrator_is_refused_before_its_parameters_are_read(design, member):
    """The role gate comes first, as Zulip's require_realm_admin: a non-administrator learns nothing
    about the request."""
    before = db_state()
    response = ApiClient(member).post(f"/streams/{design.id}/delete_topic")
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    response = ApiClient(member).post("/streams/987654321/delete_topic", {"topic_name": "gone"})
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    assert db_state() == before


def test_delete_topic_is_in_the_audit_log(design, send, member, admin):
    send(member, design, topic="gone")
    send(member, design, topic="gone")
    assert assert_success(delete_topic(admin, design, "Gone"))["complete"] is True
    [entry] = RealmAuditLog.objects.filter(event_type=AuditLogEventType.STREAM_TOPIC_DELETED)
    assert (entry.realm_id, entry.event_type, entry.acting_user_id, entry.modified_stream_id) == (
        design.realm_id,
        AuditLogEventType.STREAM_TOPIC_DELETED,
        admin.id,
        design.id,
    )
    assert entry.extra_data == {"topic_name": "Gone", "message_count": 2}


def test_delete_topic_of_invisible_or_unknown_channel_is_refused(
    make_stream, send, owner, admin, other_realm, foreign_user
):
    secret = make_stream("secret", owner, private=True)
    send(owner, secret, topic="gone")
    theirs = make_stream("theirs", foreign_user, in_realm=other_realm)
    before = db_state()
    # Not subscribed to the private channel: its content is not the administrator's.
    assert_error(delete_topic(admin, secret, "gone"), 400, "BAD_REQUEST", "Invalid channel ID")
    assert_error(delete_topic(admin, theirs, "gone"), 400, "BAD_REQUEST", "Invalid channel ID")
    response = ApiClient(admin).post("/streams/987654321/delete_topic", {"topic_name": "gone"})
    assert_error(response, 400, "BAD_REQUEST", "Invalid channel ID")
    assert db_state() == before


def test_delete_topic_without_topic_name_is_refused(design, send, member, admin):
    send(member, design, topic="gone")
    before = db_state()
    response = ApiClient(admin).post(f"/streams/{design.id}/delete_topic")
    assert_error(response, 400, "REQUEST_VARIABLE_MISSING", "Missing 'topic_name' argument")
    assert db_state() == before


# --- what is deleted ----------------------------------------------------------------------------------------


def test_delete_topic_leaves_siblings_untouched(make_stream, design, send, member, admin):
    other = make_stream("other", member, admin)
    gone = send(member, design, topic="Lunch")
    kept = [
        send(member, design, topic="lunch break"),
        send(member, design, topic="dinner"),
        send(member, other, topic="lunch"),  # the same topic in another channel
        send(member, [admin], "lunch?"),
    ]
    assert assert_success(delete_topic(admin, design, "lunch"))["complete"] is True  # case-insensitive
    assert list(Message.objects.order_by("id").values_list("id", flat=True)) == kept
    assert not Message.objects.filter(id=gone).exists()


def test_delete_topic_general_chat_is_the_empty_topic(design, send, member, admin):
    send(member, design, topic="")
    kept = send(member, design, topic="general")
    assert assert_success(delete_topic(admin, design, "general chat"))["complete"] is True
    assert list(Message.objects.values_list("id", flat=True)) == [kept]


def test_delete_topic_twice_deletes_nothing_and_answers_complete(design, send, member, admin):
    send(member, design, topic="gone")
    kept = send(member, design, topic="kept")
    assert assert_success(delete_topic(admin, design, "gone"))["complete"] is True
    before = db_state()
    assert assert_success(delete_topic(admin, design, "gone"))["complete"] is True
    assert assert_success(delete_topic(admin, design, "never existed"))["complete"] is True
    assert db_state() == before
    assert list(Message.objects.values_list("id", flat=True)) == [kept]


def test_delete_topic_with_a_tiny_budget_is_repeated_until_complete(settings, design, send, member, admin):
    settings.DELETE_TOPIC_TIME_BUDGET_SECONDS = 0
    settings.DELETE_TOPIC_BATCH_SIZE = 500
    first = send(member, design, topic="kept")
    gone = bulk_topic(design, member, "big", 2600)
    sibling = bulk_topic(design, member, "kept", 10)
    answers, remaining = [], []
    while True:
        complete = assert_success(delete_topic(admin, design, "big"))["complete"]
        answers.append(complete)
        remaining.append(topic_ids(design, "big"))
        if complete:
            break
        assert len(answers) < 20
    # One batch per call (the budget is spent by then), newest first; then a call that finds nothing.
    assert answers == [False] * 6 + [True]
    assert [len(ids) for ids in remaining] == [2100, 1600, 1100, 600, 100, 0, 0]
    assert remaining[0] == gone[:2100]
    assert not UserMessage.objects.filter(message_id__in=gone).exists()
    assert topic_ids(design, "kept") == [first, *sibling]
    assert UserMessage.objects.filter(message_id__in=sibling).count() == 30


def test_delete_topic_resets_users_topic_policies_once_complete(
    settings, make_stream, design, send, member, admin, owner
):
    other = make_stream("other", member)
    send(member, design, topic="gone")
    send(member, design, topic="gone")
    set_policy(member, design, "GONE", 1)
    set_policy(owner, design, "gone", 3)
    set_policy(member, design, "kept", 1)
    set_policy(member, other, "gone", 1)
    settings.DELETE_TOPIC_TIME_BUDGET_SECONDS = 0
    settings.DELETE_TOPIC_BATCH_SIZE = 1
    assert assert_success(delete_topic(admin, design, "gone"))["complete"] is False
    assert UserTopic.objects.filter(stream=design, topic_name__iexact="gone").count() == 2  # not yet
    while not assert_success(delete_topic(admin, design, "gone"))["complete"]:
        pass
    assert sorted(UserTopic.objects.values_list("stream_id", "topic_name")) == sorted(
        [(design.id, "kept"), (other.id, "gone")]
    )


def test_delete_topic_updates_the_channels_first_message(design, send, member, admin):
    first = send(member, design, topic="gone")
    second = send(member, design, topic="kept")
    assert Stream.objects.get(id=design.id).first_message_id == first
    assert_success(delete_topic(admin, design, "gone"))
    assert Stream.objects.get(id=design.id).first_message_id == second
    assert_success(delete_topic(admin, design, "kept"))
    assert Stream.objects.get(id=design.id).first_message_id is None


def test_delete_topic_in_protected_history_deletes_only_what_the_administrator_received(
    make_stream, send, realm, owner, admin, member
):
    from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions

    secret = make_stream("secret", owner, member, private=True)
    unseen = send(owner, secret, topic="gone")
    bulk_add_subscriptions(realm, [secret], [admin], acting_user=None)
    seen = send(owner, secret, topic="gone")
    assert assert_success(delete_topic(admin, secret, "gone"))["complete"] is True
    assert topic_ids(secret, "gone") == [unseen]
    assert not Message.objects.filter(id=seen).exists()


# --- events ------------------------------------------------------------------------------------------------


def test_delete_topic_events_reach_those_who_could_see_the_messages(
    capture_events, make_stream, design, send, realm, member, admin, owner, moderator, guest
):
    from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions

    gone = [send(member, design, f"m{n}", topic="gone") for n in range(3)]
    kept = send(member, design, topic="kept")
    bulk_remove_subscriptions(realm, [owner], [design], acting_user=None)  # had them: still told
    users = (member, admin, owner, moderator, guest)
    with capture_events(*users, event_types=["delete_message", "stream"], client_capabilities=BULK) as received:
        assert assert_success(delete_topic(admin, design, "gone"))["complete"] is True
    deleted = {
        "type": "delete_message",
        "message_type": "stream",
        "stream_id": design.id,
        "topic": "gone",
        "message_ids": gone,
    }
    update = {
        "type": "stream",
        "op": "update",
        "stream_id": design.id,
        "name": "design",
        "property": "first_message_id",
        "value": kept,
    }
    for user in (member, admin, owner):
        assert received[user.id] == [deleted, update], user
    assert received[moderator.id] == [update]  # sees the channel, never had the messages
    assert received[guest.id] == []


@pytest.mark.django_db(transaction=True)
def test_delete_topic_in_batches_sends_one_event_per_batch(settings, queue_of, design, send, member, admin):
    settings.DELETE_TOPIC_BATCH_SIZE = 2
    gone = [send(member, design, f"m{n}", topic="gone") for n in range(5)]
    events = queue_of(member, ["delete_message"], client_capabilities=BULK)
    legacy = queue_of(member, ["delete_message"])  # a client without bulk_message_deletion
    assert assert_success(delete_topic(admin, design, "gone"))["complete"] is True
    assert [e["message_ids"] for e in events()] == [gone[3:], gone[1:3], gone[:1]]
    # One event per message for the other client (batch by batch, newest batch first); no message_ids.
    singles = legacy()
    assert [e["message_id"] for e in singles] == [*gone[3:], *gone[1:3], *gone[:1]]
    assert all("message_ids" not in e and e["topic"] == "gone" for e in singles)


@pytest.mark.django_db(transaction=True)
def test_one_deletion_per_message_takes_an_id_per_message(settings, event_backend, design, send, member, admin):
    """As Zulip's process_deletion_event: the pieces of a deletion a client without
    bulk_message_deletion receives have ids of their own, increasing, one after the other, and
    acknowledging the last piece is accepted; a waiting poll is answered with them too."""
    import asyncio

    from apps.events.longpoll import long_poll
    from apps.events.registry import adapt_events

    settings.DELETE_TOPIC_BATCH_SIZE = 2
    settings.EVENTS_HEARTBEAT_SECONDS = (10, 10)
    api = ApiClient(member)
    legacy = assert_success(api.post("/register", {"event_types": ["delete_message", "message"]}))["queue_id"]
    bulk = assert_success(
        api.post("/register", {"event_types": ["delete_message", "message"], "client_capabilities": BULK})
    )["queue_id"]

    def poll(queue_id, last):
        body = api.get("/events", {"queue_id": queue_id, "last_event_id": last, "dont_block": True})
        return assert_success(body)["events"]

    gone = [send(member, design, f"m{n}", topic="gone") for n in range(3)]
    assert_success(delete_topic(admin, design, "gone"))
    events = poll(legacy, 2)  # after the three messages
    # Newest batch first, as for the other client: [m1, m2], then [m0].
    assert [(e["id"], e["message_id"]) for e in events] == [(3, gone[1]), (4, gone[2]), (5, gone[0])]
    assert all("span" not in e for e in events)
    assert [(e["id"], e["message_ids"]) for e in poll(bulk, 2)] == [(3, gone[1:]), (4, gone[:1])]

    # A poll waiting when the deletion comes.
    kept = [send(member, design, f"k{n}", topic="kept") for n in range(2)]
    assert [e["id"] for e in poll(legacy, 5)] == [6, 7]

    async def waiting():
        task = asyncio.create_task(long_poll(event_backend, legacy, member.id, 7, dont_block=False))
        await asyncio.sleep(0.2)
        await asyncio.to_thread(delete_topic, admin, design, "kept")
        events, options = await asyncio.wait_for(task, 5)
        if not events:  # answered "read your queue": the client polls again
            events, options = await long_poll(event_backend, legacy, member.id, 7, dont_block=True)
        return adapt_events(events, options, legacy)

    events = asyncio.run(waiting())
    assert [(e["id"], e["message_id"]) for e in events] == [(8, kept[0]), (9, kept[1])]
    assert poll(legacy, 9) == []  # the last piece's id is an acknowledgement like any other


def test_delete_topic_sends_user_topic_events_for_reset_policies(capture_events, design, send, member, admin):
    send(member, design, topic="gone")
    set_policy(member, design, "gone", 1)
    with capture_events(member, event_types=["user_topic"]) as received:
        assert_success(delete_topic(admin, design, "gone"))
    [event] = received[member.id]
    assert (event["stream_id"], event["topic_name"], event["visibility_policy"]) == (design.id, "gone", 0)


def test_refused_delete_topic_sends_nothing(capture_events, design, send, member, moderator):
    send(member, design, topic="gone")
    with capture_events(member, event_types=["delete_message", "stream", "user_topic"]) as received:
        assert_error(delete_topic(moderator, design, "gone"), 400, "UNAUTHORIZED_PRINCIPAL")
    assert received[member.id] == []


# --- concurrency ---------------------------------------------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_concurrent_delete_topic_calls_neither_deadlock_nor_fail(settings, design, send, member, admin, owner):
    settings.DELETE_TOPIC_BATCH_SIZE = 50
    gone = bulk_topic(design, member, "big", 1500)
    Stream.objects.filter(id=design.id).update(first_message_id=gone[0])  # the topic holds the first message
    first = send(member, design, topic="kept")
    set_policy(member, design, "big", 1)
    set_policy(owner, design, "big", 3)

    def call(user):
        response = delete_topic(user, design, "big")
        # A call that answers complete leaves none of the topic behind, however the other fares.
        return response, len(topic_ids(design, "big"))

    outcomes = at_once(lambda: call(admin), lambda: call(owner))
    for response, left_behind in outcomes:
        if assert_success(response)["complete"]:
            assert left_behind == 0
    # Whatever each answered, repeating until complete leaves nothing of the topic.
    while not assert_success(delete_topic(admin, design, "big"))["complete"]:
        pass
    assert topic_ids(design, "big") == []
    assert not UserMessage.objects.filter(message_id__in=gone).exists()
    assert list(Message.objects.values_list("id", flat=True)) == [first]
    assert Stream.objects.get(id=design.id).first_message_id == first
    assert not UserTopic.objects.filter(topic_name="big").exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_starring_a_message_while_its_topic_is_deleted_is_refused_not_a_crash(
    make_stream, send, member, admin, moderator
):
    # The moderator never received the message (not subscribed): starring it makes a historical row.
    stream = make_stream("open", member, admin)
    message_id = send(member, stream, topic="going")
    deleting, deleted = threading.Event(), threading.Event()
    errors = []

    def delete_slowly():
        from django.db import transaction

        from apps.messages.actions.delete_topic import do_delete_messages

        try:
            with transaction.atomic():
                locked = list(Message.objects.select_for_update().filter(id=message_id).values_list("id", flat=True))
                deleting.set()
                threading.Event().wait(0.5)  # the star request arrives meanwhile and waits
                do_delete_messages(Stream.objects.get(id=stream.id), "going", locked, acting_user=admin)
        except Exception as exc:
            errors.append(exc)
        finally:
            deleted.set()
            connection.close()

    thread = threading.Thread(target=delete_slowly)
    thread.start()
    assert deleting.wait(10)
    response = ApiClient(moderator).post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "starred"})
    thread.join(10)
    assert errors == []
    assert_error(response, 400, "BAD_REQUEST", "Invalid message(s)")
    assert not UserMessage.objects.filter(message_id=message_id).exists()
