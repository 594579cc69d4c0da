"""Wildcard mentions (`@**all**`, `@**channel**`, `@**topic**`, ...): whom a topic wildcard reaches,
and who may use one that reaches many people, as Zulip's stream_wildcard_mention_allowed and
topic_wildcard_mention_allowed decide (checked when a message is sent, edited or scheduled)."""

from apps.core.errors import ErrorCode, JsonableError
from apps.groups.selectors import has_realm_permission
from apps.messages.rendering import Rendered
from apps.messages.selectors import topic_participant_ids
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import subscriber_ids_by_stream
from apps.users.models import User

# Wildcard mentions reach at most this many people without can_mention_many_users_group
# (Zulip's Realm.WILDCARD_MENTION_THRESHOLD).
WILDCARD_MENTION_THRESHOLD = 15


def wildcard_topic_participants(sender: User, stream: Stream | None, topic: str, rendered: Rendered) -> set[int]:
    """Who a topic wildcard mention in the rendered content mentions: the topic's participants, the
    sender too (this message makes them one); nobody without one (no query then)."""
    if not rendered.topic_wildcard or stream is None:
        return set()
    return topic_participant_ids(stream.id, topic) | {sender.id}


def check_wildcard_mentions(sender: User, rendered: Rendered, subscriber_count: int, topic_participants: set[int]):
    """Channel and topic wildcard mentions reaching more than WILDCARD_MENTION_THRESHOLD people need
    the organization's can_mention_many_users_group (Zulip's stream_wildcard_mention_allowed and
    topic_wildcard_mention_allowed; the permission is looked up only then)."""
    too_many_channel = rendered.stream_wildcard and subscriber_count > WILDCARD_MENTION_THRESHOLD
    too_many_topic = rendered.topic_wildcard and len(topic_participants) > WILDCARD_MENTION_THRESHOLD
    if not (too_many_channel or too_many_topic) or has_realm_permission(sender, "can_mention_many_users_group"):
        return
    if too_many_channel:
        raise JsonableError(
            "You do not have permission to use channel wildcard mentions in this channel.",
            code=ErrorCode.STREAM_WILDCARD_MENTION_NOT_ALLOWED,
        )
    raise JsonableError(
        "You do not have permission to use topic wildcard mentions in this topic.",
        code=ErrorCode.TOPIC_WILDCARD_MENTION_NOT_ALLOWED,
    )


def check_wildcard_mentions_allowed(sender: User, stream: Stream | None, topic: str, rendered: Rendered) -> None:
    """check_wildcard_mentions for a message not sent yet (a scheduled one), counting its channel's
    subscribers and its topic's participants only when it has a wildcard mention."""
    if stream is None or not (rendered.stream_wildcard or rendered.topic_wildcard):
        return
    subscriber_count = len(subscriber_ids_by_stream([stream.id])[stream.id])
    check_wildcard_mentions(
        sender, rendered, subscriber_count, wildcard_topic_participants(sender, stream, topic, rendered)
    )
