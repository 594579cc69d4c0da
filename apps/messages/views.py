"""Messages (/api/v1/messages...), their flags, muted users and topic deletion."""

from django.utils.html import escape
from rest_framework.request import Request

from apps.core.converters import ascii_int
from apps.core.errors import JsonableError
from apps.core.params import parse_params
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.messages import actions
from apps.messages.models import Message, UserMessage
from apps.messages.narrow import (
    NarrowBuilder,
    Term,
    needs_user_messages,
    parse_narrow,
    searched_words,
    with_flag_columns,
)
from apps.messages.rendering import highlight
from apps.messages.selectors import (
    access_message,
    dm_users_by_recipient,
    first_unread_id,
    ids_around,
    messages_as_dicts,
    narrow_query,
    visible_message_flags,
)
from apps.messages.serializers import (
    MAX_MESSAGES_PER_REQUEST,
    DeleteTopicParams,
    GetMessageParams,
    GetMessagesParams,
    MarkStreamParams,
    MarkTopicParams,
    MatchesNarrowParams,
    SendMessageParams,
    UpdateFlagsForNarrowParams,
    UpdateFlagsParams,
    flag_names,
    message_to_dict,
)
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME
from apps.users.models import User

# Larger than any message id: the anchor "newest" (Zulip's LARGER_THAN_MAX_MESSAGE_ID).
LARGER_THAN_ANY_ID = 10_000_000_000_000_000


def resolve_anchor(user: User, anchor: str | None, use_first_unread: bool, terms: list[Term]) -> int:
    if use_first_unread:  # the legacy spelling of anchor=first_unread, which it overrides (as in Zulip)
        anchor = "first_unread"
    if anchor is None:
        raise JsonableError("Missing 'anchor' argument.")
    if anchor == "newest":
        return LARGER_THAN_ANY_ID
    if anchor == "oldest":
        return 0
    if anchor == "first_unread":
        first = first_unread_id(user, terms)
        return first if first is not None else LARGER_THAN_ANY_ID
    try:
        value = ascii_int(anchor)
    except ValueError:
        raise JsonableError("Invalid anchor") from None
    return min(max(value, 0), LARGER_THAN_ANY_ID)  # out-of-range anchors are clamped, as in Zulip


def messages_around(user: User, terms, anchor: int, num_before: int, num_after: int, *, include_anchor: bool):
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


class MessagesView(ApiView):
    """GET /messages (a narrow around an anchor) and POST /messages (send)."""

    def get(self, request: Request):
        params = parse_params(GetMessagesParams, request)
        user = request.user
        if params.num_before + params.num_after > MAX_MESSAGES_PER_REQUEST:
            raise JsonableError(f"Too many messages requested (maximum {MAX_MESSAGES_PER_REQUEST}).")
        if params.num_before > 0 and params.num_after > 0 and not params.include_anchor:
            raise JsonableError("The anchor can only be excluded at an end of the range")
        terms = parse_narrow(params.narrow)
        anchor = resolve_anchor(user, params.anchor, params.use_first_unread_anchor, terms)
        ids, found_anchor, found_oldest, found_newest = messages_around(
            user, terms, anchor, params.num_before, params.num_after, include_anchor=params.include_anchor
        )
        messages = messages_as_dicts(
            user,
            ids,
            apply_markdown=params.apply_markdown,
            client_gravatar=params.client_gravatar,
            allow_empty_topic_name=params.allow_empty_topic_name,
        )
        if any(term.operator == "search" for term in terms):
            add_search_fields(messages, terms)
        return json_success(
            request,
            {
                "messages": messages,
                "anchor": anchor,
                "found_anchor": found_anchor,
                "found_oldest": found_oldest,
                "found_newest": found_newest,
                "history_limited": False,
            },
        )

    def post(self, request: Request):
        params = parse_params(SendMessageParams, request)
        topic = params.topic if params.topic is not None else params.subject
        message = actions.check_send_message(
            request.user,
            kind=params.type,
            to=params.to,
            topic=topic,
            content=params.content,
            client=actions.client_name(request.META.get("HTTP_USER_AGENT", "")),
            read_by_sender=params.read_by_sender,
            local_id=(params.queue_id, params.local_id) if params.queue_id and params.local_id else None,
        )
        return json_success(request, {"id": message.id})


class MessageView(ApiView):
    """GET /messages/{message_id}."""

    def get(self, request: Request, message_id: int):
        params = parse_params(GetMessageParams, request)
        message, flags = access_message(request.user, message_id)
        people = dm_users_by_recipient([message]) if message.stream_id is None else {}
        shape = message_to_dict(
            message,
            flags=flag_names(flags),
            dm_users=people.get((message.recipient_id, message.sender_id)),
            apply_markdown=params.apply_markdown,
            allow_empty_topic_name=params.allow_empty_topic_name,
        )
        return json_success(request, {"raw_content": message.content, "message": shape})


class MessageFlagsView(ApiView):
    """POST /messages/flags."""

    def post(self, request: Request):
        params = parse_params(UpdateFlagsParams, request)
        actions.do_update_message_flags(request.user, params.op, params.flag, params.messages)
        return json_success(request, {"messages": params.messages})


class MessageFlagsForNarrowView(ApiView):
    """POST /messages/flags/narrow: a flag on the messages of a narrow around an anchor."""

    def post(self, request: Request):
        params = parse_params(UpdateFlagsForNarrowParams, request)
        user = request.user
        actions.check_flag(params.flag)
        if params.num_before + params.num_after > MAX_MESSAGES_PER_REQUEST:
            raise JsonableError(f"Too many messages requested (maximum {MAX_MESSAGES_PER_REQUEST}).")
        terms = parse_narrow(params.narrow)
        anchor = resolve_anchor(user, params.anchor, False, terms)
        ids, _, found_oldest, found_newest = messages_around(
            user, terms, anchor, params.num_before, params.num_after, include_anchor=params.include_anchor
        )
        changed = actions.do_update_message_flags(user, params.op, params.flag, ids) if ids else []
        return json_success(
            request,
            {
                "processed_count": len(ids),
                "updated_count": len(changed),
                "first_processed_id": ids[0] if ids else None,
                "last_processed_id": ids[-1] if ids else None,
                "found_oldest": found_oldest,
                "found_newest": found_newest,
                "ignored_because_not_subscribed_channels": [],
            },
        )


class MarkAllAsReadView(ApiView):
    def post(self, request: Request):
        actions.do_mark_messages_read(request.user, everything=True)
        return json_success(request, {"complete": True})


class MarkStreamAsReadView(ApiView):
    def post(self, request: Request):
        params = parse_params(MarkStreamParams, request)
        stream = actions.access_stream_by_id(request.user, params.stream_id)[0]
        actions.do_mark_messages_read(request.user, [Term("channel", stream.id)])
        return json_success(request)


class MarkTopicAsReadView(ApiView):
    def post(self, request: Request):
        params = parse_params(MarkTopicParams, request)
        stream = actions.access_stream_by_id(request.user, params.stream_id)[0]
        actions.do_mark_messages_read(request.user, [Term("channel", stream.id), Term("topic", params.topic_name)])
        return json_success(request)


class MatchesNarrowView(ApiView):
    """GET /messages/matches_narrow: which of these messages match, with search hits highlighted."""

    def get(self, request: Request):
        params = parse_params(MatchesNarrowParams, request)
        user = request.user
        terms = parse_narrow(params.narrow)
        visible = visible_message_flags(user, params.msg_ids)
        if needs_user_messages(terms):
            query = with_flag_columns(UserMessage.objects.filter(user=user, message_id__in=visible))
            builder = NarrowBuilder(user, on_user_messages=True)
            matching = set(builder.apply(query, terms).values_list("message_id", flat=True))
        else:
            builder = NarrowBuilder(user, on_user_messages=False)
            matching = set(builder.apply(Message.objects.filter(id__in=visible), terms).values_list("id", flat=True))
        words = searched_words(terms, highlighted_only=True)
        result = {}
        for message in Message.objects.filter(id__in=matching).order_by("id"):
            topic = message.topic
            if message.stream_id is not None and topic == "":
                topic = EMPTY_TOPIC_DISPLAY_NAME
            result[str(message.id)] = {
                "match_content": highlight(message.rendered_content, words),
                "match_subject": highlight(escape(topic), words),
            }
        return json_success(request, {"messages": result})


def add_search_fields(messages: list[dict], terms: list[Term]) -> None:
    """Zulip's `match_content` and `match_subject` on each message of a search narrow (one query):
    the rendered content and the HTML-escaped topic, search hits highlighted."""
    words = searched_words(terms, highlighted_only=True)
    rows = Message.objects.filter(id__in=[m["id"] for m in messages]).values_list("id", "rendered_content", "topic")
    found = {message_id: (html, topic) for message_id, html, topic in rows}
    for message in messages:
        html, topic = found[message["id"]]
        if message["type"] == "stream" and topic == "":
            topic = EMPTY_TOPIC_DISPLAY_NAME
        message["match_content"] = highlight(html, words)
        message["match_subject"] = highlight(escape(topic), words)


class MutedUserView(ApiView):
    """POST and DELETE /users/me/muted_users/{muted_user_id}."""

    def post(self, request: Request, muted_user_id: int):
        actions.check_mute_user(request.user, muted_user_id)
        return json_success(request)

    def delete(self, request: Request, muted_user_id: int):
        actions.check_unmute_user(request.user, muted_user_id)
        return json_success(request)


class DeleteTopicView(ApiView):
    """POST /streams/{stream_id}/delete_topic."""

    def post(self, request: Request, stream_id: int):
        params = parse_params(DeleteTopicParams, request)
        complete = actions.check_delete_topic(request.user, stream_id, params.topic_name)
        return json_success(request, {"complete": complete})
