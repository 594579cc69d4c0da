"""Wire shapes of the realms app."""

from typing import Any

from apps.realms.models import AuditLogEventType, RealmAuditLog


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
