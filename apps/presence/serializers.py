"""Request parameter classes of presence, and its two wire shapes: Zulip's modern one (by user id:
active_timestamp, idle_timestamp) and the legacy one (by email: website and aggregated)."""

from typing import Annotated, Any

from pydantic import Field

from apps.core.params import Json, Params
from apps.presence.backends import PresenceTimes
from apps.presence.limits import LEGACY_ACTIVE_OFFSET_SECS
from apps.presence.models import UserStatus


class UpdatePresenceParams(Params):
    status: str
    ping_only: Json[bool] = False
    new_user_input: Json[bool] = False
    slim_presence: Json[bool] = False
    # Either means the client speaks the modern API (answers keyed by user id, only what changed).
    last_update_id: Json[int] | None = None
    history_limit_days: Json[int] | None = None


class GetUserPresenceParams(Params):
    slim_presence: Json[bool] = False


def modern_presence(times: PresenceTimes, date_joined: int) -> dict[str, int]:
    """Zulip's modern presence of a user. A user never active counts as active when they joined."""
    return {
        "active_timestamp": times.active if times.active is not None else date_joined,
        "idle_timestamp": times.connected,
    }


def legacy_client_presence(times: PresenceTimes, date_joined: int) -> dict[str, Any]:
    """The legacy `website` entry: "active" at the last activity when it is recent next to the
    last connection, else "idle" at the last connection. `pushable` is always false, as in Zulip."""
    active = times.active if times.active is not None else date_joined
    if active + LEGACY_ACTIVE_OFFSET_SECS >= times.connected:
        status, timestamp = "active", active
    else:
        status, timestamp = "idle", times.connected
    return {"client": "website", "status": status, "timestamp": timestamp, "pushable": False}


def legacy_presence(times: PresenceTimes, date_joined: int) -> dict[str, dict[str, Any]]:
    """The legacy Presence entry: `website`, and `aggregated` with the same data but `pushable`."""
    website = legacy_client_presence(times, date_joined)
    aggregated = {key: website[key] for key in ("client", "status", "timestamp")}
    return {"website": website, "aggregated": aggregated}


class UpdateUserStatusParams(Params):
    """POST /users/{user_id}/status: what an administrator may set of someone's status (not `away`)."""

    status_text: Annotated[str, Field(max_length=UserStatus.MAX_TEXT_LENGTH)] | None = None
    emoji_name: Annotated[str, Field(max_length=60)] | None = None
    emoji_code: Annotated[str, Field(max_length=60)] | None = None
    reaction_type: Annotated[str, Field(max_length=30)] | None = None


class UpdateStatusParams(UpdateUserStatusParams):
    """POST /users/me/status."""

    away: Json[bool] | None = None
