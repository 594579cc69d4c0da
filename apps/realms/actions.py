"""Creating and changing organizations."""

import re
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.http.request import split_domain_port

from apps.core.errors import JsonableError
from apps.core.text import unprintable_position
from apps.events.publish import Everyone, forget_credentials_on_commit, send_event_on_commit
from apps.realms.audit import audit, changed
from apps.realms.domains import check_domain
from apps.realms.hooks import realm_created, realm_settings_changed
from apps.realms.models import AuditLogEventType, Realm, RealmDomain
from apps.realms.selectors import lock_realm, realm_domains, realm_string_id_in_use
from config.env import is_ip_address

if TYPE_CHECKING:
    from apps.users.models import User

# Subdomains that would shadow our own URLs or mislead users.
RESERVED_SUBDOMAINS = frozenset(
    {"admin", "api", "app", "health", "static", "www", "mail", "email", "localhost", "root", "help", "status"}
)


def check_string_id(string_id: str) -> str:
    """A valid, free subdomain (Zulip's rules), or the error saying why not."""
    if string_id == Realm.DEFAULT_STRING_ID:
        if realm_string_id_in_use(string_id):
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
    if string_id in RESERVED_SUBDOMAINS or realm_string_id_in_use(string_id):
        raise JsonableError("Subdomain unavailable. Please choose a different one.")
    host, _ = split_domain_port(settings.EXTERNAL_HOST)
    if is_ip_address(host):  # nobody could reach it: an address has no subdomains
        raise JsonableError(
            f"Organizations on subdomains need EXTERNAL_HOST to be a domain name; {host} is an IP address."
        )
    return string_id


def check_realm_name(name: str) -> str:
    """The stripped name, or the error saying why not."""
    name = name.strip()
    if not name:
        raise JsonableError("Organization name cannot be blank.")
    if len(name) > Realm.MAX_NAME_LENGTH:
        raise JsonableError(f"Organization name is too long (limit: {Realm.MAX_NAME_LENGTH} characters).")
    # A line break in the name went into emails' subjects (the security QA pass; folded there).
    position = unprintable_position(name)
    if position is not None:
        raise JsonableError(f"Invalid character in organization name, at position {position}.")
    return name


def do_create_realm(string_id: str, name: str, *, acting_user: "User | None") -> Realm:
    """Create an organization, with what the realm_created hooks add (its defaults for new users, its
    system groups); its first owner is created next (apps.users: do_create_realm_with_owner).
    Raises for an invalid or taken subdomain or name, before the transaction. Audit: REALM_CREATED."""
    string_id, name = check_string_id(string_id), check_realm_name(name)
    with transaction.atomic(savepoint=False):
        realm = Realm.objects.create(string_id=string_id, name=name)
        audit(realm, AuditLogEventType.REALM_CREATED, acting_user=acting_user)
        realm_created.call(realm)
    return realm


def _stored(value: Any) -> Any:
    """A setting's value as its column holds it: a channel (moderation_request_channel) by its id."""
    return value.pk if isinstance(value, models.Model) else value


@transaction.atomic(savepoint=False)
def do_set_realm_deactivated(realm: Realm, deactivated: bool, *, acting_user: "User | None") -> None:
    """Deactivate (or reactivate) an organization: its users' API calls are refused while deactivated.

    Audit: REALM_DEACTIVATED or REALM_REACTIVATED (nothing when it already is)."""
    if Realm.objects.filter(id=realm.id).values_list("deactivated", flat=True).get() == deactivated:
        return
    Realm.objects.filter(id=realm.id).update(deactivated=deactivated)
    realm.deactivated = deactivated
    event = AuditLogEventType.REALM_DEACTIVATED if deactivated else AuditLogEventType.REALM_REACTIVATED
    audit(realm, event, acting_user=acting_user)
    forget_credentials_on_commit(realm_ids=[realm.id])


# The settings do_change_realm_settings changes, in the order the admin shows them.
CHANGEABLE_SETTINGS = (
    "name",
    "description",
    "password_auth_enabled",
    "welcome_message_custom_text",
    "message_content_delete_limit_seconds",
    "allow_message_editing",
    "message_content_edit_limit_seconds",
    "move_messages_within_stream_limit_seconds",
    "move_messages_between_streams_limit_seconds",
    "message_edit_history_visibility_policy",
    "enable_read_receipts",
    "topics_policy",
    "waiting_period_threshold",
    "emails_restricted_to_domains",
    "disallow_disposable_email_addresses",
    "avatar_changes_disabled",
    "presence_disabled",
    # Channels of the organization's, or None (apps.subscriptions checks the channel first:
    # realm_channels); given and stored as the channel, sent on as its id (CHANNEL_SETTINGS).
    "moderation_request_channel",
    "new_stream_announcements_stream",
    "signup_announcements_stream",
    "zulip_update_announcements_stream",
)


def do_change_realm_settings(realm: Realm, changes: dict, *, acting_user: "User | None") -> None:
    """Change organization settings (CHANGEABLE_SETTINGS); raises for an invalid name or description,
    before the transaction, and ValueError for what is not a setting.

    Audit: REALM_PROPERTY_CHANGED for each value that changes. Emits (apps.users, through the
    realm_settings_changed hook): realm/update or realm/update_dict for each, as Zulip does."""
    unknown = set(changes) - set(CHANGEABLE_SETTINGS)
    if unknown:
        raise ValueError(f"not organization settings: {sorted(unknown)}")
    if "name" in changes:
        changes = {**changes, "name": check_realm_name(changes["name"])}
    if len(changes.get("description", "")) > Realm.MAX_DESCRIPTION_LENGTH:
        raise JsonableError(f"Organization description is too long (limit: {Realm.MAX_DESCRIPTION_LENGTH} characters).")
    limit = Realm.MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH
    if len(changes.get("welcome_message_custom_text", "")) > limit:
        raise JsonableError(f"welcome_message_custom_text is too long (limit: {limit} characters)")
    with transaction.atomic(savepoint=False):
        old = Realm.objects.filter(id=realm.id).values(*changes).get()
        changes = {name: value for name, value in changes.items() if old[name] != _stored(value)}
        if not changes:
            return
        Realm.objects.filter(id=realm.id).update(**changes)
        for name, value in changes.items():
            setattr(realm, name, value)
            audit(
                realm,
                AuditLogEventType.REALM_PROPERTY_CHANGED,
                extra_data=changed(name, old[name], _stored(value)),
                acting_user=acting_user,
            )
        realm_settings_changed.call(realm, {name: _stored(value) for name, value in changes.items()})
        forget_credentials_on_commit(realm_ids=[realm.id])


# --- allowed domains ------------------------------------------------------------------------------


def _domain_changed(realm: Realm, event_type: AuditLogEventType, key: str, value: Any, *, acting_user) -> None:
    audit(realm, event_type, extra_data={"realm_domains": realm_domains(realm), key: value}, acting_user=acting_user)


@transaction.atomic
def do_add_realm_domain(
    realm: Realm, domain: str, allow_subdomains: bool, *, acting_user: "User | None"
) -> RealmDomain:
    """Allow a domain (checked: check_domain); "The domain ... is already a part of your
    organization." for one it has.

    Audit: REALM_DOMAIN_ADDED. Emits: realm_domains/add {realm_domain} to the organization."""
    domain = check_domain(domain)
    if RealmDomain.objects.filter(realm=realm, domain=domain).exists():
        raise JsonableError(f"The domain {domain} is already a part of your organization.")
    try:
        with transaction.atomic():
            row = RealmDomain.objects.create(realm=realm, domain=domain, allow_subdomains=allow_subdomains)
    except IntegrityError:
        raise JsonableError(f"The domain {domain} is already a part of your organization.") from None
    shape = {"domain": domain, "allow_subdomains": allow_subdomains}
    _domain_changed(realm, AuditLogEventType.REALM_DOMAIN_ADDED, "added_domain", shape, acting_user=acting_user)
    send_event_on_commit(realm, {"type": "realm_domains", "op": "add", "realm_domain": shape}, Everyone())
    return row


def access_realm_domain(realm: Realm, domain: str) -> RealmDomain:
    """The organization's allowed domain, as written; else Zulip's "No entry found for domain ...".
    The organization's row is locked first (call in a transaction): changes to its domains take
    turns, so removing the last two at once still sees the last one go."""
    lock_realm(realm.id)
    row = RealmDomain.objects.select_for_update().filter(realm=realm, domain=domain).first()
    if row is None:
        raise JsonableError(f"No entry found for domain {domain}.")
    return row


@transaction.atomic
def do_change_realm_domain(realm: Realm, domain: str, allow_subdomains: bool, *, acting_user: "User | None") -> None:
    """Audit: REALM_DOMAIN_CHANGED. Emits: realm_domains/change {realm_domain} to the organization."""
    row = access_realm_domain(realm, domain)
    row.allow_subdomains = allow_subdomains
    row.save(update_fields=["allow_subdomains"])
    shape = {"domain": row.domain, "allow_subdomains": allow_subdomains}
    _domain_changed(realm, AuditLogEventType.REALM_DOMAIN_CHANGED, "changed_domain", shape, acting_user=acting_user)
    send_event_on_commit(realm, {"type": "realm_domains", "op": "change", "realm_domain": shape}, Everyone())


@transaction.atomic
def do_remove_realm_domain(realm: Realm, domain: str, *, acting_user: "User | None") -> None:
    """The last domain removed, the organization no longer restricts addresses to domains (which
    would refuse every address), as Zulip's.

    Audit: REALM_DOMAIN_REMOVED. Emits: realm/update emails_restricted_to_domains (then), and
    realm_domains/remove {domain} to the organization."""
    row = access_realm_domain(realm, domain)
    shape = {"domain": row.domain, "allow_subdomains": row.allow_subdomains}
    row.delete()
    _domain_changed(realm, AuditLogEventType.REALM_DOMAIN_REMOVED, "removed_domain", shape, acting_user=acting_user)
    restricted = Realm.objects.filter(id=realm.id).values_list("emails_restricted_to_domains", flat=True).get()
    if restricted and not RealmDomain.objects.filter(realm=realm).exists():
        do_change_realm_settings(realm, {"emails_restricted_to_domains": False}, acting_user=acting_user)
    send_event_on_commit(realm, {"type": "realm_domains", "op": "remove", "domain": row.domain}, Everyone())
