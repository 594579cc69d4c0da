"""Wire shapes of the realms app."""

from typing import Any

from apps.realms.models import AuditLogEventType, RealmAuditLog

# The organization's settings whose value is a channel: `<name>_id` for clients, -1 for none.
CHANNEL_SETTINGS = (
    "moderation_request_channel",
    "new_stream_announcements_stream",
    "signup_announcements_stream",
    "zulip_update_announcements_stream",
)


def setting_for_api(name: str, value: Any) -> tuple[str, Any]:
    """An organization setting's name and value as clients know them (PATCH /realm's answer, the
    realm/update event): a channel setting as `<name>_id`, -1 for none (given as the channel, its id
    or None)."""
    if name in CHANNEL_SETTINGS:
        return f"{name}_id", -1 if value is None else getattr(value, "pk", value)
    return name, value


def audit_log_entry_to_dict(entry: RealmAuditLog) -> dict[str, Any]:
    """An entry as `export_audit_log` writes it (ids of the users, channel and group involved)."""
    return {
        "id": entry.id,
        "event_time": entry.event_time.isoformat(),
        "event_type": entry.event_type,
        "event": AuditLogEventType(entry.event_type).name,
        "acting_user_id": entry.acting_user_id,
        "modified_user_id": entry.modified_user_id,
        "modified_stream_id": entry.modified_stream_id,
        "modified_user_group_id": entry.modified_user_group_id,
        "extra_data": entry.extra_data,
    }
