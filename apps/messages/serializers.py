"""Request parameter classes of messages, and the Message object."""

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired

from django.http import HttpRequest
from pydantic import Field
from rest_framework.request import Request
from typing_extensions import TypedDict

from apps.core.params import Id, Json, JsonOrText, Params
from apps.core.sessions import is_session_api
from apps.messages.models import AlertWord, Message, Reaction, SubMessage, UserMessage
from apps.subscriptions.topics import topic_for_client
from apps.users.models import User
from apps.users.selectors import api_email, avatar_url_for_client

MAX_MESSAGES_PER_REQUEST = 5000
MAX_IDS = 10_000


def display_recipient_user(user: User) -> dict[str, Any]:
    return {"id": user.id, "email": api_email(user), "full_name": user.full_name, "is_mirror_dummy": False}


def reaction_to_dict(reaction: Reaction) -> dict[str, Any]:
    """A reaction as a Message object lists it (with Zulip's deprecated `user`)."""
    return {
        "emoji_name": reaction.emoji_name,
        "emoji_code": reaction.emoji_code,
        "reaction_type": reaction.reaction_type,
        "user_id": reaction.user_id,
        "user": display_recipient_user(reaction.user),
    }


def submessage_to_dict(submessage: SubMessage) -> dict[str, Any]:
    return {
        "id": submessage.id,
        "message_id": submessage.message_id,
        "sender_id": submessage.sender_id,
        "msg_type": submessage.msg_type,
        "content": submessage.content,
    }


def reaction_event_user(user: User) -> dict[str, Any]:
    """The deprecated `user` of a reaction event, in Zulip's shape for it."""
    return {"user_id": user.id, "email": api_email(user), "full_name": user.full_name}


def message_to_dict(
    message: Message,
    *,
    flags: list[str] | None,
    dm_users: list[User] | None,
    apply_markdown: bool = True,
    client_gravatar: bool = True,
    allow_empty_topic_name: bool = False,
    topic_links: list[dict[str, str]] | None = None,
    reactions: Sequence[Reaction] = (),
    submessages: Sequence[SubMessage] = (),
    edit_history: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Zulip's Message object. `dm_users`: the people of a direct message (sorted by id);
    `flags` (for GET /messages) the reader's flags, left out when None (events carry them apart);
    `topic_links`: what the organization's linkifiers make of its topic (apps.linkifiers);
    `reactions`: its reactions, oldest first, with their users; `submessages`: its widgets' rows."""
    sender = message.sender
    topic = message.topic
    if message.stream_id is not None:
        topic = topic_for_client(topic, allow_empty_topic_name=allow_empty_topic_name)
    result: dict[str, Any] = {
        "id": message.id,
        "type": "stream" if message.stream_id is not None else "private",
        "sender_id": sender.id,
        "sender_email": api_email(sender),
        "sender_full_name": sender.full_name,
        "sender_realm_str": message.realm.string_id,
        "avatar_url": avatar_url_for_client(sender, client_gravatar=client_gravatar),
        "client": message.sending_client,
        "content": message.rendered_content if apply_markdown else message.content,
        "content_type": "text/html" if apply_markdown else "text/x-markdown",
        "display_recipient": (
            message.stream.name if message.stream_id is not None else [display_recipient_user(u) for u in dm_users]
        ),
        "recipient_id": message.recipient_id,
        "subject": topic,
        "topic_links": topic_links or [],
        "is_me_message": message.content.startswith("/me ") and "\n" not in message.content,
        "timestamp": int(message.date_sent.timestamp()),
        "reactions": [reaction_to_dict(reaction) for reaction in reactions],
        "submessages": [submessage_to_dict(submessage) for submessage in submessages],
    }
    if message.stream_id is not None:
        result["stream_id"] = message.stream_id
    if edit_history:
        result["edit_history"] = edit_history
    if message.last_edit_time is not None:
        result["last_edit_timestamp"] = int(message.last_edit_time.timestamp())
    if message.last_moved_time is not None:
        result["last_moved_timestamp"] = int(message.last_moved_time.timestamp())
    if flags is not None:
        result["flags"] = flags
    return result


# --- answers: the OpenAPI document's success schemas (apps/core/openapi.py) ------------------------


class MessageShape(TypedDict):
    """Zulip's Message object: message_to_dict (GET /messages adds the search fields)."""

    id: int
    type: Literal["stream", "private"]
    sender_id: int
    sender_email: str
    sender_full_name: str
    sender_realm_str: str
    avatar_url: str | None
    client: str
    content: str
    content_type: Literal["text/html", "text/x-markdown"]
    display_recipient: str | list[dict[str, Any]]
    recipient_id: int
    subject: str
    topic_links: list[dict[str, str]]
    is_me_message: bool
    timestamp: int
    reactions: list[dict[str, Any]]
    submessages: list[dict[str, Any]]
    stream_id: NotRequired[int]
    edit_history: NotRequired[list[dict[str, Any]]]
    last_edit_timestamp: NotRequired[int]
    last_moved_timestamp: NotRequired[int]
    flags: NotRequired[list[str]]
    match_content: NotRequired[str]
    match_subject: NotRequired[str]


class MessagesAnswer(TypedDict):
    messages: list[MessageShape]
    anchor: NotRequired[int]  # not with message_ids
    found_anchor: bool
    found_oldest: bool
    found_newest: bool
    history_limited: bool


class SentMessageAnswer(TypedDict):
    id: int


class RenderedAnswer(TypedDict):
    rendered: str


# --- parameters -----------------------------------------------------------------------------------

# A product name is an HTTP token (RFC 9110): anything else ends it, whatever a client sends (a
# NUL byte, which PostgreSQL cannot store, reaches here from servers that do not refuse it).
_PRODUCT_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]*")


def client_name(request: HttpRequest | Request) -> str:
    """Zulip's `client` field: the User-Agent's product name ("ZulipPython/0.9.1 ..." -> "ZulipPython");
    "website" for a browser's session (/json/), as Zulip's process_client names browsers (its own
    desktop app, "Zulip…", keeps its name): the name that makes a message read for its sender."""
    name = _PRODUCT_RE.match(request.META.get("HTTP_USER_AGENT", "").strip()).group()[:40] or "API"
    if is_session_api(request) and not name.startswith("Zulip"):
        return "website"
    return name


class RenderMessageParams(Params):
    content: str


class SendMessageParams(Params):
    type: Literal["stream", "channel", "private", "direct"]
    # A channel name or id, or user ids / emails: JSON when it parses, else the raw text. A bot may
    # leave a channel out: its default_sending_stream is meant.
    to: JsonOrText | None = None
    topic: str | None = None
    subject: str | None = None
    content: str
    queue_id: str | None = None
    local_id: str | None = None
    read_by_sender: Json[bool] | None = None


Anchor = Annotated[str, Field(max_length=40)]


class GetMessagesParams(Params):
    anchor: Anchor | None = None
    # These messages instead of a range (those of them in the narrow): Zulip's feature level 300.
    message_ids: Json[Annotated[list[Id], Field(max_length=MAX_MESSAGES_PER_REQUEST)]] | None = None
    num_before: Json[Annotated[int, Field(ge=0)]] = 0
    num_after: Json[Annotated[int, Field(ge=0)]] = 0
    narrow: Json[list[Any]] = Field(default_factory=list)
    apply_markdown: Json[bool] = True
    client_gravatar: Json[bool] = True
    include_anchor: Json[bool] = True
    use_first_unread_anchor: Json[bool] = False
    allow_empty_topic_name: Json[bool] = False


class GetMessageParams(Params):
    apply_markdown: Json[bool] = True
    allow_empty_topic_name: Json[bool] = False


class UpdateFlagsParams(Params):
    messages: Json[Annotated[list[Id], Field(max_length=MAX_IDS)]]
    op: Literal["add", "remove"]
    flag: str


class UpdateFlagsForNarrowParams(Params):
    anchor: Anchor
    include_anchor: Json[bool] = True
    num_before: Json[Annotated[int, Field(ge=0)]]
    num_after: Json[Annotated[int, Field(ge=0)]]
    narrow: Json[list[Any]]
    op: Literal["add", "remove"]
    flag: str


class MatchesNarrowParams(Params):
    msg_ids: Json[Annotated[list[Id], Field(max_length=MAX_IDS)]]
    narrow: Json[list[Any]]


class MarkStreamParams(Params):
    stream_id: Json[Id]


class MarkTopicParams(Params):
    stream_id: Json[Id]
    topic_name: str


class DeleteTopicParams(Params):
    topic_name: str


# A request's list of alert words: a user has at most AlertWord.MAX_PER_USER, so a longer list (even
# of repeated words) is a client's mistake; it bounds the work of one request.
MAX_ALERT_WORDS_PER_REQUEST = 1000


class AddAlertWordsParams(Params):
    # Each word at most AlertWord.MAX_LENGTH characters as sent (before stripping), as in Zulip.
    alert_words: Json[
        Annotated[
            list[Annotated[str, Field(max_length=AlertWord.MAX_LENGTH)]], Field(max_length=MAX_ALERT_WORDS_PER_REQUEST)
        ]
    ]


class RemoveAlertWordsParams(Params):
    alert_words: Json[Annotated[list[str], Field(max_length=MAX_ALERT_WORDS_PER_REQUEST)]]


def flag_names(flags: int) -> list[str]:
    return UserMessage.flag_names(flags)


class AddReactionParams(Params):
    emoji_name: Annotated[str, Field(max_length=Reaction.MAX_NAME_LENGTH)]
    emoji_code: Annotated[str, Field(max_length=Reaction.MAX_NAME_LENGTH)] | None = None
    reaction_type: Annotated[str, Field(max_length=30)] | None = None


class RemoveReactionParams(Params):
    emoji_name: Annotated[str, Field(max_length=Reaction.MAX_NAME_LENGTH)] | None = None
    emoji_code: Annotated[str, Field(max_length=Reaction.MAX_NAME_LENGTH)] | None = None
    reaction_type: Annotated[str, Field(max_length=30)] | None = None


class SubmessageParams(Params):
    message_id: Json[Id]
    msg_type: Annotated[str, Field(max_length=SubMessage.MAX_MSG_TYPE_LENGTH)]
    content: Annotated[str, Field(max_length=SubMessage.MAX_CONTENT_LENGTH)]


class TypingParams(Params):
    type: Literal["direct", "private", "stream", "channel"] = "direct"
    op: Literal["start", "stop"]
    to: Json[Annotated[list[Id], Field(max_length=MAX_IDS)]] | None = None
    stream_id: Json[Id] | None = None
    topic: str | None = None


class EditTypingParams(Params):
    op: Literal["start", "stop"]


class LegacyEditTypingParams(EditTypingParams):
    """POST /message_edit_typing, the endpoint's first name (Zulip feature level 351; 361 moved it)."""

    message_id: Json[Id]


class TopicsParams(Params):
    allow_empty_topic_name: Json[bool] = False


class UpdateMessageParams(Params):
    content: str | None = None
    topic: str | None = None
    subject: str | None = None  # the topic's older name
    stream_id: Json[Id] | None = None
    propagate_mode: Literal["change_one", "change_later", "change_all"] = "change_one"
    send_notification_to_old_thread: Json[bool] = False
    send_notification_to_new_thread: Json[bool] = True
    prev_content_sha256: str | None = None


class ReportMessageParams(Params):
    report_type: Literal["spam", "harassment", "inappropriate", "norms", "other"]
    description: Annotated[str, Field(max_length=1000)] = ""
