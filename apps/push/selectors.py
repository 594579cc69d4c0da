"""Reads of push registrations. A user sees only their own tokens and devices: another person's
is one that does not exist."""

from typing import Any

from apps.core.cache import cached
from apps.push.errors import InvalidDeviceIdError
from apps.push.models import Device, PushDeviceToken
from apps.push.serializers import device_to_dict
from apps.users.models import User


def access_device_by_id(user: User, device_id: int, *, lock: bool = False) -> Device:
    """The user's device `device_id`, else "Invalid `device_id`" (ids outside 64 bits too).
    `lock`: its row locked until the transaction ends (a change or removal at the same moment
    waits, then finds it as it is, or gone)."""
    devices = Device.objects.filter(id=device_id, user=user) if -(2**63) <= device_id < 2**63 else Device.objects.none()
    device = (devices.select_for_update() if lock else devices).first()
    if device is None:
        raise InvalidDeviceIdError()
    return device


def push_tokens_for_user(user: User) -> list[PushDeviceToken]:
    return list(PushDeviceToken.objects.filter(user=user).order_by("id"))


def push_targets(user: User) -> tuple[list[PushDeviceToken], list[Device]]:
    """Where the user's notifications go: their tokens, and their devices registered for encrypted
    notifications (a key and a token)."""
    devices = Device.objects.filter(user=user, push_token_id__isnull=False, push_key_id__isnull=False).order_by("id")
    return push_tokens_for_user(user), list(devices)


def devices_for_user(user: User) -> dict[str, dict[str, Any]]:
    """The `devices` of POST /register: the user's devices by id (as JSON object keys)."""
    return {str(device.id): device_to_dict(device) for device in Device.objects.filter(user=user).order_by("id")}


# How long an organization's "someone here has a phone registered" is cached (a registration drops it).
HAS_DEVICES_CACHE_SECONDS = 300


def has_devices_cache_key(realm_id: int) -> str:
    return f"push:realm-has-devices:{realm_id}"


def realm_has_push_devices(realm_id: int) -> bool:
    """Whether anyone in the organization has a token or a device registered for notifications."""

    def compute() -> bool:
        return (
            PushDeviceToken.objects.filter(user__realm_id=realm_id).exists()
            or Device.objects.filter(user__realm_id=realm_id, push_token_id__isnull=False).exists()
        )

    return cached(has_devices_cache_key(realm_id), compute, HAS_DEVICES_CACHE_SECONDS)
