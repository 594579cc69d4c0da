"""Messages (/api/v1/messages...), their flags, muted users, alert words, deleting messages and topics."""

import hashlib
import json
from functools import cache

from django.http import HttpRequest, HttpResponse
from django.views import View
from rest_framework.request import Request

from apps.core.converters import ascii_int
from apps.core.errors import JsonableError
from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.messages.actions.alert_words import check_add_alert_words, do_remove_alert_words
from apps.messages.actions.delete import check_delete_message
from apps.messages.actions.delete_topic import check_delete_topic
from apps.messages.actions.edit import check_update_message
from apps.messages.actions.flags import (
    check_flag,
    check_mark_all_as_read,
    check_mark_topic_as_read,
    check_update_message_flags,
    do_mark_messages_read,
)
from apps.messages.actions.muted_users import check_mute_user, do_unmute_user
from apps.messages.actions.reactions import check_add_reaction, check_remove_reaction
from apps.messages.actions.report import check_report_message
from apps.messages.actions.send import check_send_message
from apps.messages.actions.submessages import check_add_submessage
from apps.messages.actions.typing import check_send_direct_typing, check_send_edit_typing, check_send_stream_typing
from apps.messages.edit_history import message_history, visible_edit_history
from apps.messages.emoji import code_to_names
from apps.messages.narrow import Term, parse_narrow
from apps.messages.search import add_search_fields, matches_narrow, matching_ids
from apps.messages.selectors import (
    access_message,
    alert_words_of,
    dm_users_by_recipient,
    first_unread_id,
    messages_around,
    messages_as_dicts,
    reactions_by_message,
    read_receipt_user_ids,
    submessages_by_message,
    topic_links_of,
    with_conversation,
)
from apps.messages.serializers import (
    MAX_MESSAGES_PER_REQUEST,
    AddAlertWordsParams,
    AddReactionParams,
    DeleteTopicParams,
    EditTypingParams,
    GetMessageParams,
    GetMessagesParams,
    LegacyEditTypingParams,
    MarkStreamParams,
    MarkTopicParams,
    MatchesNarrowParams,
    MessagesAnswer,
    RemoveAlertWordsParams,
    RemoveReactionParams,
    ReportMessageParams,
    SendMessageParams,
    SentMessageAnswer,
    SubmessageParams,
    TopicsParams,
    TypingParams,
    UpdateFlagsForNarrowParams,
    UpdateFlagsParams,
    UpdateMessageParams,
    client_name,
    flag_names,
    message_to_dict,
)
from apps.messages.topic_history import topic_history
from apps.subscriptions.selectors import access_stream_by_id
from apps.users.models import User
from apps.users.selectors import access_user_by_id

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


# What GET /messages' `message_ids` may not come with (Zulip's IncompatibleParametersError lists them).
RANGE_PARAMETERS = ("num_before", "num_after", "anchor", "message_ids", "include_anchor", "use_first_unread_anchor")


def _messages_of(user: User, ids: list[int], terms: list[Term], params: GetMessagesParams) -> list[dict]:
    """GET /messages' Message objects of these ids, with a search's match fields."""
    messages = messages_as_dicts(
        user,
        ids,
        apply_markdown=params.apply_markdown,
        client_gravatar=params.client_gravatar,
        allow_empty_topic_name=params.allow_empty_topic_name,
    )
    if any(term.operator == "search" for term in terms):
        add_search_fields(messages, terms)
    return messages


class MessagesView(ApiView):
    """GET /messages (a narrow around an anchor) and POST /messages (send)."""

    @uses_params(GetMessagesParams, returns=MessagesAnswer)
    def get(self, request: Request):
        params = parse_params(GetMessagesParams, request)
        user = request.user
        if params.message_ids is not None:
            return self._by_ids(request, params)
        if params.num_before + params.num_after > MAX_MESSAGES_PER_REQUEST:
            raise JsonableError(f"Too many messages requested (maximum {MAX_MESSAGES_PER_REQUEST}).")
        if params.num_before > 0 and params.num_after > 0 and not params.include_anchor:
            raise JsonableError("The anchor can only be excluded at an end of the range")
        terms = with_conversation(user, parse_narrow(params.narrow))
        anchor = resolve_anchor(user, params.anchor, params.use_first_unread_anchor, terms)
        ids, found_anchor, found_oldest, found_newest = messages_around(
            user, terms, anchor, params.num_before, params.num_after, include_anchor=params.include_anchor
        )
        messages = _messages_of(user, ids, terms, params)
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

    def _by_ids(self, request: Request, params: GetMessagesParams):
        """GET /messages with `message_ids`: those of them in the narrow the user may see; nothing is
        found around an anchor (the range's parameters may not come too, as in Zulip)."""
        if params.num_before or params.num_after or params.anchor is not None or params.use_first_unread_anchor:
            raise JsonableError(
                f"Unsupported parameter combination: {', '.join(RANGE_PARAMETERS)}",
                parameters=", ".join(RANGE_PARAMETERS),
            )
        user = request.user
        terms = with_conversation(user, parse_narrow(params.narrow))
        messages = _messages_of(user, sorted(matching_ids(user, params.message_ids, terms)), terms, params)
        ends = {"found_anchor": False, "found_oldest": False, "found_newest": False, "history_limited": False}
        return json_success(request, {"messages": messages, **ends})

    @uses_params(SendMessageParams, returns=SentMessageAnswer)
    def post(self, request: Request):
        params = parse_params(SendMessageParams, request)
        topic = params.topic if params.topic is not None else params.subject
        message = check_send_message(
            request.user,
            kind=params.type,
            to=params.to,
            topic=topic,
            content=params.content,
            client=client_name(request.META.get("HTTP_USER_AGENT", "")),
            read_by_sender=params.read_by_sender,
            local_id=(params.queue_id, params.local_id) if params.queue_id and params.local_id else None,
            acting_user=request.user,
        )
        return json_success(request, {"id": message.id})


class MessageView(ApiView):
    """GET, PATCH (edit, move) and DELETE /messages/{message_id}."""

    @uses_params(GetMessageParams)
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
            topic_links=topic_links_of(message),
            reactions=reactions_by_message([message.id]).get(message.id, ()),
            submessages=submessages_by_message([message.id]).get(message.id, ()),
            edit_history=visible_edit_history(message, request.user.realm.message_edit_history_visibility_policy),
        )
        return json_success(request, {"raw_content": message.content, "message": shape})

    @uses_params(UpdateMessageParams)
    def patch(self, request: Request, message_id: int):
        params = parse_params(UpdateMessageParams, request)
        message, _ = access_message(request.user, message_id)
        check_update_message(
            message,
            content=params.content,
            topic=params.topic if params.topic is not None else params.subject,
            stream_id=params.stream_id,
            propagate_mode=params.propagate_mode,
            prev_content_sha256=params.prev_content_sha256,
            send_notification_to_old_thread=params.send_notification_to_old_thread,
            send_notification_to_new_thread=params.send_notification_to_new_thread,
            acting_user=request.user,
        )
        return json_success(request, {"detached_uploads": []})

    def delete(self, request: Request, message_id: int):
        message, _ = access_message(request.user, message_id)
        check_delete_message(message, acting_user=request.user)
        return json_success(request)


class ReadReceiptsView(ApiView):
    """GET /messages/{message_id}/read_receipts: who has read a message the user may see, where the
    organization enables read receipts (selectors.read_receipt_user_ids)."""

    def get(self, request: Request, message_id: int):
        message, _ = access_message(request.user, message_id)
        if not request.user.realm.enable_read_receipts:
            raise JsonableError("Read receipts are disabled in this organization.")
        return json_success(request, {"user_ids": read_receipt_user_ids(request.user, message)})


class ReportMessageView(ApiView):
    """POST /messages/{message_id}/report: a report of a message the user may see, to the
    organization's moderation request channel (actions.report)."""

    @uses_params(ReportMessageParams)
    def post(self, request: Request, message_id: int):
        params = parse_params(ReportMessageParams, request)
        check_report_message(request.user, message_id, params.report_type, params.description)
        return json_success(request)


class MessageHistoryView(ApiView):
    """GET /messages/{message_id}/history: the message's versions, oldest first."""

    @uses_params(GetMessageParams)
    def get(self, request: Request, message_id: int):
        params = parse_params(GetMessageParams, request)
        message, _ = access_message(request.user, message_id)
        history = message_history(message, allow_empty_topic_name=params.allow_empty_topic_name)
        return json_success(request, {"message_history": history})


@cache
def _emoji_data() -> tuple[bytes, str]:
    body = json.dumps({"code_to_names": code_to_names()}, sort_keys=True).encode()
    return body, hashlib.sha256(body).hexdigest()[:32]


class EmojiDataView(View):
    """The server's Unicode emoji and their names (`server_emoji_data_url` in POST /register), as
    Zulip serves them: no authentication, the same for every organization, cacheable."""

    def get(self, request: HttpRequest) -> HttpResponse:
        body, digest = _emoji_data()
        if request.headers.get("If-None-Match") == f'"{digest}"':
            response = HttpResponse(status=304)
        else:
            response = HttpResponse(body, content_type="application/json")
        response["ETag"] = f'"{digest}"'
        response["Cache-Control"] = "public, max-age=86400"
        return response


class ChannelTopicsView(ApiView):
    """GET /users/me/{stream_id}/topics: the channel's topics the user may see, latest first."""

    @uses_params(TopicsParams)
    def get(self, request: Request, stream_id: int):
        params = parse_params(TopicsParams, request)
        stream, _ = access_stream_by_id(request.user, stream_id)
        topics = topic_history(request.user, stream, allow_empty_topic_name=params.allow_empty_topic_name)
        return json_success(request, {"topics": topics})


class TypingView(ApiView):
    """POST /typing: the user is composing (op "start") or stopped (op "stop")."""

    @uses_params(TypingParams)
    def post(self, request: Request):
        params = parse_params(TypingParams, request)
        if params.type in ("stream", "channel"):
            if params.stream_id is None:
                raise JsonableError("Missing stream_id")
            if params.topic is None:
                raise JsonableError("Missing topic")
            check_send_stream_typing(request.user, stream_id=params.stream_id, topic=params.topic, op=params.op)
        else:
            if params.to is None:
                raise JsonableError("Missing 'to' argument")
            check_send_direct_typing(request.user, user_ids=params.to, op=params.op)
        return json_success(request)


def _edit_typing(request: Request, message_id: int, op: str):
    message, _ = access_message(request.user, message_id)
    check_send_edit_typing(request.user, message, op=op)
    return json_success(request)


class EditTypingView(ApiView):
    """POST /messages/{message_id}/typing: the user is editing the message (op "start") or stopped."""

    @uses_params(EditTypingParams)
    def post(self, request: Request, message_id: int):
        return _edit_typing(request, message_id, parse_params(EditTypingParams, request).op)


class LegacyEditTypingView(ApiView):
    """POST /message_edit_typing: the same, the message named by `message_id`."""

    @uses_params(LegacyEditTypingParams)
    def post(self, request: Request):
        params = parse_params(LegacyEditTypingParams, request)
        return _edit_typing(request, params.message_id, params.op)


class SubmessageView(ApiView):
    """POST /submessage: a vote, option or task of a poll or to-do list (or any submessage)."""

    @uses_params(SubmessageParams)
    def post(self, request: Request):
        params = parse_params(SubmessageParams, request)
        message, _ = access_message(request.user, params.message_id)
        check_add_submessage(message, msg_type=params.msg_type, content=params.content, acting_user=request.user)
        return json_success(request)


class ReactionsView(ApiView):
    """POST and DELETE /messages/{message_id}/reactions: the user's emoji reaction."""

    @uses_params(AddReactionParams)
    def post(self, request: Request, message_id: int):
        return self._change(request, message_id, AddReactionParams, check_add_reaction)

    @uses_params(RemoveReactionParams)
    def delete(self, request: Request, message_id: int):
        return self._change(request, message_id, RemoveReactionParams, check_remove_reaction)

    def _change(self, request: Request, message_id: int, params_class, action):
        params = parse_params(params_class, request)
        message, _ = access_message(request.user, message_id)
        action(message, **params.model_dump(), acting_user=request.user)
        return json_success(request)


class MessageFlagsView(ApiView):
    """POST /messages/flags."""

    @uses_params(UpdateFlagsParams)
    def post(self, request: Request):
        params = parse_params(UpdateFlagsParams, request)
        check_update_message_flags(
            request.user, op=params.op, flag=params.flag, message_ids=params.messages, acting_user=request.user
        )
        return json_success(request, {"messages": params.messages})


class MessageFlagsForNarrowView(ApiView):
    """POST /messages/flags/narrow: a flag on the messages of a narrow around an anchor."""

    @uses_params(UpdateFlagsForNarrowParams)
    def post(self, request: Request):
        params = parse_params(UpdateFlagsForNarrowParams, request)
        user = request.user
        check_flag(params.flag)
        if params.num_before + params.num_after > MAX_MESSAGES_PER_REQUEST:
            raise JsonableError(f"Too many messages requested (maximum {MAX_MESSAGES_PER_REQUEST}).")
        terms = with_conversation(user, parse_narrow(params.narrow))
        anchor = resolve_anchor(user, params.anchor, False, terms)
        ids, _, found_oldest, found_newest = messages_around(
            user, terms, anchor, params.num_before, params.num_after, include_anchor=params.include_anchor
        )
        changed = (
            check_update_message_flags(user, op=params.op, flag=params.flag, message_ids=ids, acting_user=user)
            if ids
            else []
        )
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
        complete = check_mark_all_as_read(request.user, acting_user=request.user)
        return json_success(request, {"complete": complete})


class MarkStreamAsReadView(ApiView):
    @uses_params(MarkStreamParams)
    def post(self, request: Request):
        params = parse_params(MarkStreamParams, request)
        stream, _ = access_stream_by_id(request.user, params.stream_id)
        do_mark_messages_read(request.user, stream=stream, acting_user=request.user)
        return json_success(request)


class MarkTopicAsReadView(ApiView):
    @uses_params(MarkTopicParams)
    def post(self, request: Request):
        params = parse_params(MarkTopicParams, request)
        stream, _ = access_stream_by_id(request.user, params.stream_id)
        check_mark_topic_as_read(request.user, stream, params.topic_name, acting_user=request.user)
        return json_success(request)


class MatchesNarrowView(ApiView):
    """GET /messages/matches_narrow: which of these messages match, with search hits highlighted."""

    @uses_params(MatchesNarrowParams)
    def get(self, request: Request):
        params = parse_params(MatchesNarrowParams, request)
        terms = with_conversation(request.user, parse_narrow(params.narrow))
        return json_success(request, {"messages": matches_narrow(request.user, params.msg_ids, terms)})


class MutedUserView(ApiView):
    """POST and DELETE /users/me/muted_users/{muted_user_id}."""

    def post(self, request: Request, muted_user_id: int):
        muted_user = access_user_by_id(request.user, muted_user_id, allow_deactivated=True, allow_bots=True)
        check_mute_user(request.user, muted_user, acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, muted_user_id: int):
        muted_user = access_user_by_id(request.user, muted_user_id, allow_deactivated=True, allow_bots=True)
        do_unmute_user(request.user, muted_user, acting_user=request.user)
        return json_success(request)


class AlertWordsView(ApiView):
    """GET, POST and DELETE /users/me/alert_words: each answers the user's words."""

    def get(self, request: Request):
        return json_success(request, {"alert_words": alert_words_of(request.user)})

    @uses_params(AddAlertWordsParams)
    def post(self, request: Request):
        params = parse_params(AddAlertWordsParams, request)
        words = check_add_alert_words(request.user, params.alert_words, acting_user=request.user)
        return json_success(request, {"alert_words": words})

    @uses_params(RemoveAlertWordsParams)
    def delete(self, request: Request):
        params = parse_params(RemoveAlertWordsParams, request)
        words = do_remove_alert_words(request.user, params.alert_words, acting_user=request.user)
        return json_success(request, {"alert_words": words})


class DeleteTopicView(ApiView):
    """POST /streams/{stream_id}/delete_topic: administrators."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(DeleteTopicParams)
    def post(self, request: Request, stream_id: int):
        params = parse_params(DeleteTopicParams, request)
        stream, _ = access_stream_by_id(request.user, stream_id)
        complete = check_delete_topic(stream, params.topic_name, acting_user=request.user)
        return json_success(request, {"complete": complete})
