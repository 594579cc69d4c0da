"""Scheduled messages (/api/v1/scheduled_messages...) and reminders (/api/v1/reminders...): a user's
own, for every user, bots included."""

from rest_framework.request import Request

from apps.core.params import parse_params, uses_params
from apps.core.responses import json_success
from apps.core.views import ApiView
from apps.messages.serializers import client_name
from apps.scheduled_messages.actions import (
    check_edit_scheduled_message,
    check_schedule_message,
    check_schedule_reminder,
    do_delete_reminder,
    do_delete_scheduled_message,
)
from apps.scheduled_messages.selectors import unsent_reminders, unsent_scheduled_messages
from apps.scheduled_messages.serializers import (
    CreateReminderParams,
    CreateScheduledMessageParams,
    UpdateScheduledMessageParams,
)


def _client(request: Request) -> str:
    return client_name(request)


class ScheduledMessagesView(ApiView):
    """GET /scheduled_messages: the user's unsent ones, soonest first; POST: schedule one."""

    def get(self, request: Request):
        return json_success(request, {"scheduled_messages": unsent_scheduled_messages(request.user)})

    @uses_params(CreateScheduledMessageParams)
    def post(self, request: Request):
        params = parse_params(CreateScheduledMessageParams, request)
        scheduled = check_schedule_message(
            request.user,
            kind=params.type,
            to=params.to,
            topic=params.topic,
            content=params.content,
            scheduled_delivery_timestamp=params.scheduled_delivery_timestamp,
            read_by_sender=params.read_by_sender,
            client=_client(request),
            acting_user=request.user,
        )
        return json_success(request, {"scheduled_message_id": scheduled.id})


class ScheduledMessageView(ApiView):
    """PATCH and DELETE /scheduled_messages/{scheduled_message_id}."""

    @uses_params(UpdateScheduledMessageParams)
    def patch(self, request: Request, scheduled_message_id: int):
        params = parse_params(UpdateScheduledMessageParams, request)
        check_edit_scheduled_message(
            request.user,
            scheduled_message_id,
            kind=params.type,
            to=params.to,
            topic=params.topic,
            content=params.content,
            scheduled_delivery_timestamp=params.scheduled_delivery_timestamp,
            client=_client(request),
            acting_user=request.user,
        )
        return json_success(request)

    def delete(self, request: Request, scheduled_message_id: int):
        do_delete_scheduled_message(request.user, scheduled_message_id, acting_user=request.user)
        return json_success(request)


class RemindersView(ApiView):
    """GET /reminders: the user's unsent ones (failed ones too), soonest first; POST: set one."""

    def get(self, request: Request):
        return json_success(request, {"reminders": unsent_reminders(request.user)})

    @uses_params(CreateReminderParams)
    def post(self, request: Request):
        params = parse_params(CreateReminderParams, request)
        reminder = check_schedule_reminder(
            request.user,
            params.message_id,
            scheduled_delivery_timestamp=params.scheduled_delivery_timestamp,
            note=params.note,
            client=_client(request),
            acting_user=request.user,
        )
        return json_success(request, {"reminder_id": reminder.id})


class ReminderView(ApiView):
    """DELETE /reminders/{reminder_id}."""

    def delete(self, request: Request, reminder_id: int):
        do_delete_reminder(request.user, reminder_id, acting_user=request.user)
        return json_success(request)
