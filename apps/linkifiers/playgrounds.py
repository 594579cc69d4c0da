"""Code playgrounds (Zulip's realm playgrounds): administrators add them (POST /realm/playgrounds)
and remove them (DELETE /realm/playgrounds/{id}); everyone gets the organization's list in
`realm_playgrounds` (POST /register) and the whole list again in a `realm_playgrounds` event after
each change. Checked as Zulip checks them, in its words; a URL template must also expand to an
http(s) URL, as a linkifier's must (clients turn it into a link)."""

import re
from typing import Any

from django.db import IntegrityError, transaction

from apps.core.errors import JsonableError
from apps.events.publish import Everyone, send_event_on_commit
from apps.linkifiers.models import Playground
from apps.linkifiers.patterns import template_variables
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType, Realm
from apps.users.models import User

_PYGMENTS_LANGUAGE = re.compile(r"[ a-zA-Z0-9_+\-./#]*")
DUPLICATE = "Realm playground with this Realm, Pygments language and Name already exists."


class PlaygroundValidationError(JsonableError):
    """Zulip's ValidationFailureError: the problem as the message, and by field in `errors`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, errors={field: [message]})


def playground_to_dict(playground: Playground) -> dict[str, Any]:
    return {
        "id": playground.id,
        "name": playground.name,
        "pygments_language": playground.pygments_language,
        "url_template": playground.url_template,
    }


def playgrounds_for_realm(realm_id: int) -> list[dict[str, Any]]:
    """Zulip's realm_playgrounds: the organization's playgrounds, oldest first."""
    return [
        playground_to_dict(playground) for playground in Playground.objects.filter(realm_id=realm_id).order_by("id")
    ]


def access_playground_by_id(realm: Realm, playground_id: int) -> Playground:
    playground = Playground.objects.filter(realm=realm, id=playground_id).first()
    if playground is None:
        raise JsonableError("Invalid playground")
    return playground


def check_playground(name: str, pygments_language: str, url_template: str) -> tuple[str, str, str]:
    """The fields stripped, or the first problem with them (Zulip's order and words)."""
    name, pygments_language, url_template = name.strip(), pygments_language.strip(), url_template.strip()
    if not name:
        raise PlaygroundValidationError("name", "This field cannot be blank.")
    if len(name) > Playground.MAX_NAME_LENGTH:
        raise PlaygroundValidationError(
            "name", f"Ensure this value has at most {Playground.MAX_NAME_LENGTH} characters (it has {len(name)})."
        )
    if not pygments_language:
        raise PlaygroundValidationError("pygments_language", "This field cannot be blank.")
    if len(pygments_language) > Playground.MAX_PYGMENTS_LANGUAGE_LENGTH:
        raise PlaygroundValidationError(
            "pygments_language",
            f"Ensure this value has at most {Playground.MAX_PYGMENTS_LANGUAGE_LENGTH} characters "
            f"(it has {len(pygments_language)}).",
        )
    if not _PYGMENTS_LANGUAGE.fullmatch(pygments_language):
        raise JsonableError("Invalid characters in pygments language")
    try:
        variables = set(template_variables(url_template))
    except ValueError as exc:
        raise PlaygroundValidationError("url_template", str(exc)) from None
    if "code" not in variables:
        raise PlaygroundValidationError("__all__", 'Missing the required variable "code" in the URL template')
    if len(variables) != 1:
        raise PlaygroundValidationError("__all__", '"code" should be the only variable present in the URL template')
    return name, pygments_language, url_template


@transaction.atomic
def check_add_playground(
    realm: Realm, *, name: str, pygments_language: str, url_template: str, acting_user: User | None
) -> Playground:
    """POST /realm/playgrounds. One name per language in an organization (another request's
    too: the unique constraint, in a savepoint).

    Audit: REALM_PLAYGROUND_ADDED. Emits: realm_playgrounds to every active user."""
    name, pygments_language, url_template = check_playground(name, pygments_language, url_template)
    playground = Playground(realm=realm, name=name, pygments_language=pygments_language, url_template=url_template)
    try:
        with transaction.atomic():
            playground.save()
    except IntegrityError:
        raise PlaygroundValidationError("__all__", DUPLICATE) from None
    _changed(
        realm, AuditLogEventType.REALM_PLAYGROUND_ADDED, acting_user, added_playground=playground_to_dict(playground)
    )
    return playground


@transaction.atomic
def do_remove_playground(playground: Playground, *, acting_user: User | None) -> None:
    """DELETE /realm/playgrounds/{id}; "Invalid playground" if it was removed meanwhile.

    Audit: REALM_PLAYGROUND_REMOVED. Emits: realm_playgrounds to every active user."""
    removed = playground_to_dict(playground)
    if not Playground.objects.filter(id=playground.id).delete()[0]:
        raise JsonableError("Invalid playground")
    _changed(playground.realm, AuditLogEventType.REALM_PLAYGROUND_REMOVED, acting_user, removed_playground=removed)


def _changed(realm: Realm, event_type: AuditLogEventType, acting_user: User | None, **what) -> None:
    playgrounds = playgrounds_for_realm(realm.id)
    audit(realm, event_type, extra_data={"realm_playgrounds": playgrounds, **what}, acting_user=acting_user)
    send_event_on_commit(realm, {"type": "realm_playgrounds", "realm_playgrounds": playgrounds}, Everyone())
