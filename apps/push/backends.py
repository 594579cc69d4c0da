"""How push notifications leave the server: one interface, the backend chosen by the PUSH_BACKEND
setting.

- LogBackend (the default, and for development) sends nothing: it logs, in the `apps.push` log, one
  line per token or device with what would go to it.
- BouncerBackend sends through a Zulip-compatible push notification bouncer (PUSH_BOUNCER_URL; by
  default Zulip's own, which self-hosted servers use to reach the official Zulip apps), authenticated
  as the server registered with it (ZULIP_ORG_ID, ZULIP_ORG_KEY): tokens are registered with it
  when the app registers them here, and notifications name the user's tokens; devices registered
  for end-to-end encrypted notifications are registered with it (push/e2ee/register) and sent
  notifications it cannot read (push/e2ee/notify, apps/push/e2ee.py).
- The direct backends send straight to APNs and FCM (apps/push/apns.py, fcm.py, direct.py).

A backend is called by the task worker (apps/push/notifications.py), never in a request, except for
the test notification a user asks for. A service that cannot be reached, or answers 5xx, raises
TemporaryFailure (the task runs again later); tokens and devices it reports stale are returned to
be removed (a device's registration only: the device stays).
"""

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

import requests
from django.conf import settings
from django.utils.module_loading import import_string

from apps.core.tasks import TemporaryFailure
from apps.core.version import PARLEY_VERSION
from apps.push import e2ee
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import Notification
from apps.push.serializers import encode_token_id
from apps.users.models import User

logger = logging.getLogger("apps.push")


class ServiceRefused(Exception):
    """A push service refused a request (a 4xx other than a stale token): the configuration or the
    request is wrong, and trying again will not help. Fails the task, visibly. `code` is the error
    code told to the app when it was a device's registration (Zulip's: INVALID_BOUNCER_PUBLIC_KEY,
    INVALID_ENCRYPTED_PUSH_REGISTRATION, REQUEST_EXPIRED...)."""

    def __init__(self, message: str, code: str = "BAD_REQUEST") -> None:
        super().__init__(message)
        self.code = code


@dataclass
class SendResult:
    """What a send did: how many tokens and devices it reached, and the tokens and devices the push
    service refused (to be removed: the app was uninstalled, or the token is stale)."""

    sent: int = 0
    refused: list[PushDeviceToken] = field(default_factory=list)
    refused_devices: list[Device] = field(default_factory=list)

    def refuse(self, target: "PushDeviceToken | Device") -> None:
        (self.refused_devices if isinstance(target, Device) else self.refused).append(target)


@dataclass
class Delivery:
    """One notification to one phone as APNs or FCM takes it (apps/push/apns.py, fcm.py)."""

    token: str  # the phone's APNs or FCM token
    message: dict[str, Any]  # APNs: the JSON body; FCM: the data message
    high: bool  # the priority: high (a message), or normal
    target: PushDeviceToken | Device  # what the service's refusal of the token removes
    topic: str = ""  # APNs: the app
    push_type: str = "alert"  # APNs: alert, or background


class PushBackend(Protocol):
    # Whether tokens, and devices' encrypted registrations, must be registered with the service when
    # the app registers them here (else a device's registration counts at once).
    registers_tokens: bool
    registers_devices: bool

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult: ...

    def register_token(self, user: User, kind: int, token: str, ios_app_id: str | None) -> None: ...

    def unregister_token(self, user: User, kind: int, token: str) -> None: ...

    def register_device(self, user: User, token_id: int, bouncer_public_key: str, registration: str) -> None: ...


class SendsOnly:
    """A backend that sends to tokens without registering them with the service first."""

    registers_tokens = False
    registers_devices = False

    def register_device(self, user: User, token_id: int, bouncer_public_key: str, registration: str) -> None:
        pass

    def register_token(self, user: User, kind: int, token: str, ios_app_id: str | None) -> None:
        pass

    def unregister_token(self, user: User, kind: int, token: str) -> None:
        pass


def settled(result: SendResult, failure: TemporaryFailure | None, service: str, user: User) -> SendResult:
    """The result of sending to several phones one by one, `failure` the last temporary one: the
    task is tried again (TemporaryFailure) only when no phone was reached, since a retry would notify
    the others twice; else the phones missed are a warning."""
    if failure is not None:
        if result.sent == 0 and not (result.refused or result.refused_devices):
            raise failure
        logger.warning(
            "push: %s reached %d of user %s's phones; the others not: %s", service, result.sent, user.id, failure
        )
    return result


class OneServiceBackend(SendsOnly):
    """A backend of one push service (APNs, FCM): the user's tokens of that service, and their devices
    registered for encrypted notifications whose sealed registration this server can open
    (apps/push/e2ee.py) and names that service; the others get nothing (a warning says so)."""

    registers_devices = True
    kind: int  # PushDeviceToken.Kind
    device_kind: str  # Device.TokenKind
    service: str

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        deliveries = self.deliveries(tokens, opened_devices(devices), notification)
        warn_skipped(user, len(tokens) + len(devices) - len(deliveries), self.service)
        return self.deliver(user, deliveries)

    def deliveries(
        self, tokens: list[PushDeviceToken], devices: list[tuple[Device, dict[str, Any]]], notification: Notification
    ) -> list[Delivery]:
        """What goes to this service: its tokens, and its devices (with their opened registration)."""
        legacy = [self.legacy_delivery(token, notification) for token in tokens if token.kind == self.kind]
        encrypted = [
            self.encrypted_delivery(device, opened, notification)
            for device, opened in devices
            if opened["token_kind"] == self.device_kind
        ]
        return legacy + encrypted

    def legacy_delivery(self, token: PushDeviceToken, notification: Notification) -> Delivery:
        raise NotImplementedError

    def encrypted_delivery(self, device: Device, opened: dict[str, Any], notification: Notification) -> Delivery:
        raise NotImplementedError

    def deliver(self, user: User, deliveries: list[Delivery]) -> SendResult:
        raise NotImplementedError

    def register_device(self, user: User, token_id: int, bouncer_public_key: str, registration: str) -> None:
        try:
            e2ee.open_registration(bouncer_public_key, registration, token_id=token_id, fresh=True)
        except e2ee.SealedRegistrationError as exc:
            raise ServiceRefused(str(exc), exc.code) from exc


def opened_devices(devices: list[Device]) -> list[tuple[Device, dict[str, Any]]]:
    """The devices whose sealed registration this server can open, with it opened."""
    opened = [(device, e2ee.opened_registration(device)) for device in devices]
    return [(device, registration) for device, registration in opened if registration is not None]


def warn_skipped(user: User, skipped: int, service: str) -> None:
    if skipped:
        logger.warning(
            "push: %d token(s) or encrypted registration(s) of user %s get nothing from the %s backend "
            "(another service's, or sealed for a key this server does not have)",
            skipped, user.id, service,
        )  # fmt: skip


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


class BouncerError(ServiceRefused):
    """The bouncer refused a request (a 4xx): this server's registration or the request is wrong."""


class BouncerBackend:
    """A client of Zulip's push notification bouncer API (/api/v1/remotes/push/...)."""

    registers_tokens = True
    registers_devices = True

    def send(
        self, user: User, tokens: list[PushDeviceToken], devices: list[Device], notification: Notification
    ) -> SendResult:
        result = self._send_to_devices(user, devices, notification) if devices else SendResult()
        if not tokens:
            return result
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
        result.refused = [token for token in tokens if (token.kind, token.token) in stale]
        result.sent += answer.get("total_android_devices", len(fcm)) + answer.get("total_apple_devices", len(apns))
        return result

    def _send_to_devices(self, user: User, devices: list[Device], notification: Notification) -> SendResult:
        requests_ = [e2ee.push_request(device, notification) for device in devices]
        answer = self._post_for_realm(user, "push/e2ee/notify", {"push_requests": requests_})
        stale = set(answer.get("delete_token_ids") or [])
        sent = answer.get("android_successfully_sent_count", 0) + answer.get("apple_successfully_sent_count", 0)
        refused = [device for device, request in zip(devices, requests_, strict=True) if request["token_id"] in stale]
        return SendResult(sent=sent, refused_devices=refused)

    def register_token(self, user: User, kind: int, token: str, ios_app_id: str | None) -> None:
        data = {**_identity(user), "token": token, "token_kind": kind}
        if kind == PushDeviceToken.Kind.APNS:
            data["ios_app_id"] = ios_app_id
        self._post("push/register", data)

    def unregister_token(self, user: User, kind: int, token: str) -> None:
        self._post("push/unregister", {**_identity(user), "token": token, "token_kind": kind})

    def register_device(self, user: User, token_id: int, bouncer_public_key: str, registration: str) -> None:
        data = {"token_id": encode_token_id(token_id), "bouncer_public_key": bouncer_public_key}
        self._post_for_realm(user, "push/e2ee/register", {**data, "encrypted_push_registration": registration})

    def _post_for_realm(self, user: User, endpoint: str, data: dict[str, Any]) -> dict[str, Any]:
        """A request about the user's organization: when the bouncer does not know it yet, it is told
        this server's organizations (server/analytics), and asked again."""
        data = {"realm_uuid": e2ee.realm_uuid(user.realm_id), **data}
        try:
            return self._post(endpoint, data)
        except BouncerError as exc:
            if exc.code != "MISSING_REMOTE_REALM":
                raise
        self.upload_realms()
        return self._post(endpoint, data)

    def upload_realms(self) -> None:
        """Tells the bouncer this server's organizations (Zulip's server/analytics, without counts)."""
        empty = json.dumps([])
        form = {"realm_counts": empty, "installation_counts": empty, "realmauditlog_rows": empty}
        form.update(realms=json.dumps(e2ee.bouncer_realms()), version=json.dumps(PARLEY_VERSION))
        form.update(merge_base=json.dumps(""), api_feature_level=json.dumps(settings.API_FEATURE_LEVEL))
        self._post("server/analytics", form, as_form=True)

    def _post(self, endpoint: str, data: dict[str, Any], *, as_form: bool = False) -> dict[str, Any]:
        url = f"{settings.PUSH_BOUNCER_URL.rstrip('/')}/api/v1/remotes/{endpoint}"
        try:
            response = requests.post(
                url,
                **({"data": data} if as_form else {"json": data}),
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
        if not isinstance(answer, dict):
            answer = {}
        if response.status_code >= 400:
            reason = answer.get("msg", response.text[:200])
            code = str(answer.get("code") or "BAD_REQUEST")
            raise BouncerError(f"push bouncer {url} refused ({response.status_code} {code}): {reason}", code)
        return answer


def _identity(user: User) -> dict[str, Any]:
    return {"server_uuid": settings.ZULIP_ORG_ID, "user_uuid": str(user.uuid), "user_id": user.id}


def push_backend() -> PushBackend:
    return import_string(settings.PUSH_BACKEND)()
