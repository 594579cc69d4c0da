"""The direct backend (PUSH_BACKEND=apps.push.direct.DirectBackend), for an operator who builds their
own mobile apps: APNs tokens go to APNs (apps/push/apns.py) when APNS_TOKEN_KEY_FILE is set, FCM
tokens to FCM (apps/push/fcm.py) when ANDROID_FCM_CREDENTIALS_PATH is set; `manage.py check` requires
one of them at least, and each that is set must work.

Devices registered for end-to-end encrypted notifications get nothing from it: their app sealed the
push token for the push bouncer's key (Zulip's), so only the bouncer can reach them.
"""

from django.conf import settings

from apps.core.tasks import TemporaryFailure
from apps.push.apns import APNsBackend
from apps.push.backends import SendResult, SendsOnly, logger, settled
from apps.push.fcm import FCMBackend
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import Notification
from apps.users.models import User


class DirectBackend(SendsOnly):
    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        services = []
        if settings.APNS_TOKEN_KEY_FILE:
            services.append((PushDeviceToken.Kind.APNS, APNsBackend()))
        if settings.ANDROID_FCM_CREDENTIALS_PATH:
            services.append((PushDeviceToken.Kind.FCM, FCMBackend()))
        served = {kind for kind, _ in services}
        unserved = [token for token in tokens if token.kind not in served]
        if unserved or devices:
            logger.warning(
                "push: %d token(s) of a service not configured and %d encrypted registration(s) of user %s "
                "get nothing from the direct backend",
                len(unserved), len(devices), user.id,
            )  # fmt: skip
        result = SendResult()
        failure: TemporaryFailure | None = None
        for kind, backend in services:
            try:
                part = backend.send_to_tokens(user, [t for t in tokens if t.kind == kind], notification)
            except TemporaryFailure as exc:
                failure = exc
                continue
            result.sent += part.sent
            result.refused += part.refused
        return settled(result, failure, "the direct backend", user)
