"""Shared helpers of the channel folder tests."""

from apps.events.models import OutboxEvent
from apps.folders.models import ChannelFolder
from apps.realms.models import RealmAuditLog
from apps.subscriptions.models import Stream
from tests.api import api_for, assert_success


def create_folder(user, name: str, description: str = "") -> int:
    """POST /channel_folders/create; the new folder's id."""
    body = assert_success(api_for(user).post("/channel_folders/create", {"name": name, "description": description}))
    return body["channel_folder_id"]


def listed(user, **params) -> list[dict]:
    return assert_success(api_for(user).get("/channel_folders", params))["channel_folders"]


def db_state() -> dict:
    """Every row the folder endpoints write: equal before and after a refused request."""
    return {
        "folders": list(ChannelFolder.objects.order_by("id").values()),
        "streams": list(Stream.objects.order_by("id").values("id", "folder_id")),
        "audit": RealmAuditLog.objects.count(),
        "events": OutboxEvent.objects.count(),
    }
