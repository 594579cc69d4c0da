"""End-to-end encrypted notifications through Zulip's push bouncer (Zulip 12, feature level 468), for
devices registered with POST /mobile_push/register.

The app gives this server a key (`push_key`: 0x31, libsodium's secretbox, then 32 bytes) and a
registration sealed for the bouncer's key (its push token, which only the bouncer can read), with the
token's id (the first 8 bytes of the token's SHA-256). The server hands the sealed registration to the
bouncer (push/e2ee/register: realm_uuid, token_id, bouncer_public_key, encrypted_push_registration),
and sends each notification to the bouncer encrypted with the device's key (push/e2ee/notify:
realm_uuid and push_requests, one per device by its token id): the bouncer sees neither the message
nor who wrote it, and answers the token ids APNs or FCM refused (`delete_token_ids`).

What is encrypted is `Notification.e2ee` (zulip-flutter's NotifPayload), as libsodium's
crypto_secretbox_easy: a random 24-byte nonce, then the ciphertext, in base64 (`encrypted_data`);
`push_key_id` tells the app which of its keys to open it with. iOS shows "New notification" until
the app's notification service extension has decrypted it (`mutable-content`); a removal is a
background notification there.

The bouncer knows organizations by a UUID: Parley's is derived from this server's registration
(ZULIP_ORG_ID) and the organization's id, stable as long as the registration is; the bouncer learns
the organizations (server/analytics, as Zulip's send_server_data_to_push_bouncer does) when it answers
that it does not know one.
"""

import base64
import hashlib
import hmac
import json
import logging
import time
import uuid
from typing import Any

import nacl.exceptions
import nacl.public
import nacl.secret
import orjson
from django.conf import settings

from apps.push.models import Device
from apps.push.payloads import Notification
from apps.push.serializers import APP_ID_RE, HEX_RE, encode_token_id
from apps.realms.models import Realm

logger = logging.getLogger("apps.push")


def realm_uuid(realm_id: int) -> str:
    """The organization's UUID (version 4, as the bouncer requires) for the bouncer."""
    digest = hmac.new(settings.ZULIP_ORG_ID.encode(), f"realm-uuid:{realm_id}".encode(), hashlib.sha256).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def realm_owner_secret(realm_id: int) -> str:
    """What proves to the bouncer that this server owns the organization's UUID."""
    key = settings.ZULIP_ORG_KEY.encode()
    return "zuliprealm_" + hmac.new(key, f"realm-owner:{realm_id}".encode(), hashlib.sha256).hexdigest()[:32]


def bouncer_realms() -> list[dict[str, Any]]:
    """The organizations as the bouncer's server/analytics takes them (Zulip's RealmDataForAnalytics)."""
    return [
        {
            "id": realm.id,
            "host": realm.host,
            "url": realm.url,
            "name": realm.name,
            "org_type": 0,
            "date_created": realm.date_created.timestamp(),
            "deactivated": realm.deactivated,
            "is_system_bot_realm": False,
            "authentication_methods": {"Email": realm.password_auth_enabled},
            "uuid": realm_uuid(realm.id),
            "uuid_owner_secret": realm_owner_secret(realm.id),
        }
        for realm in Realm.objects.order_by("id")
    ]


def encrypt(push_key: bytes, payload: dict[str, Any]) -> str:
    """The payload sealed with the device's key (its first byte names the cryptosystem, 0x31)."""
    box = nacl.secret.SecretBox(bytes(push_key)[1:])
    return base64.b64encode(bytes(box.encrypt(json.dumps(payload).encode()))).decode()


def push_request(device: Device, notification: Notification) -> dict[str, Any]:
    """One device's part of push/e2ee/notify (Zulip's APNsPushRequest or FCMPushRequest)."""
    removal = notification.e2ee.get("type") == "remove"
    payload: dict[str, Any] = {
        "push_key_id": device.push_key_id,
        "encrypted_data": encrypt(device.push_key, notification.e2ee),
    }
    token_id = encode_token_id(device.push_token_id)
    if device.push_token_kind == Device.TokenKind.APNS:
        if removal:
            payload["aps"] = {"content-available": 1}
            headers = {"apns_priority": 5, "apns_push_type": "background"}
        else:
            payload["aps"] = {"mutable-content": 1, "alert": {"title": "New notification"}, "sound": "default"}
            headers = {"apns_priority": 10, "apns_push_type": "alert"}
        return {"token_id": token_id, "http_headers": headers, "payload": payload}
    return {"token_id": token_id, "fcm_priority": "normal" if removal else "high", "payload": payload}


# --- sealed registrations opened here: the direct backends ------------------------------------------
# An operator who builds their own app gives it their own "bouncer" key pair's public key; with its
# private key in PUSH_REGISTRATION_PRIVATE_KEYS, this server opens the registrations (as Zulip's bouncer
# does with PUSH_REGISTRATION_ENCRYPTION_KEYS) and sends the encrypted notifications to APNs and FCM
# itself. A registration is checked when it is made (fresh: made in the last day, as the bouncer
# requires), and opened again for each notification (the token is kept sealed in the database).

REGISTRATION_LIFETIME_SECONDS = 24 * 3600


class SealedRegistrationError(Exception):
    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def private_keys() -> dict[bytes, nacl.public.PrivateKey]:
    """PUSH_REGISTRATION_PRIVATE_KEYS by their public key."""
    keys = {}
    for encoded in settings.PUSH_REGISTRATION_PRIVATE_KEYS:
        key = nacl.public.PrivateKey(base64.b64decode(encoded, validate=True))
        keys[bytes(key.public_key)] = key
    return keys


def key_errors() -> list[str]:
    """What is wrong with PUSH_REGISTRATION_PRIVATE_KEYS, for `manage.py check`."""
    try:
        private_keys()
    except (ValueError, TypeError, nacl.exceptions.CryptoError):
        return ["PUSH_REGISTRATION_PRIVATE_KEYS holds something else than base64 X25519 private keys (32 bytes)"]
    return []


def open_registration(
    bouncer_public_key: str, sealed: str, *, token_id: int | None = None, fresh: bool = False
) -> dict[str, Any]:
    """The registration the app sealed (token_kind, token, timestamp, ios_app_id), checked as Zulip's
    bouncer checks it; else SealedRegistrationError with the bouncer's error code."""
    try:
        key = private_keys().get(base64.b64decode(bouncer_public_key, validate=True))
    except (ValueError, TypeError, nacl.exceptions.CryptoError):
        key = None
    if key is None:
        raise SealedRegistrationError("Invalid bouncer_public_key", "INVALID_BOUNCER_PUBLIC_KEY")
    invalid = SealedRegistrationError("Invalid encrypted_push_registration", "INVALID_ENCRYPTED_PUSH_REGISTRATION")
    try:
        # orjson: anyone may seal to the public key, JSON nested too deep too (json's RecursionError).
        opened = orjson.loads(nacl.public.SealedBox(key).decrypt(base64.b64decode(sealed, validate=True)))
    except (ValueError, TypeError, nacl.exceptions.CryptoError):
        raise invalid from None
    if not _well_formed(opened):
        raise invalid
    if token_id is not None and token_id_of(opened["token"]) != token_id:
        raise invalid
    if fresh and time.time() - opened["timestamp"] > REGISTRATION_LIFETIME_SECONDS:
        raise SealedRegistrationError("Request expired", "REQUEST_EXPIRED")
    return opened


def _token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()[:8]


def token_id_of(token: str) -> int:
    """The id the app gives its push token in an encrypted registration (`token_id`, signed)."""
    return int.from_bytes(_token_hash(token), "big", signed=True)


def _well_formed(opened: Any) -> bool:
    if not isinstance(opened, dict) or not isinstance(opened.get("token"), str) or not opened["token"]:
        return False
    if not isinstance(opened.get("timestamp"), int):
        return False
    app_id = opened.get("ios_app_id")
    if opened.get("token_kind") == "fcm":
        return app_id is None
    if opened.get("token_kind") == "apns":
        return isinstance(app_id, str) and bool(APP_ID_RE.fullmatch(app_id)) and bool(HEX_RE.fullmatch(opened["token"]))
    return False


def opened_registration(device: Device) -> dict[str, Any] | None:
    """The device's registration, opened for sending (None: this server cannot open it)."""
    try:
        return open_registration(device.bouncer_public_key or "", device.encrypted_push_registration or "")
    except SealedRegistrationError as exc:
        logger.warning("push: the registration of device %s cannot be opened here: %s", device.id, exc)
        return None
