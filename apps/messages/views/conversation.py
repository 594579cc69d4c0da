"""Around messages: reactions and the server's emoji names, widgets' submessages, typing
notifications, a channel's topics and deleting a topic."""

import hashlib
import json
from functools import cache

from django.http import HttpRequest, HttpResponse
from django.views import View
from rest_framework.request import Request

from apps.core.errors import JsonableError
from apps.core.params import parse_params, uses_params
from apps.core.permissions import IsAuthenticatedUser, IsOrganizationAdministrator
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.messages.actions.delete_topic import check_delete_topic
from apps.messages.actions.reactions import check_add_reaction, check_remove_reaction
from apps.messages.actions.submessages import check_add_submessage
from apps.messages.actions.typing import check_send_direct_typing, check_send_edit_typing, check_send_stream_typing
from apps.messages.emoji import code_to_names
from apps.messages.selectors import (
    access_message,
)
from apps.messages.serializers import (
    AddReactionParams,
    DeleteTopicParams,
    EditTypingParams,
    LegacyEditTypingParams,
    RemoveReactionParams,
    SubmessageParams,
    TopicsParams,
    TypingParams,
)
from apps.messages.topic_history import topic_history
from apps.subscriptions.selectors import access_stream_by_id


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
        message, _ = access_message(request.user, message_id, changing=True)
        action(message, **params.model_dump(), acting_user=request.user)
        return json_success(request)


class SubmessageView(ApiView):
    """POST /submessage: a vote, option or task of a poll or to-do list (or any submessage)."""

    @uses_params(SubmessageParams)
    def post(self, request: Request):
        params = parse_params(SubmessageParams, request)
        message, _ = access_message(request.user, params.message_id, changing=True)
        check_add_submessage(message, msg_type=params.msg_type, content=params.content, acting_user=request.user)
        return json_success(request)


class TypingView(ApiView):
    """POST /typing: the user is composing (op "start") or stopped (op "stop")."""

    @uses_params(TypingParams)
    def post(self, request: Request):
        params = parse_params(TypingParams, request)
        if params.type in ("stream", "channel"):
            if params.stream_id is None:
                raise JsonableError("Missing 'stream_id' argument")
            if params.topic is None:
                raise JsonableError("Missing topic")
            check_send_stream_typing(request.user, stream_id=params.stream_id, topic=params.topic, op=params.op)
        else:
            if params.to is None:
                raise JsonableError("Missing 'to' argument")
            check_send_direct_typing(request.user, user_ids=params.to, op=params.op)
        return json_success(request)


def _edit_typing(request: Request, message_id: int, op: str):
    message, _ = access_message(request.user, message_id, changing=True)
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


class ChannelTopicsView(ApiView):
    """GET /users/me/{stream_id}/topics: the channel's topics the user may see, latest first."""

    @uses_params(TopicsParams)
    def get(self, request: Request, stream_id: int):
        params = parse_params(TopicsParams, request)
        stream, _ = access_stream_by_id(request.user, stream_id)
        topics = topic_history(request.user, stream, allow_empty_topic_name=params.allow_empty_topic_name)
        return json_success(request, {"topics": topics})


class DeleteTopicView(ApiView):
    """POST /streams/{stream_id}/delete_topic: administrators."""

    permission_classes = [IsAuthenticatedUser, IsOrganizationAdministrator]

    @uses_params(DeleteTopicParams)
    def post(self, request: Request, stream_id: int):
        params = parse_params(DeleteTopicParams, request)
        stream, _ = access_stream_by_id(request.user, stream_id)
        complete = check_delete_topic(stream, params.topic_name, acting_user=request.user)
        return json_success(request, {"complete": complete})
