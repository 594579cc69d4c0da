"""Messages: reading them (GET /messages, one message, its history and read receipts, which of them
match a narrow), sending, editing, deleting, reporting and previewing them."""

from rest_framework.request import Request

from apps.core.converters import ascii_int
from apps.core.errors import JsonableError
from apps.core.params import parse_params, uses_params
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.messages.actions.delete import check_delete_message
from apps.messages.actions.edit import check_update_message
from apps.messages.actions.report import check_report_message
from apps.messages.actions.send import check_send_message, preview_content
from apps.messages.edit_history import message_history, visible_edit_history
from apps.messages.narrow import Term, parse_narrow
from apps.messages.search import add_search_fields, matches_narrow, matching_ids
from apps.messages.selectors import (
    access_message,
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
    GetMessageParams,
    GetMessagesParams,
    MatchesNarrowParams,
    MessagesAnswer,
    RenderedAnswer,
    RenderMessageParams,
    ReportMessageParams,
    SendMessageParams,
    SentMessageAnswer,
    UpdateMessageParams,
    client_name,
    flag_names,
    message_to_dict,
)
from apps.users.access import without_unknown_senders
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
    """GET /messages (a narrow around an anchor) and POST /messages (send, the one thing an incoming
    webhook bot's key may do)."""

    incoming_webhook_bot_methods = frozenset({"post"})

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
            client=client_name(request),
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
            edit_history=visible_edit_history(
                message,
                request.user.realm.message_edit_history_visibility_policy,
                allow_empty_topic_name=params.allow_empty_topic_name,
            ),
        )
        [shape] = without_unknown_senders(request.user, [shape])
        return json_success(request, {"raw_content": message.content, "message": shape})

    @uses_params(UpdateMessageParams)
    def patch(self, request: Request, message_id: int):
        params = parse_params(UpdateMessageParams, request)
        message, _ = access_message(request.user, message_id, changing=True)
        detached_uploads = check_update_message(
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
        return json_success(request, {"detached_uploads": detached_uploads})

    def delete(self, request: Request, message_id: int):
        message, _ = access_message(request.user, message_id, changing=True)
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


class RenderMessageView(ApiView):
    """POST /messages/render: the HTML a message's content would have (a client's preview)."""

    @uses_params(RenderMessageParams, returns=RenderedAnswer)
    def post(self, request: Request):
        params = parse_params(RenderMessageParams, request)
        return json_success(request, {"rendered": preview_content(request.user, params.content)})


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


class MatchesNarrowView(ApiView):
    """GET /messages/matches_narrow: which of these messages match, with search hits highlighted."""

    @uses_params(MatchesNarrowParams)
    def get(self, request: Request):
        params = parse_params(MatchesNarrowParams, request)
        terms = with_conversation(request.user, parse_narrow(params.narrow))
        return json_success(request, {"messages": matches_narrow(request.user, params.msg_ids, terms)})
