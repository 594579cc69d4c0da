"""Test notifications, sent at once (a user asking for one waits for the answer); every other
notification is sent by the task worker (apps/push/notifications.py)."""

import time

from apps.core.errors import JsonableError
from apps.core.tasks import TemporaryFailure
from apps.push.actions import do_remove_refused
from apps.push.backends import ServiceRefused, push_backend
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import test_notification
from apps.users.models import User


class PushServiceError(JsonableError):
    http_status_code = 502


def send_test_notification(user: User, tokens: list[PushDeviceToken], devices: list[Device] = ()) -> int:
    """Sends the user's test notification to these tokens and devices of theirs; tokens the push
    service refuses are removed. Returns how many it reached."""
    try:
        result = push_backend().send(user, tokens, list(devices), test_notification(user, int(time.time())))
    except (TemporaryFailure, ServiceRefused) as exc:
        raise PushServiceError(f"The push notification service could not be reached: {exc}") from exc
    do_remove_refused(result)
    return result.sent
