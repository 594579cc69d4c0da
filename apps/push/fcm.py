"""Push notifications straight to Firebase Cloud Messaging (FCM), for an operator who builds their own
Android app (PUSH_BACKEND=apps.push.fcm.FCMBackend, or apps.push.direct.DirectBackend with APNs too).

FCM's HTTP v1 API (POST /v1/projects/{project}/messages:send, one message per token), authenticated
with an OAuth access token that google-auth obtains for the project's service account
(ANDROID_FCM_CREDENTIALS_PATH: the JSON key Firebase's console gives; the token is renewed before it
expires). What is sent is Zulip's FCM data message (apps/push/payloads.py), every value a string (FCM
takes nothing else), with Android priority high for messages and normal for removals, as Zulip's
send_android_push_notification sends it.

FCM's answers: UNREGISTERED, SENDER_ID_MISMATCH, or INVALID_ARGUMENT about the token: the token is
stale and is returned to be removed; UNAVAILABLE, INTERNAL, QUOTA_EXCEEDED (429, 5xx), a timeout or a
connection that fails: TemporaryFailure when no phone was reached, else a warning (as for APNs); any
other refusal (a wrong project or key): ServiceRefused, which fails the task visibly.
"""

import json
import logging
import threading
from typing import Any

import google.auth.exceptions
import requests
from django.conf import settings
from google.auth.transport.requests import Request as GoogleAuthRequest
from google.oauth2 import service_account

from apps.core.tasks import TemporaryFailure
from apps.core.version import PARLEY_VERSION
from apps.push import e2ee
from apps.push.backends import Delivery, OneServiceBackend, SendResult, ServiceRefused, settled
from apps.push.models import Device, PushDeviceToken
from apps.push.payloads import Notification
from apps.users.models import User

logger = logging.getLogger("apps.push")

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
STALE_TOKEN_CODES = frozenset({"UNREGISTERED", "SENDER_ID_MISMATCH"})
TEMPORARY_STATUSES = frozenset({429, 500, 502, 503, 504})


class FCMConfigurationError(Exception):
    """The FCM settings cannot work (reported by `manage.py check`)."""


def load_credentials(path: str) -> service_account.Credentials:
    """The service account's credentials (and its project) from Firebase's JSON key file."""
    try:
        with open(path, encoding="utf-8") as file:
            info = json.load(file)
    except OSError as exc:
        raise FCMConfigurationError(f"ANDROID_FCM_CREDENTIALS_PATH {path} cannot be read: {exc.strerror}") from exc
    except ValueError as exc:
        raise FCMConfigurationError(f"ANDROID_FCM_CREDENTIALS_PATH {path} is not JSON") from exc
    if not isinstance(info, dict) or info.get("type") != "service_account" or not info.get("project_id"):
        raise FCMConfigurationError(
            f"ANDROID_FCM_CREDENTIALS_PATH {path} is not a service account key with a project_id "
            "(Firebase console: Project settings, Service accounts, Generate new private key)"
        )
    try:
        return service_account.Credentials.from_service_account_info(info, scopes=[FCM_SCOPE])
    except (ValueError, KeyError) as exc:
        raise FCMConfigurationError(f"ANDROID_FCM_CREDENTIALS_PATH {path}: {exc}") from exc


def configuration_errors() -> list[str]:
    """What is wrong with the FCM settings, for `manage.py check` (nothing: they can work)."""
    if not settings.ANDROID_FCM_CREDENTIALS_PATH:
        return ["ANDROID_FCM_CREDENTIALS_PATH is not set"]
    try:
        load_credentials(settings.ANDROID_FCM_CREDENTIALS_PATH)
    except FCMConfigurationError as exc:
        return [str(exc)]
    return []


class _Session:
    """The worker process's HTTP session with Google and the service account's access token."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.http = requests.Session()
        self.http.headers["User-Agent"] = f"Parley/{PARLEY_VERSION}"
        self.credentials: service_account.Credentials | None = None
        self.credentials_for = ""

    def access(self) -> tuple[str, str]:
        """(access token, project id), the token obtained or renewed when needed."""
        path = settings.ANDROID_FCM_CREDENTIALS_PATH
        with self.lock:
            if self.credentials is None or self.credentials_for != path:
                try:
                    self.credentials = load_credentials(path)
                except FCMConfigurationError as exc:
                    raise ServiceRefused(str(exc)) from exc
                self.credentials_for = path
            credentials = self.credentials
            if not credentials.valid:
                try:
                    credentials.refresh(GoogleAuthRequest(self.http))
                except google.auth.exceptions.TransportError as exc:
                    raise TemporaryFailure(f"FCM's token service cannot be reached: {exc}") from exc
                except google.auth.exceptions.RefreshError as exc:
                    if getattr(exc, "retryable", False):
                        raise TemporaryFailure(f"FCM's token service failed: {exc}") from exc
                    raise ServiceRefused(f"FCM's token service refused the service account: {exc}") from exc
            return credentials.token, credentials.project_id


_session = _Session()


def fcm_data(payload: dict[str, Any]) -> dict[str, str]:
    """FCM data messages carry strings only (Zulip stringifies the same way)."""
    return {key: value if isinstance(value, str) else str(value) for key, value in payload.items()}


def _error_of(response: requests.Response) -> tuple[str, str]:
    """(FCM's error code, its message) from an error answer."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        return "", response.text[:200]
    code = str(error.get("status", ""))
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("FcmError") and detail.get("errorCode"):
            code = str(detail["errorCode"])
    return code, str(error.get("message", ""))


def _about_the_token(code: str, message: str) -> bool:
    return code in STALE_TOKEN_CODES or (code == "INVALID_ARGUMENT" and "token" in message.lower())


class FCMBackend(OneServiceBackend):
    """Sends to the user's FCM tokens, and their FCM devices whose registration opens here."""

    kind, device_kind = PushDeviceToken.Kind.FCM, Device.TokenKind.FCM
    service = "FCM"

    def legacy_delivery(self, token: PushDeviceToken, notification: Notification) -> Delivery:
        high = notification.fcm_options.get("priority", "high") == "high"
        return Delivery(token.token, fcm_data(notification.fcm), high, token)

    def encrypted_delivery(self, device: Device, opened: dict[str, Any], notification: Notification) -> Delivery:
        request = e2ee.push_request(device, notification)
        return Delivery(opened["token"], fcm_data(request["payload"]), request["fcm_priority"] == "high", device)

    def deliver(self, user: User, deliveries: list[Delivery]) -> SendResult:
        result = SendResult()
        if not deliveries:
            return result
        failure: TemporaryFailure | None = None
        access_token, project = _session.access()
        url = f"{settings.FCM_URL.rstrip('/')}/v1/projects/{project}/messages:send"
        for delivery in deliveries:
            android = {"priority": "high" if delivery.high else "normal"}
            message = {"token": delivery.token, "data": delivery.message, "android": android}
            try:
                response = _session.http.post(
                    url,
                    json={"message": message},
                    headers={"Authorization": f"Bearer {access_token}"},
                    timeout=settings.PUSH_SERVICE_TIMEOUT_SECONDS,
                )
            except requests.RequestException as exc:
                failure = TemporaryFailure(f"FCM {url} cannot be reached: {exc}")
                continue
            if response.status_code == 200:
                result.sent += 1
                continue
            code, text = _error_of(response)
            if _about_the_token(code, text):
                logger.info("push: FCM refused token %s… of user %s (%s)", delivery.token[:8], user.id, code)
                result.refuse(delivery.target)
            elif response.status_code in TEMPORARY_STATUSES:
                failure = TemporaryFailure(f"FCM answered {response.status_code} {code}: {text}")
            else:
                raise ServiceRefused(f"FCM refused the notification ({response.status_code} {code}: {text})")
        return settled(result, failure, "FCM", user)
