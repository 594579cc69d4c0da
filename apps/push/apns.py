"""Push notifications straight to Apple's push service (APNs), for an operator who builds their own
iOS app (PUSH_BACKEND=apps.push.apns.APNsBackend, or apps.push.direct.DirectBackend with FCM too).

APNs' provider API is HTTP/2 (httpx with h2), one connection per worker process kept open, with
token authentication: an ES256 JWT signed with the team's .p8 key (APNS_TOKEN_KEY_FILE, its key id
APNS_TOKEN_KEY_ID, the team APNS_TEAM_ID), renewed every 50 minutes (Apple refuses one older than an
hour). The topic is the app id the token was registered with (POST /users/me/apns_device_token's
`appid`), else APNS_TOPIC. What is sent is Zulip's APNs payload (apps/push/payloads.py), its `custom`
keys beside `aps`, as Zulip's send_apple_push_notification sends it.

Apple's answers: 410 Unregistered, 400 BadDeviceToken or DeviceTokenNotForTopic: the token is stale
and is returned to be removed; 429, 5xx, a timeout or a connection that fails: TemporaryFailure (the
task runs again later) when no phone was reached, else a warning (a retry would notify the others
twice); 403 ExpiredProviderToken: a new provider token, and TemporaryFailure; any other refusal (a
wrong key, team or topic): ServiceRefused, which fails the task visibly.
"""

import json
import logging
import threading
import time
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.conf import settings

from apps.core.tasks import TemporaryFailure
from apps.core.version import PARLEY_VERSION
from apps.push import e2ee
from apps.push.backends import Delivery, OneServiceBackend, SendResult, ServiceRefused, settled
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import Notification
from apps.users.models import User

logger = logging.getLogger("apps.push")

APNS_PRODUCTION_URL = "https://api.push.apple.com"
APNS_SANDBOX_URL = "https://api.sandbox.push.apple.com"
# A provider token is used this long, then renewed (Apple: at most once every 20 minutes, and it
# expires after 60).
PROVIDER_TOKEN_SECONDS = 50 * 60
# How long APNs keeps a notification for a phone that is off (Zulip's time_to_live).
EXPIRATION_SECONDS = 24 * 3600
# Apple's reasons that say the token is of no use (Zulip removes the token for the same three).
STALE_TOKEN_REASONS = frozenset({"Unregistered", "BadDeviceToken", "DeviceTokenNotForTopic"})
TEMPORARY_STATUSES = frozenset({429, 500, 502, 503, 504})


class APNsConfigurationError(Exception):
    """The APNs settings cannot work (reported by `manage.py check`)."""


def load_signing_key(path: str) -> ec.EllipticCurvePrivateKey:
    """The team's .p8 key: a PEM PKCS#8 P-256 key, as Apple's developer site gives it."""
    try:
        with open(path, "rb") as file:
            key = load_pem_private_key(file.read(), password=None)
    except OSError as exc:
        raise APNsConfigurationError(f"APNS_TOKEN_KEY_FILE {path} cannot be read: {exc.strerror}") from exc
    except (ValueError, TypeError) as exc:
        raise APNsConfigurationError(f"APNS_TOKEN_KEY_FILE {path} is not a PEM private key (a .p8 file)") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise APNsConfigurationError(f"APNS_TOKEN_KEY_FILE {path} is not an APNs key (ES256: an EC P-256 key)")
    return key


def configuration_errors() -> list[str]:
    """What is wrong with the APNs settings, for `manage.py check` (nothing: they can work)."""
    errors = [f"{name} is not set" for name in ("APNS_TOKEN_KEY_FILE", "APNS_TOKEN_KEY_ID", "APNS_TEAM_ID")
              if not getattr(settings, name)]  # fmt: skip
    if settings.APNS_TOKEN_KEY_FILE:
        try:
            load_signing_key(settings.APNS_TOKEN_KEY_FILE)
        except APNsConfigurationError as exc:
            errors.append(str(exc))
    return errors


def apns_url() -> str:
    if settings.APNS_URL:
        return settings.APNS_URL.rstrip("/")
    return APNS_SANDBOX_URL if settings.APNS_SANDBOX else APNS_PRODUCTION_URL


class _Connection:
    """The worker process's HTTP/2 connection to APNs and its current provider token."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.client: httpx.Client | None = None
        self.client_for: tuple[str, int] | None = None
        self.token: str | None = None
        self.token_for: tuple[str, str, str] | None = None
        self.token_issued = 0.0

    def http(self) -> httpx.Client:
        wanted = (apns_url(), settings.PUSH_SERVICE_TIMEOUT_SECONDS)
        with self.lock:
            if self.client is None or self.client_for != wanted:
                # HTTP/2 only: over TLS negotiated with ALPN, over plain HTTP (a local fake) directly.
                self.client = httpx.Client(http1=False, http2=True, timeout=wanted[1])
                self.client_for = wanted
            return self.client

    def provider_token(self) -> str:
        identity = (settings.APNS_TOKEN_KEY_FILE, settings.APNS_TOKEN_KEY_ID, settings.APNS_TEAM_ID)
        now = time.time()
        with self.lock:
            if self.token is None or self.token_for != identity or now - self.token_issued > PROVIDER_TOKEN_SECONDS:
                try:
                    key = load_signing_key(identity[0])
                except APNsConfigurationError as exc:
                    raise ServiceRefused(str(exc)) from exc
                claims = {"iss": identity[2], "iat": int(now)}
                self.token = jwt.encode(claims, key, algorithm="ES256", headers={"kid": identity[1]})
                self.token_for, self.token_issued = identity, now
            return self.token

    def forget_provider_token(self) -> None:
        with self.lock:
            self.token = None


_connection = _Connection()


def apns_message(payload: dict[str, Any]) -> dict[str, Any]:
    """Zulip's APNs payload ({alert, sound, badge, custom}) as APNs takes it: `aps`, and the custom
    keys beside it."""
    aps = dict(payload)
    custom = aps.pop("custom", {})
    return {**custom, "aps": aps}


class APNsBackend(OneServiceBackend):
    """Sends to the user's APNs tokens, and their APNs devices whose registration opens here."""

    kind, device_kind = PushDeviceToken.Kind.APNS, Device.TokenKind.APNS
    service = "APNs"

    def legacy_delivery(self, token: PushDeviceToken, notification: Notification) -> Delivery:
        high = notification.fcm_options.get("priority") == "high"
        message = apns_message(notification.apns)
        return Delivery(token.token, message, high, token, topic=token.ios_app_id or settings.APNS_TOPIC)

    def encrypted_delivery(self, device: Device, opened: dict[str, Any], notification: Notification) -> Delivery:
        request = e2ee.push_request(device, notification)
        headers = request["http_headers"]
        return Delivery(
            opened["token"], request["payload"], headers["apns_priority"] == 10, device,
            topic=opened["ios_app_id"], push_type=headers["apns_push_type"],
        )  # fmt: skip

    def deliver(self, user: User, deliveries: list[Delivery]) -> SendResult:
        result = SendResult()
        failure: TemporaryFailure | None = None
        for delivery in deliveries:
            try:
                status, reason = self._post(delivery)
            except TemporaryFailure as exc:
                failure = exc
                continue
            if status == 200:
                result.sent += 1
            elif reason in STALE_TOKEN_REASONS:
                logger.info("push: APNs refused token %s… of user %s (%s)", delivery.token[:8], user.id, reason)
                result.refuse(delivery.target)
            else:
                raise ServiceRefused(f"APNs refused the notification ({status} {reason})")
        return settled(result, failure, "APNs", user)

    def _post(self, delivery: Delivery) -> tuple[int, str]:
        """(status, Apple's reason) of one notification; TemporaryFailure when worth trying again."""
        headers = {
            "authorization": f"bearer {_connection.provider_token()}",
            "apns-topic": delivery.topic,
            "apns-push-type": delivery.push_type,
            "apns-priority": "10" if delivery.high else "5",
            "apns-expiration": str(int(time.time()) + EXPIRATION_SECONDS),
            "content-type": "application/json",
            "user-agent": f"Parley/{PARLEY_VERSION}",
        }
        url = f"{apns_url()}/3/device/{delivery.token}"
        try:
            response = _connection.http().post(url, content=json.dumps(delivery.message).encode(), headers=headers)
        except httpx.HTTPError as exc:
            raise TemporaryFailure(f"APNs {apns_url()} cannot be reached: {exc!r}") from exc
        reason = ""
        if response.status_code != 200:
            try:
                reason = str(response.json().get("reason", ""))
            except (ValueError, AttributeError):
                reason = response.text[:200]
        if response.status_code in TEMPORARY_STATUSES:
            raise TemporaryFailure(f"APNs answered {response.status_code} {reason}")
        if response.status_code == 403 and reason == "ExpiredProviderToken":
            _connection.forget_provider_token()
            raise TemporaryFailure("APNs found the provider token expired (a new one is made)")
        return response.status_code, reason
