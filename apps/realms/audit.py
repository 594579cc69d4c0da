"""Writing the audit log (RealmAuditLog): what every action that changes an organization calls,
in its own transaction, so the entry exists exactly when the change does."""

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from apps.realms.models import AuditLogEventType, Realm, RealmAuditLog

if TYPE_CHECKING:
    from apps.users.models import User


def audit(
    realm: "Realm | int",
    event_type: AuditLogEventType,
    *,
    modified_user: "User | None" = None,
    modified_stream: Any = None,
    modified_user_group: Any = None,
    extra_data: dict[str, Any] | None = None,
    acting_user: "User | None",
) -> RealmAuditLog:
    """Record `event_type` in `realm`'s audit log; `extra_data` holds the values (JSON: ids, not
    objects), by convention `property`, `old_value` and `new_value` for a changed setting."""
    entry = audit_entry(
        realm,
        event_type,
        modified_user=modified_user,
        modified_stream=modified_stream,
        modified_user_group=modified_user_group,
        extra_data=extra_data,
        acting_user=acting_user,
    )
    entry.save()
    return entry


def audit_entry(
    realm: "Realm | int", event_type: AuditLogEventType, *, acting_user: "User | None", **what: Any
) -> RealmAuditLog:
    """An entry as audit() records it (`what`: audit()'s other arguments), not yet saved: for
    audit_all()."""
    what["extra_data"] = what.get("extra_data") or {}
    realm_id = realm if isinstance(realm, int) else realm.id
    return RealmAuditLog(realm_id=realm_id, event_type=event_type, acting_user=acting_user, **what)


def audit_all(entries: Iterable[RealmAuditLog]) -> None:
    """Record several entries (made with audit_entry) in one statement: a change of many values."""
    RealmAuditLog.objects.bulk_create(list(entries))


def changed(prop: str, old: Any, new: Any, **more: Any) -> dict[str, Any]:
    """The extra_data of a changed value."""
    return {"property": prop, "old_value": old, "new_value": new, **more}
