"""Users' values of the custom profile fields: what each field type accepts, and who may set them."""

import datetime
import json
from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction

from apps.core.errors import JsonableError
from apps.core.markdown import render_markdown
from apps.events.publish import forget_credentials_on_commit
from apps.users.actions.notify import send_person_update
from apps.users.models import CustomProfileField, CustomProfileFieldValue, User
from apps.users.selectors import access_custom_profile_field, profile_values_of, users_by_id

FieldType = CustomProfileField.FieldType

PROFILE_TEXT_LIMITS = {
    FieldType.SHORT_TEXT: 50,
    FieldType.LONG_TEXT: 500,
    FieldType.EXTERNAL_ACCOUNT: 50,
    FieldType.PRONOUNS: 50,
}


def check_profile_field_value(field: CustomProfileField, value: Any) -> str:
    """The value as stored (a string), or the error Zulip gives for this field type."""
    name = field.name
    if field.field_type == FieldType.USER:
        return _check_user_ids_value(field, value)
    if not isinstance(value, str):
        raise JsonableError(f"{name} is not a string")
    limit = PROFILE_TEXT_LIMITS.get(field.field_type)
    if limit is not None and len(value) > limit:
        raise JsonableError(f"{name} is too long (limit: {limit} characters)")
    if field.field_type == FieldType.DATE:
        try:
            valid = datetime.date.fromisoformat(value).isoformat() == value
        except ValueError:
            valid = False
        if not valid:
            raise JsonableError(f"{name} is not a date")
    elif field.field_type == FieldType.URL:
        try:
            URLValidator()(value)
        except ValidationError:
            raise JsonableError(f"{name} is not a URL") from None
    elif field.field_type == FieldType.SELECT and value not in json.loads(field.field_data or "{}"):
        raise JsonableError(f"'{value}' is not a valid choice for '{name}'.")
    return value


def _check_user_ids_value(field: CustomProfileField, value: Any) -> str:
    if not isinstance(value, list):
        raise JsonableError("User IDs is not a list")
    for index, item in enumerate(value):
        if not isinstance(item, int) or isinstance(item, bool):
            raise JsonableError(f"User IDs[{index}] is not an integer")
    users = users_by_id(field.realm_id, value)
    missing = [str(uid) for uid in value if uid not in users]
    if missing:
        raise JsonableError(f"Invalid user IDs: {', '.join(missing)}")
    for uid in value:
        if not users[uid].is_active:
            raise JsonableError(f"User with ID {uid} is deactivated")
        if users[uid].is_bot:
            raise JsonableError(f"User with ID {uid} is a bot")
    return json.dumps(value)


def _check_may_edit_field(field: CustomProfileField, *, user: User, acting_user: User) -> None:
    if acting_user.id == user.id and not field.editable_by_user and not acting_user.is_admin:
        raise JsonableError("You are not allowed to change this field. Contact an administrator to update it.")


def check_update_user_custom_profile_data(user: User, data: Iterable[tuple[int, Any]], *, acting_user: User) -> None:
    """Set or clear (value None, "" or []) the user's values; all are validated, and the changed
    ones rendered, before any is written.

    Raises "Field id N not found." for fields of other organizations too.
    Emits: realm_user/update {custom_profile_field} for each value that changed.
    """
    if user.is_bot:
        raise JsonableError("Bots have no custom profile fields.")
    changes: list[tuple[CustomProfileField, str | None]] = []
    for field_id, value in data:
        field = access_custom_profile_field(user.realm, field_id)
        _check_may_edit_field(field, user=user, acting_user=acting_user)
        changes.append((field, None if value in (None, "", []) else check_profile_field_value(field, value)))
    current = profile_values_of(user)
    # Unchanged values are neither written nor announced.
    changed = [(field, value, _rendered(field, value)) for field, value in changes if current.get(field.id) != value]
    do_update_user_custom_profile_data(user, changed, acting_user=acting_user)


def _rendered(field: CustomProfileField, value: str | None) -> str:
    if value is None or field.field_type not in CustomProfileField.RENDERED_TYPES:
        return ""
    return render_markdown(value)


@transaction.atomic(savepoint=False)
def do_update_user_custom_profile_data(
    user: User, changes: list[tuple[CustomProfileField, str | None, str]], *, acting_user: User | None
) -> None:
    """Write validated (field, value or None to clear, rendered value) changes, in this order.

    Emits: realm_user/update {custom_profile_field} for each."""
    forget_credentials_on_commit(user_ids=[user.id])  # GET /users/me keeps the values with them
    for field, value, rendered in changes:
        if value is None:
            CustomProfileFieldValue.objects.filter(user=user, field=field).delete()
            send_person_update(user, {"custom_profile_field": {"id": field.id, "value": None}})
            continue
        CustomProfileFieldValue.objects.update_or_create(
            user=user, field=field, defaults={"value": value, "rendered_value": rendered}
        )
        announced = {"id": field.id, "value": value}
        if rendered:
            announced["rendered_value"] = rendered
        send_person_update(user, {"custom_profile_field": announced})


def check_remove_user_custom_profile_data(user: User, field_ids: Iterable[int], *, acting_user: User) -> None:
    check_update_user_custom_profile_data(user, [(fid, None) for fid in field_ids], acting_user=acting_user)
