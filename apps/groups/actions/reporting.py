"""How the groups actions report a change: the events the organization's active users receive (on
commit), and the audit entries of membership changes, one per user or per subgroup change as in
Zulip's RealmAuditLog."""

from collections.abc import Iterable, Sequence
from typing import Any

from apps.events.publish import Everyone, send_event_on_commit
from apps.groups.models import UserGroup
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.models import User


def send_to_realm(realm_id: int, event: dict[str, Any]) -> None:
    send_event_on_commit(realm_id, event, Everyone())


def send_members_event(group: UserGroup, op: str, user_ids: Iterable[int]) -> None:
    """Emits: user_group/add_members or remove_members {group_id, user_ids}."""
    send_to_realm(group.realm_id, {"type": "user_group", "op": op, "group_id": group.id, "user_ids": sorted(user_ids)})


def send_subgroups_event(group: UserGroup, op: str, subgroup_ids: Iterable[int]) -> None:
    """Emits: user_group/add_subgroups or remove_subgroups {group_id, direct_subgroup_ids}."""
    event = {"type": "user_group", "op": op, "group_id": group.id, "direct_subgroup_ids": sorted(subgroup_ids)}
    send_to_realm(group.realm_id, event)


def send_update_event(group: UserGroup, data: dict[str, Any]) -> None:
    """Emits: user_group/update {group_id, data}."""
    send_to_realm(group.realm_id, {"type": "user_group", "op": "update", "group_id": group.id, "data": data})


def audit_many(
    realm_id: int, event_type: AuditLogEventType, entries: Iterable[dict[str, Any]], *, acting_user: User | None
) -> None:
    """Audit entries of one kind (their `modified_*` and `extra_data` in `entries`), in one statement
    however many (apps.realms.audit writes one)."""
    RealmAuditLog.objects.bulk_create(
        RealmAuditLog(realm_id=realm_id, event_type=event_type, acting_user=acting_user, **entry) for entry in entries
    )


def audit_members(
    group: UserGroup, event_type: AuditLogEventType, users: Sequence[User], *, acting_user: User | None
) -> None:
    """USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED or _REMOVED: one entry per user (`modified_user`)."""
    entries = ({"modified_user": user, "modified_user_group": group} for user in users)
    audit_many(group.realm_id, event_type, entries, acting_user=acting_user)


def audit_subgroups(
    links: Sequence[tuple[UserGroup, Sequence[int]]], event_type: AuditLogEventType, *, acting_user: User | None
) -> None:
    """USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED or _REMOVED: one entry per supergroup of `links`
    ((supergroup, subgroup ids) pairs, of one organization), `extra_data` {"subgroup_ids": [...]}."""
    if links:
        entries = ({"modified_user_group": group, "extra_data": {"subgroup_ids": sorted(ids)}} for group, ids in links)
        audit_many(links[0][0].realm_id, event_type, entries, acting_user=acting_user)
