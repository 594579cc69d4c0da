"""Shared fixtures of the messages tests: channels made by the actions, messages sent over the API,
event queues registered over POST /register, and a snapshot of every row the endpoints write."""

import pytest

from apps.events.models import OutboxEvent
from apps.messages.models import AlertWord, DirectMessageGroup, Message, MutedUser, Recipient, UserMessage
from apps.realms.models import RealmAuditLog
from apps.subscriptions.models import Stream, Subscription, UserTopic
from tests.api import api_for, assert_success

api = api_for  # an API client of a user, on their organization's host


# A person typing in a UI client (their own messages are read for them); the API's other clients
# leave the sender's copy unread (see test_api.py's read_by_sender tests).
UI_CLIENT = {"HTTP_USER_AGENT": "ZulipMobile/27.192 (Android 14)"}


def post_message(user, **params):
    return api(user).post("/messages", params, **UI_CLIENT)


@pytest.fixture
def send():
    """`send(user, to, content="hello", topic="lunch")`: POST /messages, the new message's id. `to` is
    a channel (its name is sent) or a list of users (a direct message to their ids)."""

    def do_send(user, to, content="hello", topic="lunch"):
        if isinstance(to, Stream):
            params = {"type": "stream", "to": to.name, "topic": topic, "content": content}
        else:
            params = {"type": "private", "to": [u.id for u in to], "content": content}
        return assert_success(post_message(user, **params))["id"]

    return do_send


def get_messages(user, narrow=(), anchor="newest", num_before=100, num_after=0, **params):
    """GET /messages (the whole body)."""
    query = {"anchor": anchor, "num_before": num_before, "num_after": num_after, "narrow": list(narrow), **params}
    return assert_success(api(user).get("/messages", query))


def message_ids(user, narrow=(), **params) -> list[int]:
    return [m["id"] for m in get_messages(user, narrow, **params)["messages"]]


def flags_of(user, message_id: int) -> int | None:
    """The user's flags of the message, without the internal IS_PRIVATE bit (every direct message's;
    test_recipient_rows.py tests it)."""
    flags = UserMessage.objects.filter(user=user, message_id=message_id).values_list("flags", flat=True).first()
    return None if flags is None else flags & ~UserMessage.IS_PRIVATE


def db_state() -> dict:
    """Every row the message endpoints write (the audit log's too): equal before and after a
    refused request."""
    return {
        "messages": list(Message.objects.order_by("id").values()),
        "user_messages": list(UserMessage.objects.order_by("id").values()),
        "recipients": list(Recipient.objects.order_by("id").values()),
        "groups": list(DirectMessageGroup.objects.order_by("id").values()),
        "muted_users": list(MutedUser.objects.order_by("id").values()),
        "alert_words": list(AlertWord.objects.order_by("id").values()),
        "user_topics": list(UserTopic.objects.order_by("id").values()),
        "streams": list(Stream.objects.order_by("id").values()),
        "subscriptions": list(Subscription.objects.order_by("id").values()),
        "outbox": OutboxEvent.objects.count(),
        "audit_log": list(RealmAuditLog.objects.order_by("id").values()),
    }
