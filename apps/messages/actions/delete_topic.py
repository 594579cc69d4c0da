"""Deleting a topic: its messages newest first, in batches that are each their own transaction,
within a time budget; then users' policies for it."""

import time

from django.conf import settings
from django.db import transaction
from django.db.models import Min

from apps.events.publish import send_event_on_commit
from apps.messages.access import users_told_of
from apps.messages.hooks import messages_deleting
from apps.messages.models import Message, UserMessage
from apps.messages.newest import newest_changed_on_commit
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType
from apps.subscriptions.actions.access import send_stream_update
from apps.subscriptions.actions.user_topics import do_set_user_topic_visibility_policy
from apps.subscriptions.models import Stream, UserTopic
from apps.subscriptions.topics import same_topic, topic_from_client
from apps.users.models import User


def check_delete_topic(stream: Stream, topic_name: str, *, acting_user: User) -> bool:
    """POST /streams/{stream_id}/delete_topic, by an administrator (the view's permission class)
    who may read the channel (the view's access selector). Deletes the topic's messages newest
    first, in batches of DELETE_TOPIC_BATCH_SIZE, each its own transaction, until done or
    DELETE_TOPIC_TIME_BUDGET_SECONDS pass; returns whether it finished (the client repeats if not).
    Once the topic is empty, users' policies for it are removed.

    Where history is not public to subscribers, only the messages the administrator received are
    theirs to delete (as in Zulip): the others they may not even see.
    """
    topic = topic_from_client(topic_name)
    only_received_by = None if stream.history_public_to_subscribers else acting_user
    deadline = time.monotonic() + settings.DELETE_TOPIC_TIME_BUDGET_SECONDS
    batch = settings.DELETE_TOPIC_BATCH_SIZE
    while _delete_topic_batch(stream, topic, batch, only_received_by=only_received_by, acting_user=acting_user):
        if time.monotonic() >= deadline:
            return False
    _reset_topic_policies(stream, topic, acting_user=acting_user)
    return True


@transaction.atomic
def _delete_topic_batch(
    stream: Stream, topic: str, size: int, *, only_received_by: User | None, acting_user: User | None
) -> int:
    """Delete the newest `size` messages of the topic (of those `only_received_by` received, if
    given); returns how many. Rows are locked newest first, so concurrent calls wait for each other
    and never deadlock.

    Audit: STREAM_TOPIC_DELETED {topic_name, message_count} for each batch that deleted any.
    """
    # The channel first, as moves and single deletions lock it (lock_message).
    Stream.objects.select_for_update(no_key=True).filter(id=stream.id).values_list("id", flat=True).get()
    messages = Message.objects.filter(same_topic("topic", topic), stream=stream)
    if only_received_by is not None:
        messages = messages.filter(id__in=UserMessage.objects.filter(user=only_received_by).values("message_id"))
    ids = list(messages.select_for_update().order_by("-id").values_list("id", flat=True)[:size])
    if ids:
        do_delete_messages(stream, topic, ids, acting_user=acting_user)
        audit(
            stream.realm_id,
            AuditLogEventType.STREAM_TOPIC_DELETED,
            modified_stream=stream,
            extra_data={"topic_name": topic, "message_count": len(ids)},
            acting_user=acting_user,
        )
    return len(ids)


@transaction.atomic
def _reset_topic_policies(stream: Stream, topic: str, *, acting_user: User | None) -> None:
    """Users' policies for the topic back to none. In id order: concurrent calls lock them in the
    same order."""
    policies = UserTopic.objects.filter(same_topic("topic_name", topic), stream=stream).select_related("user")
    for policy in list(policies.order_by("id")):
        do_set_user_topic_visibility_policy(
            policy.user,
            stream,
            policy.topic_name,
            visibility_policy=UserTopic.VisibilityPolicy.INHERIT,
            acting_user=acting_user,
        )


@transaction.atomic(savepoint=False)
def do_delete_messages(stream: Stream, topic: str, message_ids: list[int], *, acting_user: User | None) -> None:
    """Delete messages of a channel's topic.

    Emits: delete_message {message_ids, message_type, stream_id, topic} to those who had them or
    can read the channel's history, and to the acting user (as in Zulip: their client shows the
    deletion it asked for); stream/update first_message_id when the channel's first message changed.
    """
    recipients = users_told_of(stream, message_ids)
    if acting_user is not None:
        recipients.add(acting_user.id)
    messages_deleting.call(message_ids)
    newest_changed_on_commit(stream.realm_id)
    UserMessage.objects.filter(message_id__in=message_ids).delete()
    Message.objects.filter(id__in=message_ids).delete()
    event = {"type": "delete_message", "message_type": "stream", "stream_id": stream.id, "topic": topic,
             "message_ids": sorted(message_ids)}  # fmt: skip
    if recipients:
        send_event_on_commit(stream.realm_id, event, recipients)
    # Read afresh (and locked): a concurrent deletion may have moved it since the channel was read.
    stream.first_message_id = (
        Stream.objects.select_for_update(no_key=True)
        .filter(id=stream.id)
        .values_list("first_message_id", flat=True)
        .get()
    )
    if stream.first_message_id in message_ids:
        first = Message.objects.filter(stream=stream).aggregate(first=Min("id"))["first"]
        Stream.objects.filter(id=stream.id).update(first_message_id=first)
        stream.first_message_id = first
        send_stream_update(stream, "first_message_id", first)
