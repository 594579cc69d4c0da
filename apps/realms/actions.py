"""Creating and changing organizations."""

import re

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.publish import forget_credentials_on_commit, send_event_on_commit
from apps.groups.actions import check_group_setting_value, do_create_system_groups
from apps.groups.models import REALM_SETTINGS
from apps.groups.selectors import active_user_ids
from apps.realms.models import EmailVisibility, Realm
from apps.users.actions import do_create_user
from apps.users.models import Role, User

# Subdomains that would shadow our own URLs or mislead users.
RESERVED_SUBDOMAINS = frozenset(
    {"admin", "api", "app", "health", "static", "www", "mail", "email", "localhost", "root", "help", "status"}
)


def check_string_id(string_id: str) -> str:
    """A valid, free subdomain (Zulip's rules), or the error saying why not."""
    if string_id == Realm.DEFAULT_STRING_ID:
        if Realm.objects.filter(string_id=string_id).exists():
            raise JsonableError("The default organization already exists.")
        return string_id
    if string_id.startswith("-") or string_id.endswith("-"):
        raise JsonableError("Subdomain cannot start or end with a '-'.")
    if not re.fullmatch(r"[a-z0-9-]*", string_id):
        raise JsonableError("Subdomain can only have lowercase letters, numbers, and '-'s.")
    if len(string_id) < 3:
        raise JsonableError("Subdomain needs to have length 3 or greater.")
    if len(string_id) > Realm.MAX_STRING_ID_LENGTH:
        raise JsonableError(f"Subdomain is too long (limit: {Realm.MAX_STRING_ID_LENGTH} characters).")
    if string_id in RESERVED_SUBDOMAINS or Realm.objects.filter(string_id=string_id).exists():
        raise JsonableError("Subdomain unavailable. Please choose a different one.")
    return string_id


def check_realm_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise JsonableError("Organization name cannot be blank.")
    if len(name) > Realm.MAX_NAME_LENGTH:
        raise JsonableError(f"Organization name is too long (limit: {Realm.MAX_NAME_LENGTH} characters).")
    return name


@transaction.atomic
def do_create_realm(
    string_id: str,
    name: str,
    *,
    owner_email: str,
    owner_full_name: str,
    owner_password: str | None = None,
    default_email_address_visibility: int = EmailVisibility.ADMINS,
) -> tuple[Realm, User]:
    """Create an organization with its system groups and first owner; on any error nothing is created."""
    realm = Realm.objects.create(
        string_id=check_string_id(string_id),
        name=check_realm_name(name),
        default_email_address_visibility=default_email_address_visibility,
    )
    do_create_system_groups(realm)
    owner = do_create_user(
        realm, owner_email, owner_full_name, role=Role.OWNER, password=owner_password, acting_user=None
    )
    return realm, owner


@transaction.atomic
def do_set_realm_deactivated(realm: Realm, deactivated: bool, *, acting_user: User | None) -> None:
    """Deactivate (or reactivate) an organization: its users' API calls are refused while deactivated."""
    Realm.objects.filter(id=realm.id).update(deactivated=deactivated)
    realm.deactivated = deactivated
    forget_credentials_on_commit(realm_ids=[realm.id])


@transaction.atomic
def do_change_realm_settings(realm: Realm, changes: dict, *, acting_user: User | None) -> None:
    """Change organization settings (name, description, password sign-in, default email visibility)."""
    allowed = {"name", "description", "password_auth_enabled", "default_email_address_visibility"}
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"not organization settings: {sorted(unknown)}")
    if "name" in changes:
        changes = {**changes, "name": check_realm_name(changes["name"])}
    if len(changes.get("description", "")) > Realm.MAX_DESCRIPTION_LENGTH:
        raise JsonableError(f"Organization description is too long (limit: {Realm.MAX_DESCRIPTION_LENGTH} characters).")
    Realm.objects.filter(id=realm.id).update(**changes)
    for name, value in changes.items():
        setattr(realm, name, value)
    forget_credentials_on_commit(realm_ids=[realm.id])


@transaction.atomic
def do_change_realm_permission_group_setting(
    realm: Realm, setting_name: str, group_id: int, *, acting_user: User | None
) -> None:
    """Point a group-valued organization setting (REALM_SETTINGS, e.g. who may create public
    channels) at the named group `group_id`. Raises "Invalid user group" and Zulip's error for a
    group the setting refuses (role:everyone, role:internet).

    Emits: realm/update_dict {property: "default", data: {setting_name: group_id}} to the
    organization's active users (Zulip's event for these settings).
    """
    current_id = (
        Realm.objects.select_for_update().filter(id=realm.id).values_list(f"{setting_name}_id", flat=True).get()
    )
    group = check_group_setting_value(realm, setting_name, group_id, setting=REALM_SETTINGS[setting_name])
    if group.id == current_id:
        return
    Realm.objects.filter(id=realm.id).update(**{setting_name: group})
    setattr(realm, setting_name, group)
    forget_credentials_on_commit(realm_ids=[realm.id])  # the organization cached with the old value
    event = {"type": "realm", "op": "update_dict", "property": "default", "data": {setting_name: group.id}}
    send_event_on_commit(realm, event, active_user_ids(realm.id))
