"""Reads of organizations, and which organization a request's host names."""

import hashlib

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port

from apps.core.errors import InvalidSubdomainError
from apps.realms.models import Realm
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


def get_realm_for_request(request: HttpRequest) -> Realm:
    """The request's organization; 404 NONEXISTENT_SUBDOMAIN when there is none (or it is cached)."""
    realm = getattr(request, "realm", None)
    if realm is None:
        string_id = subdomain_for_host(request.get_host())
        realm = Realm.objects.filter(string_id=string_id).first()
        if realm is None:
            raise InvalidSubdomainError()
        request.realm = realm
    return realm


def realm_icon_url(realm: Realm) -> str:
    digest = hashlib.md5(realm.string_id.encode(), usedforsecurity=False).hexdigest()
    return f"https://secure.gravatar.com/avatar/{digest}?d=identicon"
