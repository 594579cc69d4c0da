"""POST /register's `unread_msgs` (Zulip's): the user's newest MAX_UNREAD_MESSAGES unread
messages, grouped by conversation."""

from collections import defaultdict
from typing import Any

from django.db import connection

from apps.messages.models import DirectMessageGroup, Message, Recipient, UserMessage
from apps.messages.selectors import muted_conversation_checker
from apps.subscriptions.models import Subscription
from apps.subscriptions.topics import topic_for_client, topic_key
from apps.users.models import User

MAX_UNREAD_MESSAGES = 50_000

# (message id, flags, channel id, topic, sender id, recipient id) of the newest unread messages, but
# those of channels the user left. The newest rows are taken from the partial index of unread rows
# before they are joined to their messages (only as many as can be listed, unless the user left a
# channel: then its rows must not take the places): joined at once, PostgreSQL misjudges how many
# rows a user has unread, and joins and sorts all of them (100,000: twice the time).
_UNREAD_SQL = f"""
SELECT um.message_id, um.flags, m.stream_id, m.topic, m.sender_id, m.recipient_id
FROM (
    SELECT message_id, flags FROM {UserMessage._meta.db_table}
    WHERE user_id = %(user)s AND (flags & {UserMessage.READ}) = 0
    ORDER BY message_id DESC
    LIMIT CASE WHEN EXISTS (
        SELECT 1 FROM {Subscription._meta.db_table} WHERE user_id = %(user)s AND NOT active
    ) THEN {2**62} ELSE %(limit)s END
) um
JOIN {Message._meta.db_table} m ON m.id = um.message_id
WHERE m.stream_id IS NULL
   OR m.stream_id NOT IN (SELECT stream_id FROM {Subscription._meta.db_table} WHERE user_id = %(user)s AND NOT active)
ORDER BY um.message_id DESC
LIMIT %(limit)s
"""  # noqa: S608 (no input in the text: table names and constants)


def unread_messages(user: User, *, allow_empty_topic_name: bool = False) -> dict[str, Any]:
    """Zulip's `unread_msgs` (the newest MAX_UNREAD_MESSAGES unread messages). Five queries.
    Channels the user left are left out, as in Zulip (their unread messages count no more).
    Topics are grouped case-insensitively, and the empty topic is "general chat" for clients
    without the `empty_topic_name` capability (as in their message events). As in Zulip, muted
    channels' and topics' messages are listed but not counted in `count`, and a wildcard mention
    there is not a mention."""
    with connection.cursor() as cursor:
        cursor.execute(_UNREAD_SQL, {"user": user.id, "limit": MAX_UNREAD_MESSAGES + 1})
        rows = cursor.fetchall()
    missing = len(rows) > MAX_UNREAD_MESSAGES
    rows = sorted(rows[:MAX_UNREAD_MESSAGES])
    recipients = {r.id: r for r in Recipient.objects.filter(id__in={row[5] for row in rows if row[2] is None})}
    groups = dict(
        DirectMessageGroup.objects.filter(
            id__in=[r.type_id for r in recipients.values() if r.type == Recipient.Type.DIRECT_MESSAGE_GROUP]
        ).values_list("id", "user_ids")
    )
    streams: dict[tuple[int, str], dict[str, Any]] = {}
    pms: dict[int, list[int]] = defaultdict(list)
    huddles: dict[str, list[int]] = defaultdict(list)
    mentions = []
    muted_count = 0
    is_muted = muted_conversation_checker(user)
    # (channel, topic as stored) -> (its bucket's ids, muted): a topic's first row works them out.
    topics: dict[tuple[int, str], tuple[list[int], bool]] = {}

    def topic_of(stream_id: int, topic: str) -> tuple[list[int], bool]:
        shown = topic_for_client(topic, allow_empty_topic_name=allow_empty_topic_name)
        bucket = streams.setdefault(
            (stream_id, topic_key(shown)), {"stream_id": stream_id, "topic": shown, "unread_message_ids": []}
        )
        return bucket["unread_message_ids"], is_muted(stream_id, topic)

    wildcard_bits = UserMessage.STREAM_WILDCARD_MENTIONED | UserMessage.TOPIC_WILDCARD_MENTIONED
    for message_id, flags, stream_id, topic, sender_id, recipient_id in rows:
        if stream_id is not None:
            if (stream_id, topic) not in topics:
                topics[stream_id, topic] = topic_of(stream_id, topic)
            ids, muted = topics[stream_id, topic]
            ids.append(message_id)
            muted_count += muted
        else:
            muted = False
            recipient = recipients[recipient_id]
            if recipient.type == Recipient.Type.PERSONAL:
                other = sender_id if sender_id != user.id else recipient.type_id
                pms[other].append(message_id)
            else:
                huddles[",".join(map(str, groups[recipient.type_id]))].append(message_id)
        if flags & UserMessage.MENTIONED or (flags & wildcard_bits and not muted):
            mentions.append(message_id)
    return {
        "pms": [
            {"other_user_id": other, "sender_id": other, "unread_message_ids": ids}
            for other, ids in sorted(pms.items())
        ],
        "streams": [streams[key] for key in sorted(streams)],
        "huddles": [{"user_ids_string": key, "unread_message_ids": ids} for key, ids in sorted(huddles.items())],
        "mentions": mentions,
        "count": len(rows) - muted_count,
        "old_unreads_missing": missing,
    }
