"""HTTP Basic authentication with an API email and API key (Zulip's scheme)."""

import base64
import binascii
import re

from django.http import HttpRequest

from apps.core.errors import JsonableError, UnauthorizedError
from apps.realms.models import Realm

API_KEY_RE = re.compile(r"[A-Za-z0-9]{32}")


def parse_basic_credentials(request: HttpRequest) -> tuple[str, str]:
    """(email, api_key) from the Authorization header, or the matching 400/401."""
    return parse_basic_header(request.META.get("HTTP_AUTHORIZATION", ""))


def parse_basic_header(header: str) -> tuple[str, str]:
    if not header:
        raise UnauthorizedError()
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        raise JsonableError("This endpoint requires HTTP basic authentication.")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise UnauthorizedError("Invalid authorization header for basic auth") from None
    email, separator, api_key = decoded.partition(":")
    if not separator:
        raise UnauthorizedError("Invalid authorization header for basic auth")
    return email.strip(), api_key.strip()


def authenticate_api_request(request: HttpRequest, realm: Realm):
    """The active user whose API email (or delivery email) and key the request carries."""
    from apps.users.selectors import get_user_by_api_credentials

    email, api_key = parse_basic_credentials(request)
    if not API_KEY_RE.fullmatch(api_key):
        raise UnauthorizedError("Malformed API key")
    user = get_user_by_api_credentials(email, api_key)
    if user is None:
        raise UnauthorizedError("Invalid API key")
    # Zulip's order: the key's own account first, then whether it belongs to this host.
    if user.realm.deactivated:
        raise UnauthorizedError("This organization has been deactivated")
    if not user.is_active:
        raise UnauthorizedError("Account is deactivated")
    if user.realm_id != realm.id:
        raise UnauthorizedError("Account is not associated with this subdomain")
    return user
