"""The user's own reading state: message flags, marking as read, muted users, alert words."""

from rest_framework.request import Request

from apps.core.errors import JsonableError
from apps.core.params import parse_params, uses_params
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.messages.actions.alert_words import check_add_alert_words, do_remove_alert_words
from apps.messages.actions.flags import (
    FlagsChange,
    check_flag,
    check_mark_all_as_read,
    check_mark_topic_as_read,
    check_update_message_flags,
    do_mark_messages_read,
)
from apps.messages.actions.muted_users import check_mute_user, do_unmute_user
from apps.messages.narrow import parse_narrow
from apps.messages.selectors import (
    alert_words_of,
    messages_around,
    with_conversation,
)
from apps.messages.serializers import (
    MAX_MESSAGES_PER_REQUEST,
    AddAlertWordsParams,
    MarkStreamParams,
    MarkTopicParams,
    RemoveAlertWordsParams,
    UpdateFlagsForNarrowParams,
    UpdateFlagsParams,
)
from apps.messages.views.messages import resolve_anchor
from apps.subscriptions.selectors import access_stream_by_id
from apps.users.access import access_user_by_id


class MessageFlagsView(ApiView):
    """POST /messages/flags."""

    @uses_params(UpdateFlagsParams)
    def post(self, request: Request):
        params = parse_params(UpdateFlagsParams, request)
        change = check_update_message_flags(
            request.user, op=params.op, flag=params.flag, message_ids=params.messages, acting_user=request.user
        )
        answer = {"messages": params.messages, "ignored_because_not_subscribed_channels": change.ignored_channel_ids}
        return json_success(request, answer)


class MessageFlagsForNarrowView(ApiView):
    """POST /messages/flags/narrow: a flag on the messages of a narrow around an anchor."""

    @uses_params(UpdateFlagsForNarrowParams)
    def post(self, request: Request):
        params = parse_params(UpdateFlagsForNarrowParams, request)
        user = request.user
        check_flag(params.flag)
        if params.num_before > 0 and params.num_after > 0 and not params.include_anchor:
            raise JsonableError("The anchor can only be excluded at an end of the range")
        # As Zulip's update_message_flags_for_narrow: a larger range is shortened, not refused.
        num_before = max(0, min(params.num_before, MAX_MESSAGES_PER_REQUEST - params.num_after))
        num_after = max(0, min(params.num_after, MAX_MESSAGES_PER_REQUEST - num_before))
        terms = with_conversation(user, parse_narrow(params.narrow))
        anchor = resolve_anchor(user, params.anchor, False, terms)
        ids, _, found_oldest, found_newest = messages_around(
            user, terms, anchor, num_before, num_after, include_anchor=params.include_anchor
        )
        change = (
            check_update_message_flags(user, op=params.op, flag=params.flag, message_ids=ids, acting_user=user)
            if ids
            else FlagsChange([], [])
        )
        return json_success(
            request,
            {
                "processed_count": len(ids),
                "updated_count": len(change.changed),
                "first_processed_id": ids[0] if ids else None,
                "last_processed_id": ids[-1] if ids else None,
                "found_oldest": found_oldest,
                "found_newest": found_newest,
                "ignored_because_not_subscribed_channels": change.ignored_channel_ids,
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


class MutedUserView(ApiView):
    """POST and DELETE /users/me/muted_users/{muted_user_id}."""

    def post(self, request: Request, muted_user_id: int):
        muted_user = access_user_by_id(
            request.user, muted_user_id, allow_deactivated=True, allow_bots=True, allow_system_bots=False
        )
        check_mute_user(request.user, muted_user, acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, muted_user_id: int):
        muted_user = access_user_by_id(
            request.user, muted_user_id, allow_deactivated=True, allow_bots=True, allow_system_bots=False
        )
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
