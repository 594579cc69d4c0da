"""Query counts of the hot paths (pinned): sending to a big channel, reading a page of messages."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.events.models import OutboxEvent
from apps.messages.actions.send import do_send_message
from apps.messages.models import UserMessage
from apps.subscriptions.actions.channels import NewChannel, create_streams
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions
from apps.users.models import User
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory


def send_counting_queries(sender, stream, content: str) -> tuple[int, int]:
    """(queries other than the row inserts, the row inserts) of sending one message."""
    with CaptureQueriesContext(connection) as queries:
        do_send_message(sender, stream=stream, topic="hello", content=content, client="ZulipMobile", acting_user=sender)
    inserts = [q for q in queries if q["sql"].startswith('INSERT INTO "chat_messages_usermessage"')]
    return len(queries) - len(inserts), len(inserts)


def test_sending_to_a_thousand_subscribers_is_a_bulk_operation(realm, member):
    [stream] = create_streams(realm, [NewChannel("everyone")], acting_user=None)
    bulk_add_subscriptions(realm, [stream], [member, *(UserFactory(realm=realm) for _ in range(9))], acting_user=None)
    do_send_message(
        member, stream=stream, topic="hello", content="first", acting_user=member
    )  # the channel's first message
    small, _ = send_counting_queries(member, stream, "to ten")

    User.objects.bulk_create(
        User(realm=realm, delivery_email=f"bulk{n}@example.com", full_name=f"Bulk {n}", api_key=f"{n:032d}")
        for n in range(991)
    )
    bulk_add_subscriptions(
        realm, [stream], list(User.objects.filter(delivery_email__startswith="bulk")), acting_user=None
    )
    outbox_before = OutboxEvent.objects.count()
    large, inserts = send_counting_queries(member, stream, "to a thousand")
    assert UserMessage.objects.filter(message__content="to a thousand").count() == 1001
    assert large == small <= 13  # (13th: whether a follower of the topic is to be emailed)
    # The rows go in batches (SQLite limits a statement's parameters; PostgreSQL takes one).
    assert inserts <= 5
    # One event per set of flags (the sender's copy is read), not one per recipient.
    assert OutboxEvent.objects.count() - outbox_before == 2


def make_history(realm, member, other, count: int) -> None:
    [stream] = create_streams(realm, [NewChannel(f"c{count}")], acting_user=None)
    bulk_add_subscriptions(realm, [stream], [member, other], acting_user=None)
    for n in range(count):
        if n % 2:
            content = f"message {n} @**{member.full_name}**"
            do_send_message(other, stream=stream, topic=f"t{n % 3}", content=content, acting_user=other)
        else:
            do_send_message(other, dm_with=[member], content=f"direct {n}", acting_user=other)


def test_reading_messages_takes_a_fixed_number_of_queries(realm, member):
    other = UserFactory(realm=realm, full_name="Other Person")
    api = ApiClient(member)
    params = {"anchor": "newest", "num_before": 100, "num_after": 0}
    make_history(realm, member, other, 10)
    assert_success(api.get("/messages", params))  # caches warm
    with CaptureQueriesContext(connection) as small:
        assert len(assert_success(api.get("/messages", params))["messages"]) == 10
    make_history(realm, member, other, 90)
    with CaptureQueriesContext(connection) as large:
        assert len(assert_success(api.get("/messages", params))["messages"]) == 100
    assert len(large) == len(small)


def test_a_direct_message_to_many_people_takes_no_query_per_person(realm, member):
    people = [UserFactory(realm=realm) for _ in range(20)]
    api = ApiClient(member)

    def queries_of_sending(to: list[int]) -> int:
        assert_success(api.post("/messages", {"type": "private", "to": to, "content": "first"}))  # the group exists
        with CaptureQueriesContext(connection) as queries:
            assert_success(api.post("/messages", {"type": "private", "to": to, "content": "hello"}))
        return len(queries)

    few = queries_of_sending([p.id for p in people[:3]])
    assert queries_of_sending([p.id for p in people]) == few
    # Naming the same people again and again costs nothing more either.
    assert queries_of_sending([p.id for p in people] * 100) == few


def test_a_narrow_naming_many_people_takes_no_query_per_person(realm, member):
    people = [UserFactory(realm=realm) for _ in range(20)]
    api = ApiClient(member)

    def queries_of_reading(operand: list[int]) -> int:
        params = {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [["dm", operand]]}
        with CaptureQueriesContext(connection) as queries:
            assert_success(api.get("/messages", params))
        return len(queries)

    queries_of_reading([people[0].id])  # caches warm
    few = queries_of_reading([p.id for p in people[:3]])
    assert queries_of_reading([p.id for p in people]) == few
    assert queries_of_reading([p.id for p in people] * 100) == few
