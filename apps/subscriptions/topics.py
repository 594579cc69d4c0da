"""Zulip's rules for topic names, in one place: what a client sends, what is stored, what is shown,
how two names compare. Used by channels' topic policies (user topics) and by messages.

- Stored: stripped; the empty topic ("general chat" in clients) is stored as "".
- Shown: "" is shown as EMPTY_TOPIC_DISPLAY_NAME to clients without the `empty_topic_name`
  capability (Zulip's `allow_empty_topic_name`).
- Compared: without case (Zulip's topics are case-insensitive); in queries as the database
  compares them (same_topic), which is what the unique constraints on topic names use.
- Resolved: a topic whose name begins with RESOLVED_TOPIC_PREFIX.
"""

from django.db.models import Q

from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME

# A resolved topic's name begins with this (Zulip's RESOLVED_TOPIC_PREFIX).
RESOLVED_TOPIC_PREFIX = "✔ "


def topic_from_client(name: str | None) -> str:
    """The stored form of a topic name a client sent: stripped, "general chat" as the empty topic."""
    name = (name or "").strip()
    return "" if name == EMPTY_TOPIC_DISPLAY_NAME else name


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
