"""How push notifications leave the server: one interface, the backend chosen by the PUSH_BACKEND
setting.

- LogBackend (the default, and for development) sends nothing: it logs, in the `apps.push` log, one
  line per token or device with what would go to it.
- BouncerBackend sends through a Zulip-compatible push notification bouncer (PUSH_BOUNCER_URL; by
  default Zulip's own, which self-hosted servers use to reach the official Zulip apps), authenticated
  as the server registered with it (ZULIP_ORG_ID, ZULIP_ORG_KEY): tokens are registered with it
  when the app registers them here, and notifications name the user's tokens.

A backend is called by the task worker (apps/push/notifications.py), never in a request, except for
the test notification a user asks for. A service that cannot be reached, or answers 5xx, raises
TemporaryFailure (the task runs again later); tokens it reports stale are returned to be removed.
"""

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
from django.conf import settings
from django.utils.module_loading import import_string

from apps.core.tasks import TemporaryFailure
from apps.core.version import PARLEY_VERSION
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import Notification
from apps.users.models import User

logger = logging.getLogger("apps.push")


@dataclass
class SendResult:
    """What a send did: how many tokens and devices it reached, and the tokens the push service
    refused (to be removed: the app was uninstalled, or the token is stale)."""

    sent: int = 0
    refused: list[PushDeviceToken] = field(default_factory=list)


class PushBackend(Protocol):
    # Whether tokens must be registered with the service when the app registers them here.
    registers_tokens: bool

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult: ...

    def register_token(self, user: User, kind: int, token: str, ios_app_id: str | None) -> None: ...

    def unregister_token(self, user: User, kind: int, token: str) -> None: ...


class SendsOnly:
    """A backend that sends to tokens without registering them with the service first."""

    registers_tokens = False

    def register_token(self, user: User, kind: int, token: str, ios_app_id: str | None) -> None:
        pass

    def unregister_token(self, user: User, kind: int, token: str) -> None:
        pass


def settled(result: SendResult, failure: TemporaryFailure | None, service: str, user: User) -> SendResult:
    """The result of sending to several phones one by one, `failure` the last temporary one: the
    task is tried again (TemporaryFailure) only when no phone was reached, since a retry would notify
    the others twice; else the phones missed are a warning."""
    if failure is not None:
        if result.sent == 0 and not result.refused:
            raise failure
        logger.warning(
            "push: %s reached %d of user %s's phones; the others not: %s", service, result.sent, user.id, failure
        )
    return result


class OneServiceBackend(SendsOnly):
    """A backend of one push service (APNs, FCM): tokens of the other and encrypted registrations
    get nothing from it (a warning says so)."""

    kind: int
    service: str

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        mine = [token for token in tokens if token.kind == self.kind]
        if len(mine) < len(tokens) or devices:
            logger.warning(
                "push: %d token(s) of another service and %d encrypted registration(s) of user %s "
                "get nothing from the %s backend",
                len(tokens) - len(mine), len(devices), user.id, self.service,
            )  # fmt: skip
        return self.send_to_tokens(user, mine, notification)

    def send_to_tokens(self, user: User, tokens: list[PushDeviceToken], notification: Notification) -> SendResult:
        raise NotImplementedError


class LogBackend(SendsOnly):
    """Sends nothing: logs one line per token or device with the payload that would go to it."""

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        for token in tokens:
            payload = notification.apns if token.kind == PushDeviceToken.Kind.APNS else notification.fcm
            logger.info(
                "push (log backend) to user %s, %s token %s…: %s",
                user.id, token.get_kind_display(), token.token[:8], payload,
                extra={"push_user_id": user.id, "push_to": token.token, "push_payload": payload},
            )  # fmt: skip
        for device in devices:
            logger.info(
                "push (log backend) to user %s, device %s (encrypted): %s", user.id, device.id, notification.e2ee,
                extra={"push_user_id": user.id, "push_to": f"device {device.id}", "push_payload": notification.e2ee},
            )  # fmt: skip
        return SendResult(sent=len(tokens) + len(devices))


class ServiceRefused(Exception):
    """A push service refused a request (a 4xx other than a stale token): the configuration or the
    request is wrong, and trying again will not help. Fails the task, visibly."""


class BouncerError(ServiceRefused):
    """The bouncer refused a request (a 4xx): this server's registration or the request is wrong."""


class BouncerBackend:
    """A client of Zulip's push notification bouncer API (/api/v1/remotes/push/...)."""

    registers_tokens = True

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        if devices:
            # The bouncer's end-to-end encrypted route is not built yet: such devices get nothing.
            logger.warning(
                "push: %d device(s) of user %s registered for encrypted notifications get none "
                "(the bouncer backend sends to tokens only)",
                len(devices), user.id,
            )  # fmt: skip
        if not tokens:
            return SendResult()
        fcm = [t.token for t in tokens if t.kind == PushDeviceToken.Kind.FCM]
        apns = [t.token for t in tokens if t.kind == PushDeviceToken.Kind.APNS]
        answer = self._post(
            "push/notify",
            {
                **_identity(user),
                "apns_payload": notification.apns,
                "gcm_payload": notification.fcm,
                "gcm_options": notification.fcm_options,
                "android_devices": fcm,
                "apple_devices": apns,
            },
        )
        deleted = answer.get("deleted_devices") or {}
        stale = {(PushDeviceToken.Kind.FCM, t) for t in deleted.get("android_devices", [])}
        stale |= {(PushDeviceToken.Kind.APNS, t) for t in deleted.get("apple_devices", [])}
        refused = [token for token in tokens if (token.kind, token.token) in stale]
        sent = answer.get("total_android_devices", len(fcm)) + answer.get("total_apple_devices", len(apns))
        return SendResult(sent=sent, refused=refused)

    def register_token(self, user: User, kind: int, token: str, ios_app_id: str | None) -> None:
        data = {**_identity(user), "token": token, "token_kind": kind}
        if kind == PushDeviceToken.Kind.APNS:
            data["ios_app_id"] = ios_app_id
        self._post("push/register", data)

    def unregister_token(self, user: User, kind: int, token: str) -> None:
        self._post("push/unregister", {**_identity(user), "token": token, "token_kind": kind})

    def _post(self, endpoint: str, data: dict[str, Any]) -> dict[str, Any]:
        url = f"{settings.PUSH_BOUNCER_URL.rstrip('/')}/api/v1/remotes/{endpoint}"
        try:
            response = requests.post(
                url,
                json=data,
                auth=(settings.ZULIP_ORG_ID, settings.ZULIP_ORG_KEY),
                headers={"User-Agent": f"Parley/{PARLEY_VERSION}"},
                timeout=settings.PUSH_BOUNCER_TIMEOUT_SECONDS,
            )
        except requests.RequestException as exc:
            raise TemporaryFailure(f"push bouncer {url} cannot be reached: {exc}") from exc
        if response.status_code >= 500 or response.status_code == 429:
            raise TemporaryFailure(f"push bouncer {url} answered {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status_code >= 400:
            reason = answer.get("msg", response.text[:200]) if isinstance(answer, dict) else response.text[:200]
            raise BouncerError(f"push bouncer {url} refused ({response.status_code}): {reason}")
        return answer if isinstance(answer, dict) else {}


def _identity(user: User) -> dict[str, Any]:
    return {"server_uuid": settings.ZULIP_ORG_ID, "user_uuid": str(user.uuid), "user_id": user.id}


def push_backend() -> PushBackend:
    return import_string(settings.PUSH_BACKEND)()
