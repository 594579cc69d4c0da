"""Reads of push registrations. A user sees only their own tokens and devices: another person's
is one that does not exist."""

from typing import Any

from apps.push.errors import InvalidDeviceIdError
from apps.push.models import Device, PushDeviceToken
from apps.push.serializers import device_to_dict
from apps.users.models import User


def access_device_by_id(user: User, device_id: int) -> Device:
    """The user's device `device_id`, else "Invalid `device_id`" (ids outside 64 bits too)."""
    device = Device.objects.filter(id=device_id, user=user).first() if -(2**63) <= device_id < 2**63 else None
    if device is None:
        raise InvalidDeviceIdError()
    return device


def push_tokens_for_user(user: User) -> list[PushDeviceToken]:
    return list(PushDeviceToken.objects.filter(user=user).order_by("id"))


def devices_for_user(user: User) -> dict[str, dict[str, Any]]:
    """The `devices` of POST /register: the user's devices by id (as JSON object keys)."""
    return {str(device.id): device_to_dict(device) for device in Device.objects.filter(user=user).order_by("id")}
