"""Request parameter classes of the push endpoints, the checks of what phones send (Zulip's rules
and words), and the Device object of /register and `device` events."""

import base64
import binascii
import re
from typing import Annotated, Any

from pydantic import Field

from apps.core.errors import JsonableError
from apps.core.params import Json, Params
from apps.push.models import MAX_TOKEN_LENGTH, Device, PushDeviceToken

APP_ID_RE = re.compile(r"[.a-zA-Z0-9-]+")
HEX_RE = re.compile(r"(?:[0-9a-fA-F]{2})+")
# A push key: one byte naming the cryptosystem, 0x31 for libsodium's crypto_secretbox_easy (the only
# one), then its 32-byte key.
PUSH_KEY_PREFIX = 0x31
PUSH_KEY_LENGTH = 33

UInt32 = Annotated[int, Field(ge=0, le=2**32 - 1)]


class TokenParams(Params):
    token: str


class AddApnsTokenParams(TokenParams):
    appid: str


class TestNotificationParams(Params):
    token: str | None = None


class DeviceIdParams(Params):
    device_id: Json[int]


class OptionalDeviceIdParams(Params):
    device_id: Json[int] | None = None


class RegisterPushDeviceParams(Params):
    device_id: Json[int]
    token_kind: str | None = None
    push_key: str | None = None
    push_key_id: Json[UInt32] | None = None
    bouncer_public_key: str | None = None
    encrypted_push_registration: str | None = None
    token_id: str | None = None

    @property
    def key_fields_present(self) -> bool:
        return self.push_key is not None and self.push_key_id is not None

    @property
    def token_fields_present(self) -> bool:
        fields = (self.token_kind, self.token_id, self.bouncer_public_key, self.encrypted_push_registration)
        return all(field is not None for field in fields)


def check_token(token: str, kind: int) -> str:
    """The token as stored: "Empty or invalid length token" for an empty one or one over 4,096
    characters, "Invalid APNS token" for an APNs token that is not hexadecimal (kept lower case)."""
    if token == "" or len(token) > MAX_TOKEN_LENGTH:
        raise JsonableError("Empty or invalid length token")
    if kind == PushDeviceToken.Kind.APNS:
        if not HEX_RE.fullmatch(token):
            raise JsonableError("Invalid APNS token")
        return token.lower()
    return token


def check_app_id(appid: str) -> str:
    if not APP_ID_RE.fullmatch(appid):
        raise JsonableError("Invalid app ID")
    return appid


def check_token_kind(token_kind: str) -> str:
    if token_kind not in Device.TokenKind.values:
        raise JsonableError("Invalid token_kind")
    return token_kind


def check_push_key(push_key: str) -> bytes:
    """The key's bytes: base64 of the 0x31 prefix and a 32-byte key, else "Invalid `push_key`"."""
    try:
        key = base64.b64decode(push_key, validate=True)
    except (binascii.Error, ValueError):
        raise JsonableError("Invalid `push_key`") from None
    if len(key) != PUSH_KEY_LENGTH or key[0] != PUSH_KEY_PREFIX:
        raise JsonableError("Invalid `push_key`")
    return key


def decode_token_id(token_id: str) -> int:
    """A token id: base64 of a signed 64-bit integer (8 bytes), else "Invalid `token_id`"."""
    try:
        raw = base64.b64decode(token_id, validate=True)
    except (binascii.Error, ValueError):
        raise JsonableError("Invalid `token_id`") from None
    if len(raw) != 8:
        raise JsonableError("Invalid `token_id`")
    return int.from_bytes(raw, byteorder="big", signed=True)


def encode_token_id(token_id: int) -> str:
    return base64.b64encode(token_id.to_bytes(8, byteorder="big", signed=True)).decode()


def device_to_dict(device: Device) -> dict[str, Any]:
    """Zulip's ClientDevice: the push key's id, the token ids (base64), when the token last
    changed, and the registration's error code."""
    changed = device.push_token_last_updated_timestamp
    return {
        "push_key_id": device.push_key_id,
        "push_token_id": encode_token_id(device.push_token_id) if device.push_token_id is not None else None,
        "pending_push_token_id": (
            encode_token_id(device.pending_push_token_id) if device.pending_push_token_id is not None else None
        ),
        "push_token_last_updated_timestamp": int(changed.timestamp()) if changed is not None else None,
        "push_registration_error_code": device.push_registration_error_code,
    }
