"""Changing an organization's linkifiers: administrators (the API, the admin, edit_linkifiers).

Every change is checked (apps.linkifiers.patterns) before it is written, is recorded in the audit
log, tells every user's queues (realm_linkifiers, to clients that take URL templates) and drops the
organization's cached linkifiers when it commits.
"""

from collections.abc import Sequence

from django.db import IntegrityError, transaction
from django.db.models import Max

from apps.core.cache import forget
from apps.core.errors import JsonableError
from apps.events.publish import Everyone, send_event_on_commit
from apps.linkifiers.errors import LinkifierValidationError
from apps.linkifiers.models import Linkifier
from apps.linkifiers.patterns import LinkifierFields, LinkifierInvalid, check_linkifier_fields
from apps.linkifiers.selectors import (
    access_linkifier_by_id,
    cache_key,
    linkifier_dicts,
    linkifier_to_dict,
    pattern_in_use,
)
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType, Realm
from apps.realms.selectors import lock_realm
from apps.users.models import User

# Django's message for the unique constraint, as Zulip words it (its model is "realm filter").
DUPLICATE_PATTERN = "Realm filter with this Realm and Pattern already exists."


def check_fields(fields: LinkifierFields) -> LinkifierFields:
    try:
        return check_linkifier_fields(fields)
    except LinkifierInvalid as invalid:
        raise LinkifierValidationError(invalid) from None


def _duplicate_pattern() -> LinkifierValidationError:
    return LinkifierValidationError(LinkifierInvalid({"__all__": [DUPLICATE_PATTERN]}))


def check_add_linkifier(realm: Realm, *, fields: LinkifierFields, acting_user: User | None) -> Linkifier:
    """POST /realm/filters: a linkifier checked, then added after the others."""
    return do_add_linkifier(realm, fields=check_fields(fields), acting_user=acting_user)


@transaction.atomic
def do_add_linkifier(realm: Realm, *, fields: LinkifierFields, acting_user: User | None) -> Linkifier:
    """Add a checked linkifier, last in the organization's order. Refused when the organization has
    one with this pattern (another request's too: the unique constraint, in a savepoint).

    Emits: realm_linkifiers to every active user.
    """
    if pattern_in_use(realm, fields.pattern):
        raise _duplicate_pattern()
    last = Linkifier.objects.filter(realm=realm).aggregate(last=Max("order"))["last"]
    linkifier = Linkifier(realm=realm, order=0 if last is None else last + 1, **_columns(fields))
    try:
        with transaction.atomic():
            linkifier.save()
    except IntegrityError:
        raise _duplicate_pattern() from None
    _changed(realm, AuditLogEventType.REALM_LINKIFIER_ADDED, acting_user, added_linkifier=linkifier_to_dict(linkifier))
    return linkifier


def check_update_linkifier(linkifier: Linkifier, *, fields: LinkifierFields, acting_user: User | None) -> None:
    """PATCH /realm/filters/{id}: the linkifier replaced by these fields, checked."""
    do_update_linkifier(linkifier, fields=check_fields(fields), acting_user=acting_user)


@transaction.atomic
def do_update_linkifier(linkifier: Linkifier, *, fields: LinkifierFields, acting_user: User | None) -> None:
    """Replace a linkifier's fields with checked ones (its place in the order stays). Refused when
    another linkifier of the organization has the pattern.

    Emits: realm_linkifiers to every active user.
    """
    realm = linkifier.realm
    access_linkifier_by_id(realm, linkifier.id, lock=True)  # not removed meanwhile
    if pattern_in_use(realm, fields.pattern, exclude=linkifier):
        raise _duplicate_pattern()
    for name, value in _columns(fields).items():
        setattr(linkifier, name, value)
    try:
        with transaction.atomic():
            linkifier.save(update_fields=list(_columns(fields)))
    except IntegrityError:
        raise _duplicate_pattern() from None
    _changed(
        realm, AuditLogEventType.REALM_LINKIFIER_CHANGED, acting_user, changed_linkifier=linkifier_to_dict(linkifier)
    )


@transaction.atomic
def do_remove_linkifier(linkifier: Linkifier, *, acting_user: User | None) -> None:
    """Delete a linkifier, once ("Linkifier not found." when removed meanwhile). Messages rendered
    with it keep their links (as in Zulip); topic links, computed when messages are read, no longer
    have its.

    Emits: realm_linkifiers to every active user.
    """
    access_linkifier_by_id(linkifier.realm, linkifier.id, lock=True)
    removed = linkifier_to_dict(linkifier)
    linkifier.delete()
    _changed(linkifier.realm, AuditLogEventType.REALM_LINKIFIER_REMOVED, acting_user, removed_linkifier=removed)


@transaction.atomic
def check_reorder_linkifiers(realm: Realm, *, ordered_ids: Sequence[int], acting_user: User | None) -> None:
    """PATCH /realm/linkifiers: the organization's linkifiers in this order, which names each of
    them exactly once (read under a lock, so that none is added or removed meanwhile).

    Emits: realm_linkifiers to every active user (nothing when nothing moves).
    """
    if len(set(ordered_ids)) < len(ordered_ids):
        raise JsonableError("The ordered list must not contain duplicated linkifiers")
    lock_realm(realm.id)
    linkifiers = list(Linkifier.objects.filter(realm=realm).order_by("order", "id"))
    if {linkifier.id for linkifier in linkifiers} != set(ordered_ids):
        raise JsonableError("The ordered list must enumerate all existing linkifiers exactly once")
    position = {linkifier_id: order for order, linkifier_id in enumerate(ordered_ids)}
    if all(linkifier.order == position[linkifier.id] for linkifier in linkifiers):
        return
    for linkifier in linkifiers:
        linkifier.order = position[linkifier.id]
    Linkifier.objects.bulk_update(linkifiers, ["order"])
    _changed(realm, AuditLogEventType.REALM_LINKIFIERS_REORDERED, acting_user)


def _columns(fields: LinkifierFields) -> dict:
    return {
        "pattern": fields.pattern,
        "url_template": fields.url_template,
        "example_input": fields.example_input or "",
        "reverse_template": fields.reverse_template or "",
        "alternative_url_templates": list(fields.alternative_url_templates),
    }


def _changed(realm: Realm, event_type: AuditLogEventType, acting_user: User | None, **what) -> None:
    """What every change ends with: the audit entry (the whole list after it, as Zulip records),
    the events, and the cached list dropped once committed."""
    linkifiers = linkifier_dicts(realm.id)
    audit(realm, event_type, extra_data={"realm_linkifiers": linkifiers, **what}, acting_user=acting_user)
    send_event_on_commit(realm, {"type": "realm_linkifiers", "realm_linkifiers": linkifiers}, Everyone())
    # Dropped at once too, for this process's next read (a rollback only costs a refill).
    forget(cache_key(realm.id))
    transaction.on_commit(lambda: forget(cache_key(realm.id)))
