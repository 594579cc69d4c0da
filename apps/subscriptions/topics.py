"""Zulip's rules for topic names, in one place: what a client sends, what is stored, what is shown,
how two names compare. Used by channels' topic policies (user topics) and by messages.

- Stored: stripped; the empty topic ("general chat" in clients) is stored as "".
- Shown: "" is shown as EMPTY_TOPIC_DISPLAY_NAME to clients without the `empty_topic_name`
  capability (Zulip's `allow_empty_topic_name`).
- Compared: without case (Zulip's topics are case-insensitive); in queries as the database
  compares them (same_topic), which is what the unique constraints on topic names use.
- Resolved: a topic whose name begins with RESOLVED_TOPIC_PREFIX.
- Sent to: cut to MAX_TOPIC_LENGTH; a channel's `topics_policy` (or its organization's) may refuse or
  require the empty topic.
"""

from django.db.models import Q

from apps.core.errors import JsonableError
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME, MAX_TOPIC_LENGTH
from apps.realms.models import Realm
from apps.subscriptions.models import Stream

# What older clients send for the empty topic (Zulip's maybe_rename_no_topic_to_empty_topic).
NO_TOPIC_NAME = "(no topic)"
# A resolved topic's name begins with this (Zulip's RESOLVED_TOPIC_PREFIX).
RESOLVED_TOPIC_PREFIX = "✔ "


def topic_from_client(name: str | None) -> str:
    """The stored form of a topic name a client sent: stripped, "general chat" as the empty topic."""
    name = (name or "").strip()
    return "" if name == EMPTY_TOPIC_DISPLAY_NAME else name


def topic_to_send_to(name: str | None) -> str:
    """The stored form of the topic a message is sent (scheduled, typed) to: as topic_from_client,
    and "(no topic)" is the empty topic too, as Zulip's Addressee takes it since feature level 370
    (an edit or a narrow takes "(no topic)" as the name it is)."""
    name = topic_from_client(name)
    return "" if name == NO_TOPIC_NAME else name


def topic_for_client(name: str, *, allow_empty_topic_name: bool) -> str:
    """A stored topic name as a client is shown it (the empty topic's name for older clients)."""
    return EMPTY_TOPIC_DISPLAY_NAME if name == "" and not allow_empty_topic_name else name


def topic_key(name: str) -> str:
    """What two topic names of a channel are compared by: they are the same topic when equal."""
    return name.lower()


def same_topic(field: str, name: str) -> Q:
    """The rows whose topic (`field`) is the topic `name`: topic_key's rule as the database applies
    it, UPPER on both sides, as the unique constraints on topic names compare them."""
    return Q(**{f"{field}__iexact": name})


def is_resolved(name: str) -> bool:
    return name.startswith(RESOLVED_TOPIC_PREFIX)


def topic_from_narrow(operand: str) -> str:
    """The stored form of a narrow's topic operand: "general chat" is the empty topic. Taken as
    sent, not stripped (Zulip's maybe_rename_general_chat_to_empty_topic)."""
    return "" if operand == EMPTY_TOPIC_DISPLAY_NAME else operand


def truncate_topic(name: str) -> str:
    """A topic name longer than MAX_TOPIC_LENGTH cut to it, ending in "..." (Zulip's truncate_topic:
    a message is not refused for its topic's length)."""
    return name if len(name) <= MAX_TOPIC_LENGTH else name[: MAX_TOPIC_LENGTH - 3] + "..."


def topics_policy_of(stream: Stream, realm: Realm) -> str:
    """The channel's topics policy, its organization's where it inherits it (Zulip's
    get_stream_topics_policy)."""
    if stream.topics_policy == Stream.TopicsPolicy.INHERIT:
        return realm.topics_policy
    return stream.topics_policy


def check_topics_policy(name: str, stream: Stream, realm: Realm) -> None:
    """Whether the channel (of `realm`) takes messages to the (stored) topic `name`: the empty topic
    may be refused (DISABLE_EMPTY_TOPIC, the channel's or its organization's) or be the only one
    (EMPTY_TOPIC_ONLY)."""
    topics_policy = topics_policy_of(stream, realm)
    if name == "" and topics_policy == Stream.TopicsPolicy.DISABLE_EMPTY_TOPIC:
        raise JsonableError(
            f'Sending messages to the "{EMPTY_TOPIC_DISPLAY_NAME}" topic is not allowed in this channel.'
        )
    if name and topics_policy == Stream.TopicsPolicy.EMPTY_TOPIC_ONLY:
        raise JsonableError(f'Only the "{EMPTY_TOPIC_DISPLAY_NAME}" topic is allowed in this channel.')
