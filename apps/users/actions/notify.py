"""What the users actions tell others: realm_user and custom_profile_fields events to clients, and
the audit log entry of a user's changed value."""

from collections.abc import Callable
from typing import Any

from apps.events.publish import Everyone, send_event_on_commit
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType, EmailVisibility, Realm
from apps.realms.serializers import setting_for_api
from apps.users.access import audience_seeing, guests_without_access, inaccessible_user_dict
from apps.users.models import User
from apps.users.selectors import (
    VISIBILITY_FOR_ROLE,
    active_user_ids_with_roles,
    active_users_and_roles,
    api_email,
    avatar_url,
    get_custom_profile_fields,
)
from apps.users.serializers import custom_profile_field_to_dict, user_to_dict


def audit_user_change(
    user: User, event_type: AuditLogEventType, prop: str, old: Any, new: Any, *, acting_user: User | None
) -> None:
    """Audit: `event_type` for `user`, with the property's old and new value."""
    audit(user.realm_id, event_type, modified_user=user, extra_data=changed(prop, old, new), acting_user=acting_user)


def send_person_update(user: User, person: dict[str, Any]) -> None:
    """Emits: realm_user/update with `person` (plus user_id) to everyone who can see `user`."""
    event = {"type": "realm_user", "op": "update", "person": {"user_id": user.id, **person}}
    send_event_on_commit(user.realm_id, event, audience_seeing(user))


def send_by_email_access(user: User, build: Callable[[bool], dict[str, Any]]) -> None:
    """Send `build(sees_real_email)` to each part of the audience: the event differs between those
    who may see the user's real address (the roles the user's email visibility allows, and the
    user) and everyone else."""
    roles = [role for role, visible in VISIBILITY_FOR_ROLE.items() if user.email_address_visibility in visible]
    lacking = guests_without_access(user)  # (who may not see the user at all: none of it)
    if user.is_bot or len(roles) == len(VISIBILITY_FOR_ROLE):
        send_event_on_commit(user.realm_id, build(True), Everyone(lacking))
        return
    seers = {user.id, *active_user_ids_with_roles(user.realm_id, roles)} - set(lacking)
    send_event_on_commit(user.realm_id, build(True), seers)
    send_event_on_commit(user.realm_id, build(False), Everyone((*seers, *lacking)))


def send_user_added(user: User) -> None:
    """Emits: realm_user/add with the full user object, as each recipient may see it; to guests
    who may not see the user (apps/users/access.py), the unknown user, marked `inaccessible_user`
    (as Zulip's notify_created_user: queues with user_list_incomplete do not show it)."""

    def build(sees_real_email: bool) -> dict[str, Any]:
        person = user_to_dict(user, acting_user=user, client_gravatar=True, profile_data={})
        if not sees_real_email:
            person["delivery_email"] = None
        return {"type": "realm_user", "op": "add", "person": person}

    send_by_email_access(user, build)
    if lacking := guests_without_access(user):
        person = inaccessible_user_dict(user.realm, user.id)
        event = {"type": "realm_user", "op": "add", "person": person, "inaccessible_user": True}
        send_event_on_commit(user.realm_id, event, lacking)


def send_delivery_email_update(user: User) -> None:
    """Emits: realm_user/update {delivery_email} to those who may see it, null to the others."""
    send_by_email_access(
        user,
        lambda sees: {
            "type": "realm_user",
            "op": "update",
            "person": {"user_id": user.id, "delivery_email": user.delivery_email if sees else None},
        },
    )


def send_email_visibility_update(user: User, old_visibility: int) -> None:
    """Emits what Zulip sends when a person's email_address_visibility changed (the new value is on
    `user`): realm_user/update {delivery_email} to those who may now see the address, {delivery_email:
    null} to those who no longer may; and, when everyone could or now can see it, {new_email} (the
    API email changes) and the avatar fields (clients compute Gravatar URLs from public addresses)."""
    gained, lost = [], []
    for uid, role in active_users_and_roles(user.realm_id):
        before, after = (
            visibility in VISIBILITY_FOR_ROLE[role] for visibility in (old_visibility, user.email_address_visibility)
        )
        if uid != user.id and before != after:
            (gained if after else lost).append(uid)
    for user_ids, address in ((gained, user.delivery_email), (lost, None)):
        if user_ids:
            person = {"user_id": user.id, "delivery_email": address}
            event = {"type": "realm_user", "op": "update", "person": person}
            send_event_on_commit(user.realm_id, event, audience_seeing(user, user_ids))
    if EmailVisibility.EVERYONE in (old_visibility, user.email_address_visibility):
        send_person_update(user, {"new_email": api_email(user)})
        send_avatar_update(user)


def send_avatar_update(user: User) -> None:
    """Emits: realm_user/update with the avatar fields."""
    send_person_update(
        user,
        {
            "avatar_source": user.avatar_source,
            "avatar_url": avatar_url(user),
            "avatar_url_medium": avatar_url(user, medium=True),
            "avatar_version": user.avatar_version,
        },
    )


def send_custom_profile_fields(realm: Realm) -> None:
    """Emits: custom_profile_fields with every definition, to the organization's active users."""
    fields = [custom_profile_field_to_dict(f) for f in get_custom_profile_fields(realm)]
    send_event_on_commit(realm, {"type": "custom_profile_fields", "fields": fields}, Everyone())


# Zulip sends these organization settings as realm/update_dict {property: "default", data} (their
# history), the others as realm/update {property, value}.
UPDATE_DICT_SETTINGS = ("allow_message_editing", "message_content_edit_limit_seconds")
# Settings clients do not know as such (Zulip has none of these names): no event.
SETTINGS_WITHOUT_EVENTS = ("password_auth_enabled",)


def send_realm_update_events(realm: Realm, changes: dict[str, Any]) -> None:
    """Emits: realm/update (or update_dict, as Zulip) for each changed organization setting, to the
    organization's active users."""
    for name, value in changes.items():
        if name in SETTINGS_WITHOUT_EVENTS:
            continue
        name, value = setting_for_api(name, value)
        if name in UPDATE_DICT_SETTINGS:
            event = {"type": "realm", "op": "update_dict", "property": "default", "data": {name: value}}
        else:
            event = {"type": "realm", "op": "update", "property": name, "value": value}
        send_event_on_commit(realm, event, Everyone())
    if "topics_policy" in changes:
        # Its older form (register's realm_mandatory_topics), for clients before feature level 392.
        mandatory = changes["topics_policy"] == Realm.TopicsPolicy.DISABLE_EMPTY_TOPIC
        event = {"type": "realm", "op": "update", "property": "mandatory_topics", "value": mandatory}
        send_event_on_commit(realm, event, Everyone())
