"""Reads of messages: who may see which, the messages of a narrow around an anchor, and their
wire shapes in a fixed number of queries.

A user sees the messages they received (a UserMessage row) and, in a channel whose history is
public to its subscribers and whose content they may read, every message of that channel (shown
with the flags `read` and `historical` when they have no row). Another organization's messages,
and messages of channels the user may not read, do not exist for them.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from apps.core.errors import JsonableError
from apps.messages.models import DirectMessageGroup, Message, MutedUser, Recipient, UserMessage
from apps.messages.narrow import NarrowBuilder, Term, history_channel, needs_user_messages, with_flag_columns
from apps.messages.serializers import flag_names, message_to_dict
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.selectors import Membership, has_content_access
from apps.users.models import User

HISTORICAL_FLAGS = UserMessage.READ | UserMessage.HISTORICAL


def readable_history_stream_ids(user: User, stream_ids: Iterable[int]) -> set[int]:
    """Of these channels, those whose whole history the user may read."""
    streams = list(
        Stream.objects.filter(realm_id=user.realm_id, id__in=set(stream_ids), history_public_to_subscribers=True)
    )
    subscribed = set(
        Subscription.objects.filter(user=user, active=True, stream__in=streams).values_list("stream_id", flat=True)
    )
    membership = Membership(user)
    return {s.id for s in streams if has_content_access(membership, s, is_subscribed=s.id in subscribed)}


def visible_message_flags(user: User, message_ids: Sequence[int]) -> dict[int, int]:
    """{message id: the user's flags} for the messages of `message_ids` the user may see (their own
    rows, else historical access); ids they may not see are left out. Three queries at most."""
    ids = set(message_ids)
    flags = dict(UserMessage.objects.filter(user=user, message_id__in=ids).values_list("message_id", "flags"))
    rest = ids - set(flags)
    if rest:
        rows = list(
            Message.objects.filter(id__in=rest, realm_id=user.realm_id, stream__isnull=False).values_list(
                "id", "stream_id"
            )
        )
        readable = readable_history_stream_ids(user, {stream_id for _, stream_id in rows})
        flags.update({mid: HISTORICAL_FLAGS for mid, stream_id in rows if stream_id in readable})
    return flags


def access_message(user: User, message_id: int) -> tuple[Message, int]:
    """The message and the user's flags for it; "Invalid message(s)" when they may not see it."""
    flags = visible_message_flags(user, [message_id])
    if message_id not in flags:
        raise JsonableError("Invalid message(s)")
    return Message.objects.select_related("sender", "stream", "realm").get(id=message_id), flags[message_id]


# --- narrows around an anchor -------------------------------------------------------------------


@dataclass
class NarrowQuery:
    """The ids of the messages of a narrow the user may see: `ids` is a queryset of message ids,
    with the rows it comes from (UserMessage or Message)."""

    ids: QuerySet
    on_user_messages: bool


def narrow_query(user: User, terms: list[Term]) -> NarrowQuery:
    stream = None if needs_user_messages(terms) else history_channel(user, terms)
    if stream is not None:
        builder = NarrowBuilder(user, on_user_messages=False)
        query = Message.objects.filter(realm_id=user.realm_id, stream_id=stream.id)
        return NarrowQuery(builder.apply(query, terms).values_list("id", flat=True), on_user_messages=False)
    builder = NarrowBuilder(user, on_user_messages=True)
    query = with_flag_columns(UserMessage.objects.filter(user=user))
    ids = builder.apply(query, terms).values_list("message_id", flat=True)
    return NarrowQuery(ids, on_user_messages=True)


def _id_column(query: NarrowQuery) -> str:
    return "message_id" if query.on_user_messages else "id"


def first_unread_id(user: User, terms: list[Term]) -> int | None:
    """The oldest unread message of the narrow; outside a channel narrow, not one of a muted channel
    or topic (Zulip's first_unread anchor: what the user muted does not hold them back)."""
    unread = [*terms, Term("is", "unread")]
    if not any(t.operator in ("channel", "topic", "dm", "is", "in") for t in terms):
        unread.append(Term("is", "muted", negated=True))
    query = narrow_query(user, unread)
    column = _id_column(query)
    return query.ids.order_by(column).first()


def ids_around(query: NarrowQuery, anchor: int, num_before: int, num_after: int, *, include_anchor: bool):
    """(ids before the anchor, newest last; ids from it on), each one more than asked to tell
    whether the narrow ends there. Two queries."""
    column = _id_column(query)
    before = list(query.ids.filter(**{f"{column}__lt": anchor}).order_by(f"-{column}")[: num_before + 1])
    after_filter = {f"{column}__gte" if include_anchor else f"{column}__gt": anchor}
    after = (
        list(query.ids.filter(**after_filter).order_by(column)[: num_after + 1]) if num_after or include_anchor else []
    )
    return before, after


def messages_as_dicts(
    user: User,
    message_ids: Sequence[int],
    *,
    apply_markdown: bool,
    client_gravatar: bool,
    allow_empty_topic_name: bool,
) -> list[dict[str, Any]]:
    """The Message objects of these (visible) ids, in id order, with the user's flags: a fixed
    number of queries, however many messages."""
    flags = visible_message_flags(user, message_ids)
    messages = list(
        Message.objects.filter(id__in=flags).select_related("sender", "sender__realm", "stream", "realm").order_by("id")
    )
    people = dm_users_by_recipient([m for m in messages if m.stream_id is None])
    return [
        message_to_dict(
            m,
            flags=flag_names(flags[m.id]),
            dm_users=people.get((m.recipient_id, m.sender_id)),
            apply_markdown=apply_markdown,
            client_gravatar=client_gravatar,
            allow_empty_topic_name=allow_empty_topic_name,
        )
        for m in messages
    ]


def dm_users_by_recipient(messages: Sequence[Message]) -> dict[tuple[int, int], list[User]]:
    """{(recipient id, sender id): the people of that direct message, sorted by id}. Two queries."""
    if not messages:
        return {}
    recipients = {r.id: r for r in Recipient.objects.filter(id__in={m.recipient_id for m in messages})}
    group_ids = [r.type_id for r in recipients.values() if r.type == Recipient.Type.DIRECT_MESSAGE_GROUP]
    groups = dict(DirectMessageGroup.objects.filter(id__in=group_ids).values_list("id", "user_ids"))
    wanted: dict[tuple[int, int], set[int]] = {}
    for m in messages:
        recipient = recipients[m.recipient_id]
        if recipient.type == Recipient.Type.PERSONAL:
            wanted[(m.recipient_id, m.sender_id)] = {recipient.type_id, m.sender_id}
        else:
            wanted[(m.recipient_id, m.sender_id)] = set(groups[recipient.type_id])
    user_ids = set().union(*wanted.values())
    users = {u.id: u for u in User.objects.filter(id__in=user_ids).select_related("realm")}
    return {key: [users[i] for i in sorted(ids)] for key, ids in wanted.items()}


# --- register state -------------------------------------------------------------------------------

MAX_UNREAD_MESSAGES = 50_000


def max_message_id(user: User) -> int:
    newest = UserMessage.objects.filter(user=user).order_by("-message_id").values_list("message_id", flat=True).first()
    return newest if newest is not None else -1


def muted_conversation_checker(user: User) -> Callable[[int, str], bool]:
    """Zulip's is_row_muted: whether a message of (channel id, topic) is muted for the user (a
    muted topic, or a muted channel unless the topic is unmuted or followed). Two queries."""
    muted_streams = set(
        Subscription.objects.filter(user=user, active=True, is_muted=True).values_list("stream_id", flat=True)
    )
    policies = {
        (stream_id, topic.lower()): policy
        for stream_id, topic, policy in UserTopic.objects.filter(user=user).values_list(
            "stream_id", "topic_name", "visibility_policy"
        )
    }
    unmuting = (UserTopic.VisibilityPolicy.UNMUTED, UserTopic.VisibilityPolicy.FOLLOWED)

    def is_muted(stream_id: int, topic: str) -> bool:
        policy = policies.get((stream_id, topic.lower()))
        if stream_id in muted_streams:
            return policy not in unmuting
        return policy == UserTopic.VisibilityPolicy.MUTED

    return is_muted


def unread_messages(user: User, *, allow_empty_topic_name: bool = False) -> dict[str, Any]:
    """Zulip's `unread_msgs` (the newest MAX_UNREAD_MESSAGES unread messages). Five queries.
    Channels the user left are left out, as in Zulip (their unread messages count no more).
    Topics are grouped case-insensitively, and the empty topic is "general chat" for clients
    without the `empty_topic_name` capability (as in their message events). As in Zulip, muted
    channels' and topics' messages are listed but not counted in `count`, and a wildcard mention
    there is not a mention."""
    left = Subscription.objects.filter(user=user, active=False).values("stream_id")
    rows = list(
        with_flag_columns(UserMessage.objects.filter(user=user))
        .filter(**{f"flag_{UserMessage.READ}": 0})
        .exclude(message__stream_id__in=left)
        .order_by("-message_id")
        .values_list("message_id", "flags", "message__stream_id", "message__topic", "message__sender_id",
                     "message__recipient_id")[: MAX_UNREAD_MESSAGES + 1]
    )  # fmt: skip
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
    wildcard_bits = UserMessage.STREAM_WILDCARD_MENTIONED | UserMessage.TOPIC_WILDCARD_MENTIONED
    for message_id, flags, stream_id, topic, sender_id, recipient_id in rows:
        muted = stream_id is not None and is_muted(stream_id, topic)
        muted_count += muted
        if flags & UserMessage.MENTIONED or (flags & wildcard_bits and not muted):
            mentions.append(message_id)
        if stream_id is not None:
            shown = topic if topic or allow_empty_topic_name else EMPTY_TOPIC_DISPLAY_NAME
            bucket = streams.setdefault(
                (stream_id, shown.lower()), {"stream_id": stream_id, "topic": shown, "unread_message_ids": []}
            )
            bucket["unread_message_ids"].append(message_id)
            continue
        recipient = recipients[recipient_id]
        if recipient.type == Recipient.Type.PERSONAL:
            other = sender_id if sender_id != user.id else recipient.type_id
            pms[other].append(message_id)
        else:
            huddles[",".join(map(str, groups[recipient.type_id]))].append(message_id)
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


def starred_message_ids(user: User) -> list[int]:
    query = with_flag_columns(UserMessage.objects.filter(user=user)).filter(**{f"flag_{UserMessage.STARRED}__gt": 0})
    return list(query.order_by("message_id").values_list("message_id", flat=True))


def muted_users_of(user: User) -> list[dict[str, int]]:
    # Deactivated users stay listed, as in Zulip: they can be muted, so they must be unmutable.
    rows = MutedUser.objects.filter(user=user).order_by("id")
    return [{"id": row.muted_user_id, "timestamp": int(row.date_muted.timestamp())} for row in rows]
