"""Reads of messages: who may see which, the messages of a narrow around an anchor, and their
wire shapes in a fixed number of queries.

A user sees the messages they received (a UserMessage row) and, in a channel whose history is
public to its subscribers and whose content they may read, every message of that channel (shown
with the flags `read` and `historical` when they have no row). Another organization's messages,
and messages of channels the user may not read, do not exist for them.
"""

import contextlib
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Lower

from apps.core.converters import is_ascii_digits
from apps.linkifiers.patterns import LinkifierRules
from apps.linkifiers.selectors import linkifier_rules
from apps.messages.access import check_channel_message_access
from apps.messages.edit_history import visible_edit_history
from apps.messages.emoji import emoji_names_in
from apps.messages.errors import BadNarrowError, InvalidMessageError
from apps.messages.hooks import custom_emoji
from apps.messages.models import (
    AlertWord,
    DirectMessageGroup,
    Message,
    MutedUser,
    Reaction,
    Recipient,
    SubMessage,
    UserMessage,
)
from apps.messages.narrow import (
    NarrowBuilder,
    Term,
    history_channel,
    needs_user_messages,
    reads_public_history,
    with_flag_columns,
)
from apps.messages.recipients import direct_message_people
from apps.messages.rendering import CHANNEL_LINK_RE, MENTION_RE
from apps.messages.serializers import flag_names, message_to_dict
from apps.subscriptions.models import Stream, UserTopic
from apps.subscriptions.selectors import (
    Membership,
    has_content_access,
    has_metadata_access,
    streams_by_name,
    subscribed_stream_ids,
)
from apps.subscriptions.topics import same_topic, topic_key
from apps.users.access import without_unknown_senders
from apps.users.models import User

HISTORICAL_FLAGS = UserMessage.READ | UserMessage.HISTORICAL


def readable_history_stream_ids(user: User, stream_ids: Iterable[int]) -> set[int]:
    """Of these channels, those whose whole history the user may read."""
    streams = list(
        Stream.objects.filter(realm_id=user.realm_id, id__in=set(stream_ids), history_public_to_subscribers=True)
    )
    subscribed = set(subscribed_stream_ids(user).filter(stream__in=streams))
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


def access_message(user: User, message_id: int, *, changing: bool = False) -> tuple[Message, int]:
    """The message and the user's flags for it; "Invalid message(s)" when they may not see it
    (apps.messages.access: a channel's, when they may not read the channel now; when `changing`
    it, one of an archived channel), or when it was deleted between the reads."""
    flags = visible_message_flags(user, [message_id])
    message = None
    if message_id in flags:
        message = Message.objects.select_related("sender", "stream", "realm").filter(id=message_id).first()
    if message is None:
        raise InvalidMessageError()
    if message.stream is not None:
        check_channel_message_access(user, message.stream, changing=changing)
    return message, flags[message_id]


def reactions_by_message(message_ids: Iterable[int]) -> dict[int, list[Reaction]]:
    """The reactions to these messages, oldest first, with their users: one query."""
    by_message: dict[int, list[Reaction]] = {}
    for reaction in (
        Reaction.objects.filter(message_id__in=message_ids).select_related("user", "user__realm").order_by("id")
    ):
        by_message.setdefault(reaction.message_id, []).append(reaction)
    return by_message


def submessages_by_message(message_ids: Iterable[int]) -> dict[int, list[SubMessage]]:
    """The submessages of these messages, in order: one query."""
    by_message: dict[int, list[SubMessage]] = defaultdict(list)
    for submessage in SubMessage.objects.filter(message_id__in=message_ids).order_by("message_id", "id"):
        by_message[submessage.message_id].append(submessage)
    return by_message


# --- narrows around an anchor -------------------------------------------------------------------


@dataclass
class NarrowQuery:
    """The ids of the messages of a narrow the user may see: `ids` is a queryset of message ids,
    with the rows it comes from (UserMessage or Message)."""

    ids: QuerySet
    on_user_messages: bool


def narrow_query(user: User, terms: list[Term]) -> NarrowQuery:
    history = not needs_user_messages(terms)
    stream = history_channel(user, terms) if history else None
    if stream is not None or (history and reads_public_history(user, terms)):
        builder = NarrowBuilder(user, on_user_messages=False)
        query = Message.objects.filter(realm_id=user.realm_id, **({"stream_id": stream.id} if stream else {}))
        return NarrowQuery(builder.apply(query, terms).values_list("id", flat=True), on_user_messages=False)
    builder = NarrowBuilder(user, on_user_messages=True)
    query = with_flag_columns(UserMessage.objects.filter(user=user))
    ids = builder.apply(query, terms).values_list("message_id", flat=True)
    return NarrowQuery(ids, on_user_messages=True)


def _id_column(query: NarrowQuery) -> str:
    return "message_id" if query.on_user_messages else "id"


def first_unread_id(user: User, terms: list[Term]) -> int | None:
    """The oldest unread message of the narrow not in a muted topic, nor, outside a channel narrow,
    in a muted channel (Zulip's exclude_muting_conditions: what the user muted does not hold them
    back)."""
    names_channel = any(t.operator == "channel" and not t.negated for t in terms)
    unread = [*terms, Term("is", "unread"), Term("unmuted", "topics" if names_channel else "all")]
    query = narrow_query(user, unread)
    column = _id_column(query)
    return query.ids.order_by(column).first()


def messages_around(
    user: User, terms: list[Term], anchor: int, num_before: int, num_after: int, *, include_anchor: bool
):
    """(ids, found_anchor, found_oldest, found_newest) of a narrow around an anchor."""
    query = narrow_query(user, terms)
    before, after = ids_around(query, anchor, num_before, num_after + 1, include_anchor=include_anchor)
    found_oldest = len(before) <= num_before
    before = sorted(before[:num_before])
    found_anchor = include_anchor and bool(after) and after[0] == anchor
    rest = after[1:] if found_anchor else after
    found_newest = len(rest) <= num_after
    ids = [*before, *([anchor] if found_anchor else []), *rest[:num_after]]
    return ids, found_anchor, found_oldest, found_newest


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
    reactions = reactions_by_message(flags)
    submessages = submessages_by_message(flags)
    linkifiers = linkifier_rules(user.realm_id)
    links_of_topic: dict[str, list[dict[str, str]]] = {}  # a page's messages share few topics
    shapes = [
        message_to_dict(
            m,
            flags=flag_names(flags[m.id]),
            dm_users=people.get((m.recipient_id, m.sender_id)),
            apply_markdown=apply_markdown,
            client_gravatar=client_gravatar,
            allow_empty_topic_name=allow_empty_topic_name,
            topic_links=_topic_links(linkifiers, m, links_of_topic),
            reactions=reactions.get(m.id, ()),
            submessages=submessages.get(m.id, ()),
            edit_history=visible_edit_history(
                m, user.realm.message_edit_history_visibility_policy, allow_empty_topic_name=allow_empty_topic_name
            ),
        )
        for m in messages
    ]
    return without_unknown_senders(user, shapes)  # (a guest who may see only some people)


def topic_links_of(message: Message) -> list[dict[str, str]] | None:
    """The `topic_links` of one message (GET /messages/{id})."""
    return _topic_links(linkifier_rules(message.realm_id), message, {})


def _topic_links(
    linkifiers: LinkifierRules, message: Message, known: dict[str, list[dict[str, str]]]
) -> list[dict[str, str]] | None:
    if message.stream_id is None:
        return None
    if message.topic not in known:
        known[message.topic] = linkifiers.topic_links(message.topic)
    return known[message.topic]


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


def muted_conversation_checker(user: User) -> Callable[[int, str], bool]:
    """Zulip's is_row_muted: whether a message of (channel id, topic) is muted for the user (a
    muted topic, or a muted channel unless the topic is unmuted or followed). Two queries."""
    muted_streams = set(subscribed_stream_ids(user, muted=True))
    policies = {
        (stream_id, topic_key(topic)): policy
        for stream_id, topic, policy in UserTopic.objects.filter(user=user).values_list(
            "stream_id", "topic_name", "visibility_policy"
        )
    }
    unmuting = (UserTopic.VisibilityPolicy.UNMUTED, UserTopic.VisibilityPolicy.FOLLOWED)

    def is_muted(stream_id: int, topic: str) -> bool:
        policy = policies.get((stream_id, topic_key(topic)))
        if stream_id in muted_streams:
            return policy not in unmuting
        return policy == UserTopic.VisibilityPolicy.MUTED

    return is_muted


def starred_message_ids(user: User) -> list[int]:
    query = with_flag_columns(UserMessage.objects.filter(user=user)).filter(**{f"flag_{UserMessage.STARRED}__gt": 0})
    return list(query.order_by("message_id").values_list("message_id", flat=True))


def muted_users_of(user: User) -> list[dict[str, int]]:
    # Deactivated users stay listed, as in Zulip: they can be muted, so they must be unmutable.
    rows = MutedUser.objects.filter(user=user).order_by("id")
    return [{"id": row.muted_user_id, "timestamp": int(row.date_muted.timestamp())} for row in rows]


def alert_words_of(user: User) -> list[str]:
    """The user's alert words, oldest first."""
    return list(AlertWord.objects.filter(user=user).order_by("id").values_list("word", flat=True))


def alert_word_users(realm_id: int, user_ids: Collection[int]) -> dict[str, set[int]]:
    """{word key: those of these users who have the word}: one query by the organization (few
    rows), never with the list of users (a big channel's every subscriber)."""
    result: dict[str, set[int]] = defaultdict(set)
    for key, user_id in AlertWord.objects.filter(user__realm_id=realm_id).values_list("key", "user_id"):
        if user_id in user_ids:
            result[key].add(user_id)
    return result


# --- what a message's text names ---------------------------------------------------------------


def mention_targets(realm_id: int, content: str) -> tuple[dict[str, list[tuple[int, str]]], set[int]]:
    """The active users the content's mentions may name, as render_message takes them: {lower-cased
    full name: [(id, full name)]} and their ids (also those Zulip's `@**|id**` names by id alone).
    One query, only when the content has mentions."""
    parts = [match.group(2).strip().partition("|") for match in MENTION_RE.finditer(content)]
    written = {name for name, _, _ in parts if name}
    by_id = {int(id_text) for name, _, id_text in parts if not name and is_ascii_digits(id_text) and len(id_text) < 19}
    names = {name.lower() for name in written}
    by_name: dict[str, list[tuple[int, str]]] = defaultdict(list)
    ids = set()
    if names or by_id:
        users = User.objects.filter(realm_id=realm_id, is_active=True).annotate(lower_name=Lower("full_name"))
        # Also the names as written: Python and the database lower-case a few letters differently
        # ("İ" is "i̇" in Python, "i" in PostgreSQL).
        matching = users.filter(Q(lower_name__in=names) | Q(full_name__in=written) | Q(id__in=by_id))
        for user_id, full_name in matching.values_list("id", "full_name"):
            by_name[full_name.lower()].append((user_id, full_name))
            ids.add(user_id)
    return by_name, ids


def channel_link_targets(realm_id: int, author: User | None, content: str) -> dict[str, tuple[int, str]]:
    """The channels the content's links (`#**channel**`, `#**channel>topic**`) may name, as
    render_message takes them: {lower-cased name: (id, name)}, those the author knows exist (not
    archived); without an author (a description the server's own tools write) the public ones.
    Queries only when the content has such links."""
    names = {match.group(1).strip() for match in CHANNEL_LINK_RE.finditer(content)}
    found = [s for s in streams_by_name(realm_id, names).values() if not s.deactivated]
    if author is None:
        found = [s for s in found if s.is_public]
    elif found:
        subscribed = set(subscribed_stream_ids(author, found))
        membership = Membership(author)
        found = [s for s in found if has_metadata_access(membership, s, is_subscribed=s.id in subscribed)]
    return {s.name.lower(): (s.id, s.name) for s in found}


def with_conversation(user: User, terms: list[Term]) -> list[Term]:
    """Zulip's `with` operator: the terms of the conversation the message is in now (its channel and
    topic, or its direct message's people) in place of the narrow's own, so that a link to a message
    finds it even after it moved. A message the user cannot see leaves a narrow that names a
    conversation as it is, and makes any other invalid."""
    found = [term for term in terms if term.operator == "with"]
    if not found:
        return terms
    if len(found) > 1:
        raise BadNarrowError("Duplicate 'with' operators.")
    rest = [term for term in terms if term.operator != "with"]
    message = None
    if is_ascii_digits(str(found[0].operand)) and int(found[0].operand) < 2**63:
        with contextlib.suppress(InvalidMessageError):
            message, _ = access_message(user, int(found[0].operand))
    if message is None:
        if _names_a_conversation(rest):
            return rest
        raise BadNarrowError("Invalid 'with' operator")
    kept = [term for term in rest if term.operator not in ("channel", "topic", "dm")]
    if message.stream_id is not None:
        return [Term("channel", message.stream_id), Term("topic", message.topic), *kept]
    return [Term("dm", sorted(direct_message_people(message))), *kept]


def _names_a_conversation(terms: list[Term]) -> bool:
    operators = {term.operator for term in terms}
    return "dm" in operators or {"channel", "topic"} <= operators


def custom_emoji_targets(realm_id: int, content: str) -> dict[str, str]:
    """The organization's active custom emoji the content may name (":name:"), as render_message
    takes them: {name: image URL}. Asked for only when the content names an emoji."""
    names = emoji_names_in(content)
    if not names:
        return {}
    found = custom_emoji.call_merged(realm_id).values()
    return {e["name"]: e["source_url"] for e in found if e["name"] in names and not e["deactivated"]}


def muting_user_ids(sender: User, among: Iterable[int]) -> set[int]:
    """Those of these users who muted the sender: one query by the sender, not by recipient."""
    return set(MutedUser.objects.filter(muted_user=sender).values_list("user_id", flat=True)).intersection(among)


def topic_participant_ids(stream_id: int, topic: str) -> set[int]:
    """Who sent messages to the topic (those a topic wildcard mention mentions), one query."""
    return set(
        Message.objects.filter(same_topic("topic", topic), stream_id=stream_id).values_list("sender_id", flat=True)
    )


def read_receipt_user_ids(requester: User, message: Message) -> list[int]:
    """Who has read the message, as Zulip tells it: active users (bots too) who let others see
    what they read (`send_read_receipts`), never its sender, nor anyone who muted the requester or
    whom the requester muted. One query."""
    rows = (
        with_flag_columns(
            UserMessage.objects.filter(message=message, user__is_active=True, user__send_read_receipts=True)
        )
        .filter(**{f"flag_{UserMessage.READ}__gt": 0})
        .exclude(user_id=message.sender_id)
        .exclude(user_id__in=MutedUser.objects.filter(muted_user=requester).values("user_id"))
        .exclude(user_id__in=MutedUser.objects.filter(user=requester).values("muted_user_id"))
    )
    return sorted(rows.values_list("user_id", flat=True))
