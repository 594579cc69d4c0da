"""Narrows: Zulip's message filters, parsed once and turned into one query, used by GET /messages,
GET /messages/matches_narrow and POST /messages/flags/narrow.

A narrow is a list of terms, each `{"operator", "operand", "negated"}` or `[operator, operand]`.
Terms are ANDed; a negated term excludes what it would select. Unknown operators and operands the
user may not see are errors (BAD_NARROW), never empty results that would reveal something.
"""

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.db import connection
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from apps.core.converters import ascii_int, is_ascii_digits
from apps.core.errors import JsonableError
from apps.messages.errors import BadNarrowError
from apps.messages.models import DirectMessageGroup, Reaction, Recipient, UserMessage
from apps.messages.recipients import find_group_recipient
from apps.messages.rendering import search_words
from apps.subscriptions.models import Stream, UserTopic
from apps.subscriptions.selectors import (
    Membership,
    has_content_access,
    has_metadata_access,
    is_subscribed,
    subscribed_stream_ids,
)
from apps.subscriptions.topics import RESOLVED_TOPIC_PREFIX, same_topic, topic_from_narrow
from apps.users.access import access_user_by_email
from apps.users.models import User

OPERATOR_ALIASES = {"stream": "channel", "pm-with": "dm", "subject": "topic"}
OPERATORS = {
    "channel",
    "topic",
    "sender",
    "dm",
    "dm-including",
    "group-pm-with",
    "is",
    "has",
    "id",
    "search",
    "near",
    "with",
    "streams",
    "channels",
    "in",
}
IS_OPERANDS = {"dm", "private", "starred", "mentioned", "alerted", "unread", "followed", "muted", "resolved"}
HAS_OPERANDS = {"link", "image", "attachment", "reaction"}
# Different words the `search` terms of one narrow may hold. Zulip has no limit; a search's cost
# (each word is a condition on every candidate message) grows with its words, so a longer one is
# refused rather than shortened, which would widen its results unseen.
MAX_SEARCH_WORDS = 100
# Terms of one narrow (as /register's): each is a condition, some a query of their own (a channel's
# lookup); no client sends more than a few.
MAX_NARROW_TERMS = 100
# Different people a narrow names (its `dm`, `sender`... operands together): each named by email is
# a lookup of its own.
MAX_NARROW_PEOPLE = 1000
# A "quoted phrase" of a search: found only as written (Zulip's exact phrase matching).
PHRASE_RE = re.compile(r'"([^"]*[^"\s][^"]*)"')


@dataclass(frozen=True)
class Term:
    operator: str
    operand: Any
    negated: bool = False


def parse_narrow(raw: Any) -> list[Term]:
    """The terms of a narrow as clients send it; "Invalid narrow" style errors otherwise."""
    if not isinstance(raw, list):
        raise JsonableError("narrow is not a list")
    if len(raw) > MAX_NARROW_TERMS:
        raise BadNarrowError(f"too many terms (limit: {MAX_NARROW_TERMS})")
    terms = []
    for item in raw:
        if isinstance(item, dict):
            operator, operand, negated = item.get("operator"), item.get("operand"), item.get("negated", False)
        elif isinstance(item, list) and len(item) == 2:
            (operator, operand), negated = item, False
        elif isinstance(item, list):  # Zulip's words (the fuzz QA pass: "not a list or dict" of a list)
            raise JsonableError(f"Invalid narrow[{len(terms)}]: element is not a string pair")
        else:
            raise JsonableError(f"Invalid narrow[{len(terms)}]: dict or list required")
        if not isinstance(operator, str) or not isinstance(negated, bool):
            raise JsonableError("Invalid narrow element")
        if operator.startswith("-"):  # the web app's spelling of negation
            operator, negated = operator[1:], True
        named = operator
        # Zulip spells operators with either dashes or underscores (zulip-terminal sends "pm_with").
        operator = operator.replace("_", "-")
        operator = OPERATOR_ALIASES.get(operator, operator)
        if operator not in OPERATORS:
            raise BadNarrowError(f"unknown operator {named}")  # Zulip's words
        if operator in ("dm", "dm-including", "group-pm-with"):
            if not isinstance(operand, str | int | list):
                raise JsonableError(f"Invalid operand for {operator}")
        elif operator in ("id", "channel", "sender", "with"):
            if not isinstance(operand, str | int) or isinstance(operand, bool):
                raise JsonableError(f"Invalid operand for {operator}")
        elif not isinstance(operand, str):
            raise JsonableError(f"Invalid operand for {operator}")
        elif operator == "search" and not operand.strip():
            raise JsonableError("operand cannot be blank.")  # Zulip's words
        terms.append(Term(operator, operand, negated))
    # A term repeated adds nothing but its cost (the hostile-input QA pass: 100 times `in:home`);
    # `with` and `near` name an anchor, whose repetition Zulip refuses.
    terms = list({_term_key(t, i): t for i, t in enumerate(terms)}.values())
    check_not_both_channel_and_dm(terms)
    if len(searched_words(terms)) > MAX_SEARCH_WORDS:
        raise BadNarrowError(f"search has too many words (limit: {MAX_SEARCH_WORDS})")
    return terms


def _term_key(term: Term, position: int) -> tuple:
    if term.operator in ("with", "near"):
        return (position,)
    return (term.operator, json.dumps(term.operand), term.negated)


def check_not_both_channel_and_dm(terms: list[Term]) -> None:
    """Zulip's check_not_both_channel_and_dm_narrow: no message matches both."""
    positive = [t for t in terms if not t.negated]
    channel = any(t.operator in ("channel", "channels", "streams") for t in positive)
    dm = any(
        t.operator in ("dm", "dm-including", "group-pm-with") or (t.operator == "is" and t.operand in ("dm", "private"))
        for t in positive
    )
    if channel and dm:
        raise BadNarrowError("No message can be both a channel message and direct message")


def searched_words(terms: list[Term], *, highlighted_only: bool = False) -> set[str]:
    """The different words of a narrow's `search` terms; with `highlighted_only`, of its positive
    ones (whose hits are highlighted)."""
    searches = [t.operand for t in terms if t.operator == "search" and not (highlighted_only and t.negated)]
    return {word for operand in searches for word in search_words(operand)}


class NarrowBuilder:
    """Turns terms into conditions on UserMessage rows (`prefix` "message__") or Message rows."""

    def __init__(self, user: User, *, on_user_messages: bool) -> None:
        self.user = user
        self.on_user_messages = on_user_messages
        self.prefix = "message__" if on_user_messages else ""
        self.membership = Membership(user)
        self._people: dict[int | str, User | None] = {}  # each person named, looked up once
        self._policies: dict[tuple[str, bool], Q] = {}

    def field(self, name: str) -> str:
        return self.prefix + name

    def apply(self, query: QuerySet, terms: list[Term]) -> QuerySet:
        # The positive `search` terms are one condition: as many subqueries, each its own join for
        # the planner, took PostgreSQL minutes (the hostile-input QA pass: 100 times `search x`).
        searches = [t.operand for t in terms if t.operator == "search" and not t.negated]
        if searches:
            query = query.filter(self.by_searches(searches))
        for term in terms:
            if term.operator == "search" and not term.negated:
                continue
            condition = self.condition(term)
            if condition is None:
                continue
            query = query.filter(~condition if term.negated else condition)
        return query

    # --- one term --------------------------------------------------------------------------------

    def condition(self, term: Term) -> Q | None:
        method = getattr(self, "by_" + term.operator.replace("-", "_"))
        return method(term.operand)

    def by_channel(self, operand) -> Q:
        return Q(**{self.field("stream_id"): self.stream(operand).id})

    def by_channels(self, operand) -> Q:
        if operand == "public":
            return Q(**{self.field("stream__invite_only"): False})
        if operand == "web-public":
            return Q(**{self.field("stream__is_web_public"): True})
        raise BadNarrowError("invalid channels operand")

    by_streams = by_channels

    def by_topic(self, operand: str) -> Q:
        topic = topic_from_narrow(operand)
        return Q(**{self.field("stream_id__isnull"): False}) & same_topic(self.field("topic"), topic)

    def by_sender(self, operand) -> Q:
        return Q(**{self.field("sender_id"): self.user_by(operand).id})

    def by_id(self, operand) -> Q:
        try:
            message_id = ascii_int(operand) if isinstance(operand, str) else int(operand)
        except (TypeError, ValueError):
            raise BadNarrowError("invalid message ID") from None
        return Q(**{self.field("id"): message_id})

    def by_in(self, operand: str) -> Q | None:
        """`in:home`, the web app's combined feed: what is not muted; `in:all`: everything."""
        if operand == "home":
            return ~self._topic_policy("muted")
        if operand == "all":
            return None
        raise BadNarrowError("unknown 'in' operand")

    def by_near(self, operand) -> None:
        return None  # only moves the anchor, in the web app

    by_with = by_near

    def by_dm(self, operand) -> Q:
        others = {u.id for u in self.users(operand)} - {self.user.id}
        me = self.user.id
        if not others:  # direct messages with oneself
            personal = Recipient.objects.filter(type=Recipient.Type.PERSONAL, type_id=me).first()
            return Q(**{self.field("sender_id"): me, self.field("recipient_id"): personal.id if personal else -1})
        if len(others) == 1:
            (other,) = others
            theirs = Recipient.objects.filter(type=Recipient.Type.PERSONAL, type_id=other).first()
            mine = Recipient.objects.filter(type=Recipient.Type.PERSONAL, type_id=me).first()
            return Q(**{self.field("sender_id"): me, self.field("recipient_id"): theirs.id if theirs else -1}) | Q(
                **{self.field("sender_id"): other, self.field("recipient_id"): mine.id if mine else -1}
            )
        recipient = find_group_recipient(self.user.realm, sorted(others | {me}))
        return Q(**{self.field("recipient_id"): recipient.id if recipient else -1})

    def by_dm_including(self, operand) -> Q:
        other = self._one_user(operand, "dm-including")
        personal = Recipient.objects.filter(type=Recipient.Type.PERSONAL, type_id=other).first()
        is_dm = Q(**{self.field("stream_id__isnull"): True})
        return is_dm & (
            Q(**{self.field("sender_id"): other})
            | Q(**{self.field("recipient_id"): personal.id if personal else -1})
            | Q(**{self.field("recipient_id__in"): self._group_recipient_ids(other)})
        )

    def by_group_pm_with(self, operand) -> Q:
        """Zulip's deprecated group-pm-with: the user's group direct messages with this person (not
        their one-to-one ones, which dm-including adds)."""
        return Q(
            **{self.field("recipient_id__in"): self._group_recipient_ids(self._one_user(operand, "group-pm-with"))}
        )

    def _one_user(self, operand, operator: str) -> int:
        users = self.users(operand, unknown=f"unknown user {operand}")
        if len(users) != 1:
            raise BadNarrowError(f"{operator} takes one user")
        return users[0].id

    def _group_recipient_ids(self, other: int) -> list[int]:
        """The recipients of the group direct messages of the user and `other`."""
        groups = [group_id for group_id, user_ids in self._own_groups if other in user_ids]
        recipients = Recipient.objects.filter(type=Recipient.Type.DIRECT_MESSAGE_GROUP, type_id__in=groups)
        return list(recipients.values_list("id", flat=True))

    @cached_property
    def _own_groups(self) -> list[tuple[int, list[int]]]:
        """The user's group direct messages (id, people), read once: on PostgreSQL only theirs (JSON
        containment), not every group of the organization (the QA pass: 20,000 groups, read in
        Python for each term, took 31 s)."""
        groups = DirectMessageGroup.objects.filter(realm_id=self.user.realm_id)
        if connection.vendor == "postgresql":
            groups = groups.filter(user_ids__contains=[self.user.id])
        return [(group_id, ids) for group_id, ids in groups.values_list("id", "user_ids") if self.user.id in ids]

    def by_unmuted(self, operand: str) -> Q:
        """Not muted (internal, first_unread's): `topics`, not in a muted topic; `all`, nor in a
        muted channel either."""
        return ~self._topic_policy("muted", channels=operand == "all")

    def by_is(self, operand: str) -> Q:
        if operand not in IS_OPERANDS:
            raise BadNarrowError("unknown 'is' operand")
        if operand in ("dm", "private"):
            return Q(**{self.field("stream_id__isnull"): True})
        if operand in ("followed", "muted"):
            return self._topic_policy(operand)
        if operand == "resolved":
            return Q(**{self.field("topic__startswith"): RESOLVED_TOPIC_PREFIX})
        bits = {
            "starred": UserMessage.STARRED,
            "mentioned": UserMessage.MENTIONED
            | UserMessage.STREAM_WILDCARD_MENTIONED
            | UserMessage.TOPIC_WILDCARD_MENTIONED,
            "alerted": UserMessage.HAS_ALERT_WORD,
            "unread": UserMessage.READ,
        }[operand]
        if not self.on_user_messages:
            raise AssertionError("flag terms need UserMessage rows")  # see needs_user_messages()
        if operand == "unread":
            # `(flags & 1) = 0`, the predicate of the partial unread index (migration 0004), not
            # NOT (flags & 1 > 0), which the planner cannot match to it (benchmarks/messages).
            return Q(**{f"flag_{bits}": 0})
        return Q(**{f"flag_{bits}__gt": 0})

    def by_has(self, operand: str) -> Q:
        if operand not in HAS_OPERANDS:
            raise BadNarrowError("unknown 'has' operand")
        if operand == "reaction":
            # Served by the reactions' unique constraint, whose first column is the message.
            reacted = Reaction.objects.filter(message_id=OuterRef("message_id" if self.on_user_messages else "id"))
            return Q(Exists(reacted))
        return Q(**{self.field(f"has_{operand}"): True})

    def by_search(self, operand: str) -> Q:
        return self.by_searches([operand])

    def by_searches(self, operands: list[str]) -> Q:
        """Every word of each operand (stemmed, on PostgreSQL), and each "quoted phrase" as written,
        in the content or the topic, as Zulip's _by_search_tsearch (whatever the case)."""
        words = [search_words(operand) for operand in operands]
        if not all(words):  # nothing to search for ("✔"): no message, as Zulip's empty text query finds
            return Q(**{self.field("id__in"): []})
        condition = Q()
        for phrase in dict.fromkeys(phrase for operand in operands for phrase in PHRASE_RE.findall(operand)):
            condition &= self._contains(phrase)
        if connection.vendor == "postgresql":
            # The generated, GIN-indexed tsvector column of migration 0002 (stemmed English). A
            # self-contained subquery: the table is aliased differently wherever the ORM nests it.
            # plainto_tsquery wants every word of its text: the operands' together are all of them.
            ids = RawSQL(
                "SELECT id FROM chat_messages_message WHERE search_tsvector @@ plainto_tsquery('english', %s)",
                [" ".join(operands)],
            )
            return Q(**{self.field("id__in"): ids}) & condition
        for word in dict.fromkeys(word for some in words for word in some):
            condition &= self._contains(word)
        return condition

    def _contains(self, text: str) -> Q:
        return Q(**{self.field("content__icontains"): text}) | Q(**{self.field("topic__icontains"): text})

    # --- lookups ---------------------------------------------------------------------------------

    def stream(self, operand) -> Stream:
        streams = Stream.objects.filter(realm_id=self.user.realm_id)
        if isinstance(operand, int) or (
            isinstance(operand, str) and is_ascii_digits(operand) and not streams.filter(name__iexact=operand).exists()
        ):
            stream = streams.filter(id=int(operand)).first()
        else:
            stream = streams.filter(name__iexact=str(operand).strip()).first()
        if stream is None or not (
            has_metadata_access(self.membership, stream, is_subscribed=self._subscribed(stream))
            # A former subscriber of a private channel keeps the messages they received, and
            # can narrow to them (as in Zulip); for them the channel's existence is no secret.
            or UserMessage.objects.filter(user=self.user, message__stream=stream).exists()
        ):
            raise BadNarrowError(f"unknown channel {operand}")  # the operand as Zulip's says it
        return stream

    def _subscribed(self, stream: Stream) -> bool:
        return is_subscribed(self.user, stream)

    def user_by(self, operand) -> User:
        unknown = f"unknown user {operand}"
        users = self.users([operand] if not isinstance(operand, list) else operand, unknown=unknown)
        if len(users) != 1:
            raise BadNarrowError(unknown)
        return users[0]

    def users(self, operand, *, unknown: str | None = None) -> list[User]:
        """The people `operand` names; none found: "unknown user in" it (Zulip's words for `dm`), or `unknown`."""
        unknown = unknown or f"unknown user in {operand}"
        if isinstance(operand, str):
            items = [part.strip() for part in operand.split(",") if part.strip()]
        elif isinstance(operand, int):
            items = [operand]
        else:
            items = list(operand)
        if not items:  # nobody: not a narrow to oneself
            raise BadNarrowError(unknown)
        if any(isinstance(item, bool) or not isinstance(item, int | str) for item in items):
            raise BadNarrowError(unknown)
        # Each person once, and those named by id in one query: a long list costs no query per entry.
        # Those named by id are looked up in one query; each, by id or email, once per narrow.
        items = [item.strip() if isinstance(item, str) else item for item in items]
        items = [int(item) if isinstance(item, int) or is_ascii_digits(item) else item for item in items]
        items = list(dict.fromkeys(items))
        if len(self._people.keys() | set(items)) > MAX_NARROW_PEOPLE:
            raise BadNarrowError(f"too many people named (limit: {MAX_NARROW_PEOPLE})")
        ids = {item for item in items if isinstance(item, int) and 0 < item < 2**63 and item not in self._people}
        if ids:
            by_id = {u.id: u for u in User.objects.filter(realm_id=self.user.realm_id, id__in=ids)}
            self._people.update({user_id: by_id.get(user_id) for user_id in ids})
        found = []
        for item in items:
            if item not in self._people and isinstance(item, str):
                try:
                    self._people[item] = access_user_by_email(self.user, item, allow_deactivated=True, allow_bots=True)
                except JsonableError:
                    self._people[item] = None
            user = self._people.get(item)
            if user is None:
                raise BadNarrowError(unknown)
            found.append(user)
        return found

    def _topic_policy(self, operand: str, *, channels: bool = True) -> Q:
        """Messages in the user's topics of this policy (muted: in muted channels too), built once
        per narrow and in one piece: added a topic at a time, the condition was copied each time
        (the QA pass: 3,000 muted topics took 1.7 s a term)."""
        key = (operand, channels)
        if key not in self._policies:
            self._policies[key] = self._build_topic_policy(operand, channels=channels)
        return self._policies[key]

    def _build_topic_policy(self, operand: str, *, channels: bool) -> Q:
        policy = UserTopic.VisibilityPolicy.FOLLOWED if operand == "followed" else UserTopic.VisibilityPolicy.MUTED
        pairs = UserTopic.objects.filter(user=self.user, visibility_policy=policy).values_list(
            "stream_id", "topic_name"
        )
        conditions = [Q(pk__in=[]), *(self._in_topic(stream_id, topic) for stream_id, topic in pairs)]
        if operand == "muted" and channels:
            muted_streams = subscribed_stream_ids(self.user, muted=True)
            # Unmuted and followed topics of a muted channel are not muted (Zulip's exclude_stream_and_topic_mutes).
            unmuted = UserTopic.objects.filter(
                user=self.user,
                visibility_policy__in=[UserTopic.VisibilityPolicy.UNMUTED, UserTopic.VisibilityPolicy.FOLLOWED],
            )
            spared = unmuted.values_list("stream_id", "topic_name")
            conditions.append(
                Q(
                    Q(**{self.field("stream_id__in"): list(muted_streams)}),
                    *(~self._in_topic(stream_id, topic) for stream_id, topic in spared),
                )
            )
        return Q(*conditions, _connector=Q.OR)

    def _in_topic(self, stream_id: int, topic: str) -> Q:
        return Q(**{self.field("stream_id"): stream_id}) & same_topic(self.field("topic"), topic)


FLAG_OPERANDS = {"starred", "mentioned", "alerted", "unread"}


def needs_user_messages(terms: list[Term]) -> bool:
    return any(t.operator == "is" and t.operand in FLAG_OPERANDS for t in terms)


def with_flag_columns(query: QuerySet) -> QuerySet:
    """UserMessage rows with `flag_<bit>` columns, for the flag terms."""
    bits = [
        UserMessage.STARRED,
        UserMessage.MENTIONED | UserMessage.STREAM_WILDCARD_MENTIONED | UserMessage.TOPIC_WILDCARD_MENTIONED,
        UserMessage.HAS_ALERT_WORD,
        UserMessage.READ,
    ]
    return query.alias(**{f"flag_{bit}": F("flags").bitand(bit) for bit in bits})


def reads_public_history(user: User, terms: list[Term]) -> bool:
    """Whether the narrow reads every public channel's history (a positive `channels:public`, as
    Zulip's search of all public channels), which guests may not."""
    return not user.is_guest and any(
        t.operator in ("channels", "streams") and t.operand == "public" and not t.negated for t in terms
    )


def history_channel(user: User, terms: list[Term]) -> Stream | None:
    """The channel of a narrow that reads the channel's history (all its messages, not only those
    the user received): a positive `channel` term, on a channel whose history is public to its
    subscribers and whose content the user may read; else None."""
    for term in terms:
        if term.operator == "channel" and not term.negated:
            builder = NarrowBuilder(user, on_user_messages=False)
            stream = builder.stream(term.operand)
            subscribed = builder._subscribed(stream)
            if stream.history_public_to_subscribers and has_content_access(
                builder.membership, stream, is_subscribed=subscribed
            ):
                return stream
            return None
    return None
