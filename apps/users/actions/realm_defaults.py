"""An organization's defaults for new users (RealmUserDefault): created with the organization,
edited by its administrators (PATCH /realm/user_settings_defaults, the Django admin), copied into
each person created."""

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from apps.events.publish import Everyone, send_event_on_commit
from apps.realms.audit import audit_all, audit_entry, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.users.models import RealmUserDefault, User
from apps.users.selectors import realm_user_default
from apps.users.settings_models import NEW_ORGANIZATION_DEFAULTS, USER_SETTINGS, validate_settings


def do_create_realm_user_default(realm: Realm) -> RealmUserDefault:
    """The defaults of a new organization (the realm_created hook)."""
    return RealmUserDefault.objects.create(realm=realm, **NEW_ORGANIZATION_DEFAULTS)


def new_user_settings(realm: Realm) -> dict[str, Any]:
    """The settings a person created in `realm` starts with: the organization's defaults."""
    defaults = realm_user_default(realm)
    return {name: getattr(defaults, name) for name in USER_SETTINGS}


def check_realm_user_defaults(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The changes, each value checked as a user's would be; ValueError for a name that is not an
    organization default (enable_login_emails and enable_marketing_emails are each person's)."""
    refused = sorted(name for name in changes if name not in USER_SETTINGS or not USER_SETTINGS[name].org_default)
    if refused:
        raise ValueError(f"not organization defaults: {refused}")
    return validate_settings(changes)


def check_update_realm_user_defaults(realm: Realm, changes: Mapping[str, Any], *, acting_user: User | None) -> None:
    """PATCH /realm/user_settings_defaults (administrators: the view's gate) and the admin."""
    do_set_realm_user_defaults(realm, check_realm_user_defaults(changes), acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_set_realm_user_defaults(realm: Realm, changes: Mapping[str, Any], *, acting_user: User | None) -> list[str]:
    """Set checked defaults (one UPDATE); returns the names of those that changed.

    Audit: REALM_DEFAULT_USER_SETTINGS_CHANGED per changed value. Emits: realm_user_settings_defaults
    /update per changed value to the organization's active users."""
    # The organization's row of defaults, locked; made now if the organization has none yet.
    defaults, _ = RealmUserDefault.objects.select_for_update().get_or_create(
        realm=realm, defaults=NEW_ORGANIZATION_DEFAULTS
    )
    diff = {name: value for name, value in changes.items() if getattr(defaults, name) != value}
    if not diff:
        return []
    RealmUserDefault.objects.filter(id=defaults.id).update(**diff)
    audit_all(
        audit_entry(
            realm,
            AuditLogEventType.REALM_DEFAULT_USER_SETTINGS_CHANGED,
            extra_data=changed(name, getattr(defaults, name), value),
            acting_user=acting_user,
        )
        for name, value in diff.items()
    )
    for name, value in diff.items():
        event = {"type": "realm_user_settings_defaults", "op": "update", "property": name, "value": value}
        send_event_on_commit(realm, event, Everyone())
    return list(diff)
