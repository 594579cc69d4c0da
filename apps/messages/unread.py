"""POST /register's `unread_msgs` (Zulip's): the user's newest MAX_UNREAD_MESSAGES unread
messages, grouped by conversation."""

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from apps.messages.models import DirectMessageGroup, Message, Recipient, UserMessage
from apps.messages.selectors import muted_conversation_checker
from apps.subscriptions.models import Subscription
from apps.subscriptions.topics import topic_for_client, topic_key
from apps.users.models import User

MAX_UNREAD_MESSAGES = 50_000

# The newest unread rows (message id, flags) of a user, taken from the partial index of unread rows
# (only as many as can be listed, unless the user left a channel: then its rows must not take the
# places).
_NEWEST_UNREAD_SQL = f"""
SELECT message_id, flags FROM {UserMessage._meta.db_table}
WHERE user_id = %(user)s AND (flags & {UserMessage.READ}) = 0
ORDER BY message_id DESC
LIMIT CASE WHEN EXISTS (
    SELECT 1 FROM {Subscription._meta.db_table} WHERE user_id = %(user)s AND NOT active
) THEN {2**62} ELSE %(limit)s END
"""  # noqa: S608 (no input in the text: table names and constants)

# (message id, flags, channel id, topic, sender id, recipient id) of the newest unread messages, but
# those of channels the user left. The newest rows are taken before they are joined to their
# messages: joined at once, PostgreSQL misjudges how many rows a user has unread, and joins and
# sorts all of them (100,000: twice the time). On PostgreSQL the messages are those between
# %(low)s and %(high)s, the rows' first and last (see _unread_conversations).
_UNREAD_SQL = f"""
SELECT um.message_id, um.flags, m.stream_id, m.topic, m.sender_id, m.recipient_id
FROM ({_NEWEST_UNREAD_SQL}) um
JOIN {Message._meta.db_table} m ON m.id = um.message_id {{bounds}}
WHERE m.stream_id IS NULL
   OR m.stream_id NOT IN (SELECT stream_id FROM {Subscription._meta.db_table} WHERE user_id = %(user)s AND NOT active)
ORDER BY um.message_id DESC
LIMIT %(limit)s
"""  # noqa: S608 (as above)

# How many newest unread rows there are, and the first and last of their messages.
_SPAN_SQL = f"SELECT count(*), min(message_id), max(message_id) FROM ({_NEWEST_UNREAD_SQL}) newest"  # noqa: S608

# A span of message ids under DENSE times the number of unread messages in it is read in order
# with theirs (a merge join: the messages between the first and the last, each read once) rather
# than looked up one by one (an index descent each, twice the time per message).
DENSE = 2

_WILDCARD_BITS = UserMessage.STREAM_WILDCARD_MENTIONED | UserMessage.TOPIC_WILDCARD_MENTIONED

# _UNREAD_SQL's rows by conversation (see _Conversation), on PostgreSQL; each list's ids in no
# particular order. Topics are told apart byte by byte (as Python does), not by the collation's rules.
_GROUPED_SQL = f"""
WITH unread AS ({_UNREAD_SQL.format(bounds="AND m.id BETWEEN %(low)s AND %(high)s")})
SELECT stream_id, topic COLLATE "C", recipient_id, CASE WHEN stream_id IS NULL THEN sender_id END,
    array_agg(message_id),
    coalesce(array_agg(message_id) FILTER (WHERE flags & {UserMessage.MENTIONED} <> 0), '{{}}'),
    coalesce(array_agg(message_id) FILTER (WHERE flags & {UserMessage.MENTIONED} = 0 AND flags & {_WILDCARD_BITS} <> 0),
        '{{}}')
FROM unread
GROUP BY 1, 2, 3, 4
"""  # noqa: S608 (as above)


def unread_messages(user: User, *, allow_empty_topic_name: bool = False) -> dict[str, Any]:
    """Zulip's `unread_msgs` (the newest MAX_UNREAD_MESSAGES unread messages). Five queries (on
    PostgreSQL, one more reads the unread messages' span, and, when there are some, up to four
    statements set and reset the grouping's plan).
    Channels the user left are left out, as in Zulip (their unread messages count no more).
    Topics are grouped case-insensitively, and the empty topic is "general chat" for clients
    without the `empty_topic_name` capability (as in their message events). As in Zulip, muted
    channels' and topics' messages are listed but not counted in `count`, and a wildcard mention
    there is not a mention."""
    conversations = _unread_conversations(user.id)
    missing = sum(len(c.ids) for c in conversations) > MAX_UNREAD_MESSAGES
    if missing:
        _drop_oldest(conversations)
    recipients = {
        r.id: r for r in Recipient.objects.filter(id__in={c.recipient_id for c in conversations if c.stream_id is None})
    }
    groups = dict(
        DirectMessageGroup.objects.filter(
            id__in=[r.type_id for r in recipients.values() if r.type == Recipient.Type.DIRECT_MESSAGE_GROUP]
        ).values_list("id", "user_ids")
    )
    streams: dict[tuple[int, str], dict[str, Any]] = {}
    pms: dict[int, list[int]] = defaultdict(list)
    huddles: dict[str, list[int]] = defaultdict(list)
    mentions: list[int] = []
    muted_count = 0
    is_muted = muted_conversation_checker(user)
    # Oldest first: a topic's bucket is named as its oldest message spells it.
    for c in sorted(conversations, key=lambda c: c.ids[0]):
        mentions += c.mentioned
        if c.stream_id is not None:
            shown = topic_for_client(c.topic, allow_empty_topic_name=allow_empty_topic_name)
            bucket = streams.setdefault(
                (c.stream_id, topic_key(shown)), {"stream_id": c.stream_id, "topic": shown, "unread_message_ids": []}
            )
            bucket["unread_message_ids"] += c.ids
            if is_muted(c.stream_id, c.topic):
                muted_count += len(c.ids)
                continue
        else:
            recipient = recipients[c.recipient_id]
            if recipient.type == Recipient.Type.PERSONAL:
                other = c.sender_id if c.sender_id != user.id else recipient.type_id
                pms[other] += c.ids
            else:
                huddles[",".join(map(str, groups[recipient.type_id]))] += c.ids
        mentions += c.wildcard_mentioned
    # A conversation's ids come in order; a bucket gathers several (a topic's spellings, both
    # senders of a one-to-one conversation).
    for ids in [*(bucket["unread_message_ids"] for bucket in streams.values()), *pms.values(), *huddles.values()]:
        ids.sort()
    return {
        "pms": [
            {"other_user_id": other, "sender_id": other, "unread_message_ids": ids}
            for other, ids in sorted(pms.items())
        ],
        "streams": [streams[key] for key in sorted(streams)],
        "huddles": [{"user_ids_string": key, "unread_message_ids": ids} for key, ids in sorted(huddles.items())],
        "mentions": sorted(mentions),
        "count": sum(len(c.ids) for c in conversations) - muted_count,
        "old_unreads_missing": missing,
    }


@dataclass
class _Conversation:
    """A conversation's listed unread messages, ids in order: a channel's topic (as stored), or the
    direct messages of one recipient from one sender."""

    stream_id: int | None
    topic: str
    recipient_id: int
    sender_id: int | None  # direct messages only
    ids: list[int]
    mentioned: list[int]  # the user's name or a group of theirs
    wildcard_mentioned: list[int]  # a wildcard and no more


def _unread_conversations(user_id: int) -> list[_Conversation]:
    """The newest MAX_UNREAD_MESSAGES + 1 unread messages, by conversation: PostgreSQL groups them
    itself (at 50,000, fetching a row per message and grouping them in Python took longer than the
    query); elsewhere the rows are grouped here."""
    params = {"user": user_id, "limit": MAX_UNREAD_MESSAGES + 1}
    if connection.vendor == "postgresql":
        # Grouped in a hash table: PostgreSQL expects about a hundred rows (it cannot know how many
        # a user has unread), so it would sort all 50,000 of them by conversation instead, which
        # took longer than the rest of the query (at 10,000 people: 81-86 ms in all, 65 ms hashed,
        # benchmarks/scale/README.md). Sorting each conversation's ids here takes a millisecond.
        # Unread messages close together (the newest 50,000 of a busy channel) are merged with the
        # messages between the first and the last: at 10,000 people 8 ms for their span and 32 for
        # the query, 60 looked up one by one. Scattered ones (a few, months apart) are looked up.
        with transaction.atomic(savepoint=False), connection.cursor() as cursor:
            cursor.execute(_SPAN_SQL, params)
            count, low, high = cursor.fetchone()
            if not count:
                return []
            plan = ["enable_sort = off", *(["enable_nestloop = off"] if high - low < DENSE * count else [])]
            for setting in plan:
                cursor.execute(f"SET LOCAL {setting}")
            cursor.execute(_GROUPED_SQL, {**params, "low": low, "high": high})
            rows = cursor.fetchall()
            for setting in plan:
                cursor.execute(f"RESET {setting.split()[0]}")
        return [
            _Conversation(*key, sorted(ids), sorted(mentioned), sorted(wildcard))
            for *key, ids, mentioned, wildcard in rows
        ]
    with connection.cursor() as cursor:
        cursor.execute(_UNREAD_SQL.format(bounds=""), params)
        rows = cursor.fetchall()
    conversations: dict[tuple, _Conversation] = {}
    for message_id, flags, stream_id, topic, sender_id, recipient_id in reversed(rows):
        key = (stream_id, topic, recipient_id, sender_id if stream_id is None else None)
        c = conversations.get(key) or conversations.setdefault(key, _Conversation(*key, [], [], []))
        c.ids.append(message_id)
        if flags & UserMessage.MENTIONED:
            c.mentioned.append(message_id)
        elif flags & _WILDCARD_BITS:
            c.wildcard_mentioned.append(message_id)
    return list(conversations.values())


def _drop_oldest(conversations: list[_Conversation]) -> None:
    """Leave out the oldest message (one more than can be listed was read, to know there are more)."""
    oldest = min(conversations, key=lambda c: c.ids[0])
    message_id = oldest.ids.pop(0)
    for ids in (oldest.mentioned, oldest.wildcard_mentioned):
        if ids and ids[0] == message_id:
            ids.pop(0)
    if not oldest.ids:
        conversations.remove(oldest)
