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
import uuid
from typing import Any

import nacl.secret
from django.conf import settings

from apps.push.models import Device
from apps.push.payloads import Notification
from apps.push.serializers import encode_token_id
from apps.realms.models import Realm


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
