"""Reads of organizations, and which organization a request's host names."""

import functools
import hashlib
import time
from collections.abc import Collection
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.staticfiles.storage import staticfiles_storage
from django.db.models import QuerySet
from django.http.request import split_domain_port

from apps.core.cache import instance_copy
from apps.core.errors import InvalidSubdomainError
from apps.core.markdown import render_description
from apps.events.credentials import credential_cache
from apps.realms.models import Realm, RealmAuditLog, RealmDomain
from config.env import is_ip_address


def subdomain_for_host(host: str) -> str:
    """The organization's `string_id` for a Host header value.

    `acme.<EXTERNAL_HOST>` names "acme"; the bare EXTERNAL_HOST, `localhost`, IP addresses and any
    other host reach the default organization (""), as in Zulip.
    """
    hostname, _ = split_domain_port(host)
    external_hostname, _ = split_domain_port(settings.EXTERNAL_HOST)
    if hostname in ("", "localhost", external_hostname) or is_ip_address(hostname):
        return Realm.DEFAULT_STRING_ID
    suffix = f".{external_hostname}"
    if hostname.endswith(suffix):
        return hostname.removesuffix(suffix)
    return Realm.DEFAULT_STRING_ID


class RealmCache:
    """Organizations by `string_id`, per process: nearly every request needs one. Entries live
    CREDENTIAL_CACHE_SECONDS and are dropped in every process when the organization changes
    (apps.events.publish.forget_credentials_on_commit)."""

    MAX_ENTRIES = 10_000

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Realm, float]] = {}
        # Counts forgets: read it before the database lookup, pass it to put(), so that a row read
        # before a change is not cached after the change was announced (as the credential cache).
        self.generation = 0

    def get(self, string_id: str) -> Realm | None:
        if not credential_cache.trusted:  # this process cannot hear of changes for now
            return None
        entry = self._entries.get(string_id)
        if entry is None or entry[1] < time.monotonic():
            return None
        return instance_copy(entry[0])  # each request gets its own instance to use as it likes

    def put(self, realm: Realm, generation: int) -> None:
        if generation != self.generation:
            return
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[realm.string_id] = (instance_copy(realm), time.monotonic() + settings.CREDENTIAL_CACHE_SECONDS)

    def forget(self, realm_ids: list[int]) -> None:
        self.generation += 1
        for string_id, (realm, _) in list(self._entries.items()):
            if realm.id in realm_ids:
                self._entries.pop(string_id, None)

    def clear(self) -> None:
        self.generation += 1
        self._entries.clear()


realm_cache = RealmCache()


def get_realm(string_id: str) -> Realm | None:
    """The organization with this `string_id` ("" is the default organization), or None."""
    return Realm.objects.filter(string_id=string_id).first()


def realm_string_id_in_use(string_id: str) -> bool:
    return Realm.objects.filter(string_id=string_id).exists()


def realm_for_host(host: str) -> Realm:
    """The organization a Host header names; 404 NONEXISTENT_SUBDOMAIN when there is none.

    Requests ask through apps.core.auth.realm_for_request, which apps.users points here."""
    string_id = subdomain_for_host(host)
    realm = realm_cache.get(string_id)
    if realm is None:
        generation = realm_cache.generation
        realm = get_realm(string_id)
        if realm is None:
            raise InvalidSubdomainError()
        realm_cache.put(realm, generation)
    return realm


def default_picture_url() -> str:
    """The picture of someone without one, or of an organization without an icon, when Gravatar is
    off: DEFAULT_AVATAR_URI, else the server's own (a static file)."""
    return settings.DEFAULT_AVATAR_URI or staticfiles_storage.url("realms/default-picture.png")


def realm_icon_url(realm: Realm) -> str:
    """Gravatar's identicon of the organization's id (Zulip's default icon: each organization its
    own, the default one's too, whose name is empty); with ENABLE_GRAVATAR off, the default picture."""
    if not settings.ENABLE_GRAVATAR:
        return default_picture_url()
    digest = hashlib.md5(str(realm.id).encode(), usedforsecurity=False).hexdigest()
    return f"https://secure.gravatar.com/avatar/{digest}?d=identicon"


def rendered_realm_description(realm: Realm) -> str:
    """The organization's description as HTML (the login page, /server_settings), rendered as a
    channel's is, as Zulip renders it: mentions name people, channel links link the public channels
    (nobody in particular reads it), emoji are pictures. Per process and per text: the same
    description is rendered once, and a changed one anew; but one linking a channel each time (the
    verify QA pass: a channel made private stayed linked, to anyone)."""
    html = _rendered_description(realm.id, realm.description)
    if 'class="stream' in html:
        return render_description(realm.id, realm.description, acting_user=None)
    return html


@functools.lru_cache(maxsize=256)
def _rendered_description(realm_id: int, description: str) -> str:
    return render_description(realm_id, description, acting_user=None) if description else ""


def audit_log_entries(
    realm: Realm,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    event_types: Collection[int] | None = None,
) -> QuerySet[RealmAuditLog]:
    """The organization's audit log, oldest first, within [since, until) and of these types."""
    entries = RealmAuditLog.objects.filter(realm=realm).order_by("event_time", "id")
    if since is not None:
        entries = entries.filter(event_time__gte=since)
    if until is not None:
        entries = entries.filter(event_time__lt=until)
    if event_types is not None:
        entries = entries.filter(event_type__in=event_types)
    return entries


def lock_realm(realm_id: int) -> None:
    """Hold the organization's row until the transaction ends (call in one): changes that must see
    each other's (names, domains, the only owner, subgroups, what uses a group being deactivated)
    take turns on it. FOR NO KEY UPDATE: rows that merely refer to the organization (every audit
    entry, every event) are written meanwhile; with FOR UPDATE a change holding another row (an
    invitation, a group) and writing its audit entry waited for the lock while its holder waited
    for that row: a deadlock."""
    Realm.objects.select_for_update(no_key=True).filter(id=realm_id).values_list("id", flat=True).first()


def realm_domains(realm: Realm) -> list[dict[str, Any]]:
    """Zulip's realm_domains: the organization's allowed domains, in the order they were added."""
    return list(RealmDomain.objects.filter(realm=realm).order_by("id").values("domain", "allow_subdomains"))
