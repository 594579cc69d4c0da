"""A channel's topics as one user may see them (GET /users/me/{stream_id}/topics): each topic once
(whatever the case of its messages), named as its latest message names it, with that message's id,
latest first. Where the channel's history is public to subscribers, every message counts; otherwise
only those the user received."""

from django.db.models import Max
from django.db.models.functions import Upper

from apps.messages.models import Message, UserMessage
from apps.subscriptions.models import Stream
from apps.subscriptions.topics import topic_for_client
from apps.users.models import User


def topic_history(user: User, stream: Stream, *, allow_empty_topic_name: bool) -> list[dict]:
    """Two queries, along the channel's topic index (stream, UPPER(topic), id)."""
    messages = Message.objects.filter(stream=stream)
    if not stream.history_public_to_subscribers:
        messages = messages.filter(id__in=UserMessage.objects.filter(user=user).values("message_id"))
    latest = messages.values(key=Upper("topic")).annotate(max_id=Max("id")).values_list("max_id", flat=True)
    names = dict(Message.objects.filter(id__in=list(latest)).values_list("id", "topic"))
    return [
        {"name": topic_for_client(names[max_id], allow_empty_topic_name=allow_empty_topic_name), "max_id": max_id}
        for max_id in sorted(names, reverse=True)
    ]
