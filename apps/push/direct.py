"""The direct backend (PUSH_BACKEND=apps.push.direct.DirectBackend), for an operator who builds their
own mobile apps: APNs tokens and devices go to APNs (apps/push/apns.py) when APNS_TOKEN_KEY_FILE is
set, FCM ones to FCM (apps/push/fcm.py) when ANDROID_FCM_CREDENTIALS_PATH is set; `manage.py check`
requires one of them at least, and each that is set must work.

Devices registered for end-to-end encrypted notifications are reached when their app sealed its
registration for a key whose private half is in PUSH_REGISTRATION_PRIVATE_KEYS (apps/push/e2ee.py):
an app built with Zulip's bouncer key can only be reached through Zulip's bouncer.
"""

from django.conf import settings

from apps.core.tasks import TemporaryFailure
from apps.push.apns import APNsBackend
from apps.push.backends import OneServiceBackend, SendResult, opened_devices, settled, warn_skipped
from apps.push.fcm import FCMBackend
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import Notification
from apps.users.models import User


class DirectBackend(OneServiceBackend):
    service = "direct"

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        services: list[OneServiceBackend] = []
        if settings.APNS_TOKEN_KEY_FILE:
            services.append(APNsBackend())
        if settings.ANDROID_FCM_CREDENTIALS_PATH:
            services.append(FCMBackend())
        opened = opened_devices(devices)
        planned = [(backend, backend.deliveries(tokens, opened, notification)) for backend in services]
        warn_skipped(user, len(tokens) + len(devices) - sum(len(d) for _, d in planned), self.service)
        result = SendResult()
        failure: TemporaryFailure | None = None
        for backend, deliveries in planned:
            try:
                part = backend.deliver(user, deliveries)
            except TemporaryFailure as exc:
                failure = exc
                continue
            result.sent += part.sent
            result.refused += part.refused
            result.refused_devices += part.refused_devices
        return settled(result, failure, "the direct backend", user)
