"""Reads of linkifiers, and the cache every message rendering goes through.

An organization's linkifiers are read once per rendering (a message sent, a page of messages'
topic links), from Django's cache (Redis when configured: shared by every process), and compiled
once per process for each distinct list. A change deletes the cached list when it commits
(apps.linkifiers.actions); entries also expire after LINKIFIER_CACHE_SECONDS, which bounds how
long a process without the shared cache (the embedded default: a command changing linkifiers
beside the server) renders with the old ones. When the cache cannot be reached, the database
answers.
"""

from functools import lru_cache
from typing import Any

from django.conf import settings

from apps.core.cache import cached
from apps.linkifiers.errors import LinkifierNotFoundError
from apps.linkifiers.models import Linkifier
from apps.linkifiers.patterns import CompiledLinkifier, LinkifierRules
from apps.realms.models import Realm


def linkifier_to_dict(linkifier: Linkifier) -> dict[str, Any]:
    """Zulip's Linkifier object."""
    return {
        "id": linkifier.id,
        "pattern": linkifier.pattern,
        "url_template": linkifier.url_template,
        "example_input": linkifier.example_input or None,
        "reverse_template": linkifier.reverse_template or None,
        "alternative_url_templates": list(linkifier.alternative_url_templates),
    }


def legacy_tuples(linkifiers: list[dict[str, Any]]) -> list[list[Any]]:
    """The linkifiers in the shape of Zulip's deprecated realm_filters: [pattern, URL template, id]."""
    return [[linkifier["pattern"], linkifier["url_template"], linkifier["id"]] for linkifier in linkifiers]


def linkifiers_in_order(realm_id: int) -> list[Linkifier]:
    return list(Linkifier.objects.filter(realm_id=realm_id).order_by("order", "id"))


def linkifier_dicts(realm_id: int) -> list[dict[str, Any]]:
    """The organization's linkifiers, in their order, from the database."""
    return [linkifier_to_dict(linkifier) for linkifier in linkifiers_in_order(realm_id)]


def cache_key(realm_id: int) -> str:
    return f"linkifiers:{realm_id}"


def linkifiers_for_realm(realm_id: int) -> list[dict[str, Any]]:
    """The organization's linkifiers, in their order (GET /realm/linkifiers), through the cache."""
    return cached(cache_key(realm_id), lambda: linkifier_dicts(realm_id), settings.LINKIFIER_CACHE_SECONDS)


def linkifier_rules(realm_id: int) -> LinkifierRules:
    """The organization's linkifiers, compiled, ready for apps.messages to render with."""
    linkifiers = linkifiers_for_realm(realm_id)
    return _compiled(tuple((linkifier["pattern"], linkifier["url_template"]) for linkifier in linkifiers))


@lru_cache(maxsize=512)
def _compiled(linkifiers: tuple[tuple[str, str], ...]) -> LinkifierRules:
    return LinkifierRules([CompiledLinkifier(pattern, url_template) for pattern, url_template in linkifiers])


def access_linkifier_by_id(realm: Realm, linkifier_id: int, *, lock: bool = False) -> Linkifier:
    """The organization's linkifier; "Linkifier not found." for any other id. `lock`: its row
    locked until the transaction ends (a change or removal at the same moment waits, then finds it
    as it is, or gone)."""
    linkifiers = Linkifier.objects.filter(realm=realm, id=linkifier_id)
    linkifier = (linkifiers.select_for_update() if lock else linkifiers).first()
    if linkifier is None:
        raise LinkifierNotFoundError()
    return linkifier


def pattern_in_use(realm: Realm, pattern: str, *, exclude: Linkifier | None = None) -> bool:
    linkifiers = Linkifier.objects.filter(realm=realm, pattern=pattern)
    if exclude is not None:
        linkifiers = linkifiers.exclude(id=exclude.id)
    return linkifiers.exists()
