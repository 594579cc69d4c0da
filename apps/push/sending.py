"""Sending push notifications through the configured backend (apps/push/backends.py)."""

import time

from apps.push.actions import do_remove_push_device_tokens
from apps.push.backends import push_backend
from apps.push.models import PushDeviceToken
from apps.users.models import User


def test_notification_payload(user: User) -> dict:
    """What a test notification carries (Zulip's `test` event): who it is for, on which server."""
    realm = user.realm
    return {
        "event": "test",
        "realm_id": realm.id,
        "realm_url": realm.url,
        "realm_name": realm.name,
        "user_id": user.id,
        "time": int(time.time()),
    }


def send_test_notification(user: User, tokens: list[PushDeviceToken]) -> int:
    """Sends the user's test notification to these tokens of theirs; tokens the push service
    refuses are removed. Returns how many it reached."""
    result = push_backend().send(tokens, test_notification_payload(user))
    if result.refused:
        do_remove_push_device_tokens(result.refused)
    return result.sent
