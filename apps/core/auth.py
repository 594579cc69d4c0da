"""Who a request comes from: HTTP Basic with an API email and key (Zulip's scheme), and the
organization its host names. The same rules serve REST framework views (apps.core.authentication),
async views (apps.core.api) and the long-poll route (apps.events.longpoll).

Core imports no domain app: finding organizations and users belongs to apps.realms and apps.users,
and apps.users registers the lookups here when Django starts (`register_accounts`), as apps
register their event types with apps.events.
"""

import base64
import binascii
import re
from collections.abc import Callable
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from apps.core.errors import JsonableError, RealmDeactivatedError, UnauthorizedError, UserDeactivatedError
from apps.core.notes import request_notes

API_KEY_RE = re.compile(r"[A-Za-z0-9]{32}")


class Accounts(Protocol):
    """The lookups authentication needs (implemented by apps.users)."""

    def realm_for_host(self, host: str) -> Any:
        """The organization `host` names; InvalidSubdomainError when there is none."""

    def user_by_api_key(self, email: str, api_key: str) -> Any | None:
        """The user (of any organization, active or not) with this API email and key."""

    def active_user_id_by_api_key(self, realm: Any, email: str, api_key: str) -> int | None:
        """The id of the active user of the active `realm` with these credentials, in one light
        query; None in every other case (the caller then authenticates fully)."""

    def user_for_credentials(self, host: str, realm: Any, authorization: str, load: Callable[[], Any]) -> Any:
        """The user `load()` finds for this Authorization header on `realm` (reached as `host`),
        remembered from a recent request when nothing has changed since that could change the answer."""


_accounts: Accounts | None = None


def register_accounts(accounts: Accounts) -> None:
    global _accounts
    _accounts = accounts


def accounts() -> Accounts:
    if _accounts is None:
        raise ImproperlyConfigured("no accounts are registered: apps.users must be installed")
    return _accounts


def realm_for_request(request: HttpRequest) -> Any:
    """The request's organization (looked up once per request); 404 NONEXISTENT_SUBDOMAIN when none."""
    notes = request_notes(request)
    if notes.realm is None:
        notes.realm = accounts().realm_for_host(request.get_host())
    return notes.realm


INCOMING_WEBHOOK_REFUSED = "This API is not available to incoming webhook bots."


def authenticated_user(request: HttpRequest, *, incoming_webhook_bots: bool = False) -> Any:
    """The active user of the request's organization its Authorization header names, or the error
    user_for_authorization gives; a header that authenticated lately is not looked up again (the
    accounts' cache, dropped by every change that could change the answer).

    An incoming webhook bot's key only sends messages: the endpoints that accept it (POST
    /messages) say so with `incoming_webhook_bots`; everywhere else it is refused, as in Zulip
    (401, with the key's other errors)."""
    realm = realm_for_request(request)
    header = request.META.get("HTTP_AUTHORIZATION", "")
    user = accounts().user_for_credentials(
        request.get_host().lower(), realm, header, lambda: user_for_authorization(realm, header)
    )
    if user.is_incoming_webhook and not incoming_webhook_bots:
        raise UnauthorizedError(INCOMING_WEBHOOK_REFUSED)
    return user


class BasicAuthRequiredError(JsonableError):
    """Credentials in another scheme than HTTP Basic: a 400 on the messaging API, as Zulip answers;
    the directory API answers it as its other credential problems, a 401."""

    def __init__(self) -> None:
        super().__init__("This endpoint requires HTTP basic authentication.")


def parse_basic_header(header: str) -> tuple[str, str]:
    """(email, api_key) from an Authorization header, or the matching 400/401."""
    if not header:
        raise UnauthorizedError()
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        raise BasicAuthRequiredError()
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise UnauthorizedError("Invalid authorization header for basic auth") from None
    email, separator, api_key = decoded.partition(":")
    if not separator:
        raise UnauthorizedError("Invalid authorization header for basic auth")
    return email.strip(), api_key.strip()


def user_for_authorization(realm: Any, authorization: str) -> Any:
    """The active user of `realm` whose API email (or delivery email) and key the header carries,
    or the error saying what is wrong, in Zulip's order: the key's own account first, then
    whether it belongs to this host."""
    email, api_key = parse_basic_header(authorization)
    if not API_KEY_RE.fullmatch(api_key):
        raise UnauthorizedError("Malformed API key")
    user = accounts().user_by_api_key(email, api_key)
    # A system bot (the Welcome Bot, the Notification Bot) is the server's own voice: its key signs
    # nobody in, whoever learned it (the verify QA pass: a key read out of the admin sent as it).
    if user is None or user.is_system_bot:
        raise UnauthorizedError("Invalid API key")
    # Zulip's codes for these (REALM_DEACTIVATED, USER_DEACTIVATED), as fetch_api_key answers them.
    if user.realm.deactivated:
        raise RealmDeactivatedError()
    if not user.is_active:
        raise UserDeactivatedError()
    if user.realm_id != realm.id:
        raise UnauthorizedError("Account is not associated with this subdomain")
    return user
