"""What the tests of scheduled messages and reminders share: a time to schedule for, refusals that
must change nothing, and making one due."""

import time
from datetime import timedelta

from django.utils import timezone

from apps.events.models import OutboxEvent
from apps.messages.models import Message
from apps.scheduled_messages.models import ScheduledMessage
from tests.api import api_for, assert_error


def in_an_hour() -> int:
    return int(time.time()) + 3600


def db_state() -> dict:
    return {
        "scheduled": list(ScheduledMessage.objects.order_by("id").values()),
        "messages": list(Message.objects.order_by("id").values_list("id", flat=True)),
        "events": OutboxEvent.objects.count(),
    }


def refused(user, method: str, path: str, params: dict, msg: str, status: int = 400, code: str = "BAD_REQUEST"):
    before = db_state()
    assert_error(api_for(user).request(method, path, params), status, code, msg)
    assert db_state() == before


def make_due(scheduled_id: int, ago: timedelta = timedelta(seconds=1)) -> None:
    ScheduledMessage.objects.filter(id=scheduled_id).update(scheduled_timestamp=timezone.now() - ago)
