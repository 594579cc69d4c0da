"""The organization's custom profile fields: their definitions, order and removal (administrators).

Zulip names the checked entry points try_*; here they are check_* (validation, then the do_* write).
"""

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction

from apps.core.errors import JsonableError
from apps.events.publish import forget_credentials_on_commit
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.users.actions.notify import send_custom_profile_fields
from apps.users.errors import ProfileFieldLabelInUseError
from apps.users.models import DEFAULT_EXTERNAL_ACCOUNTS, CustomProfileField, CustomProfileFieldValue, User
from apps.users.selectors import (
    access_custom_profile_field,
    count_profile_fields_in_summary,
    get_custom_profile_fields,
    profile_field_label_in_use,
)

FieldType = CustomProfileField.FieldType


def check_profile_field_definition(
    realm: Realm,
    *,
    name: str,
    hint: str,
    field_type: int,
    field_data: dict[str, Any],
    display_in_profile_summary: bool,
    exclude: CustomProfileField | None = None,
) -> tuple[str, str]:
    """The (name, hint) to store, after Zulip's checks in Zulip's order."""
    if display_in_profile_summary:
        shown = count_profile_fields_in_summary(realm, exclude=exclude)
        if shown >= CustomProfileField.MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS:
            raise JsonableError("Only 2 custom profile fields can be displayed in the profile summary.")
    _check_field_data(field_type, field_data)
    default_account = (
        DEFAULT_EXTERNAL_ACCOUNTS.get(field_data.get("subtype", ""))
        if field_type == FieldType.EXTERNAL_ACCOUNT
        else None
    )
    if default_account is not None:
        name, hint = default_account["name"], ""
    else:
        name = name.strip()
        if not name:
            raise JsonableError("Label cannot be blank.")
        if len(hint) > CustomProfileField.HINT_MAX_LENGTH:
            raise JsonableError(f"hint is too long (limit: {CustomProfileField.HINT_MAX_LENGTH} characters)")
        if len(name) > CustomProfileField.NAME_MAX_LENGTH:
            raise JsonableError(f"name is too long (limit: {CustomProfileField.NAME_MAX_LENGTH} characters)")
    if display_in_profile_summary and field_type in (FieldType.LONG_TEXT, FieldType.USER):
        raise JsonableError("Field type not supported for display in profile summary.")
    return name, hint


def _check_field_data(field_type: int, field_data: dict[str, Any]) -> None:
    if field_type == FieldType.SELECT:
        _check_select_field_data(field_data)
    elif field_type == FieldType.EXTERNAL_ACCOUNT:
        _check_external_account_field_data(field_data)


def _check_select_field_data(field_data: dict[str, Any]) -> None:
    if len(field_data) < 1:
        raise JsonableError("Field must have at least one choice.")
    texts = []
    for key, option in field_data.items():
        if not key.strip():
            raise JsonableError("'value' cannot be blank.")
        if not isinstance(option, dict):
            raise JsonableError(f'field_data["{key}"] is not a dict')
        for required in ("text", "order"):
            if required not in option:
                raise JsonableError(f"{required} key is missing from field_data")
            if not isinstance(option[required], str):
                raise JsonableError(f'field_data["{required}"] is not a string')
            if not option[required].strip():
                raise JsonableError(f'field_data["{required}"] cannot be blank.')
        extra = sorted(set(option) - {"text", "order"})
        if extra:
            raise JsonableError(f"Unexpected arguments: {', '.join(extra)}")
        texts.append(option["text"])
    if len(texts) != len(set(texts)):
        raise JsonableError("Field must not have duplicate choices.")


def _check_external_account_field_data(field_data: dict[str, Any]) -> None:
    if "subtype" not in field_data:
        raise JsonableError("subtype key is missing from field_data")
    extra = sorted(set(field_data) - {"subtype", "url_pattern"})
    if extra:
        raise JsonableError(f"Unexpected arguments: {', '.join(extra)}")
    subtype = field_data["subtype"]
    if not isinstance(subtype, str):
        raise JsonableError('field_data["subtype"] is not a string')
    if not subtype.strip():
        raise JsonableError('field_data["subtype"] cannot be blank.')
    url_pattern = field_data.get("url_pattern")
    if url_pattern is not None:
        if not isinstance(url_pattern, str):
            raise JsonableError('field_data["url_pattern"] is not a string')
        try:
            URLValidator()(url_pattern.replace("%(username)s", "username"))
        except ValidationError:
            raise JsonableError('field_data["url_pattern"] is not a URL') from None
        if url_pattern.count("%(username)s") != 1:
            raise JsonableError("URL pattern must contain '%(username)s'.")
    if subtype == "custom" and url_pattern is None:
        raise JsonableError("Custom external account must define URL pattern")
    if subtype != "custom" and subtype not in DEFAULT_EXTERNAL_ACCOUNTS:
        raise JsonableError("Invalid external account type")


def _field_data_text(field_type: int, field_data: dict[str, Any]) -> str:
    if field_type in (FieldType.SELECT, FieldType.EXTERNAL_ACCOUNT):
        return json.dumps(field_data)
    return ""


def _field_data_dict(field: CustomProfileField) -> dict[str, Any]:
    return json.loads(field.field_data) if field.field_data else {}


def check_add_realm_custom_profile_field(
    realm: Realm,
    *,
    name: str,
    hint: str,
    field_type: int,
    field_data: dict[str, Any],
    display_in_profile_summary: bool,
    required: bool,
    editable_by_user: bool,
    acting_user: User | None,
) -> CustomProfileField:
    """Add a field at the end of the order. Raises the validation errors of Zulip, in its order."""
    name, hint = check_profile_field_definition(
        realm,
        name=name,
        hint=hint,
        field_type=field_type,
        field_data=field_data,
        display_in_profile_summary=display_in_profile_summary,
    )
    if profile_field_label_in_use(realm, name):
        raise ProfileFieldLabelInUseError()
    field = CustomProfileField(
        realm=realm,
        name=name,
        hint=hint,
        field_type=field_type,
        field_data=_field_data_text(field_type, field_data),
        display_in_profile_summary=display_in_profile_summary,
        required=required,
        editable_by_user=editable_by_user,
    )
    return do_add_realm_custom_profile_field(field, acting_user=acting_user)


@transaction.atomic
def do_add_realm_custom_profile_field(field: CustomProfileField, *, acting_user: User | None) -> CustomProfileField:
    """Save a validated new field at the end of the order.

    Raises "A field with that label already exists." for a label another request took meanwhile.
    Audit: CUSTOM_PROFILE_FIELD_CREATED {field_id, name, field_type}. Emits: custom_profile_fields
    (as do the other definition changes below).
    """
    _save_with_free_label(field)
    field.order = field.id
    field.save(update_fields=["order"])
    audit(
        field.realm_id,
        AuditLogEventType.CUSTOM_PROFILE_FIELD_CREATED,
        extra_data={"field_id": field.id, "name": field.name, "field_type": field.field_type},
        acting_user=acting_user,
    )
    send_custom_profile_fields(field.realm)
    return field


def _save_with_free_label(field: CustomProfileField) -> None:
    """Save the field; a label another request took since it was checked gets the same error."""
    try:
        with transaction.atomic():
            field.save()
    except IntegrityError:
        raise ProfileFieldLabelInUseError() from None


# The definition's properties an update may change, as the audit log names them.
UPDATABLE = ("name", "hint", "field_data", "display_in_profile_summary", "required", "editable_by_user")


def check_update_realm_custom_profile_field(
    field: CustomProfileField,
    *,
    name: str | None = None,
    hint: str | None = None,
    field_data: dict[str, Any] | None = None,
    display_in_profile_summary: bool | None = None,
    required: bool | None = None,
    editable_by_user: bool | None = None,
    acting_user: User | None,
) -> None:
    """Change a field's definition (None: unchanged). Options removed from a list field clear the
    users' values."""
    old_data = _field_data_dict(field)
    new_summary = field.display_in_profile_summary if display_in_profile_summary is None else display_in_profile_summary
    new_data = old_data if field_data is None else field_data
    is_default_account = (
        field.field_type == FieldType.EXTERNAL_ACCOUNT and old_data.get("subtype") in DEFAULT_EXTERNAL_ACCOUNTS
    )
    if is_default_account and (name is not None or hint is not None or field_data is not None):
        raise JsonableError("Default custom field cannot be updated.")
    new_name, new_hint = check_profile_field_definition(
        field.realm,
        name=field.name if name is None else name,
        hint=field.hint if hint is None else hint,
        field_type=field.field_type,
        field_data=new_data,
        display_in_profile_summary=new_summary,
        exclude=field,
    )
    if profile_field_label_in_use(field.realm, new_name, exclude=field):
        raise ProfileFieldLabelInUseError()
    new = {
        "name": new_name,
        "hint": new_hint,
        "field_data": new_data,
        "display_in_profile_summary": new_summary,
        "required": field.required if required is None else required,
        "editable_by_user": field.editable_by_user if editable_by_user is None else editable_by_user,
    }
    do_update_realm_custom_profile_field(field, new, acting_user=acting_user)


@transaction.atomic
def do_update_realm_custom_profile_field(
    field: CustomProfileField, new: dict[str, Any], *, acting_user: User | None
) -> None:
    """Give the field the validated definition `new` (every property in UPDATABLE); a list field's
    options no longer offered clear the users' values of them. Raises for a label taken meanwhile.

    Audit: CUSTOM_PROFILE_FIELD_CHANGED {property, old and new value, field_id} for each property
    that changes. Emits: custom_profile_fields (even when nothing changes, as Zulip does).
    "Field id N not found." when removed meanwhile.
    """
    access_custom_profile_field(field.realm, field.id, lock=True)
    old = {prop: getattr(field, prop) for prop in UPDATABLE} | {"field_data": _field_data_dict(field)}
    for prop in UPDATABLE:
        setattr(field, prop, new[prop])
    field.field_data = _field_data_text(field.field_type, new["field_data"])
    new = {**new, "field_data": _field_data_dict(field)}  # as stored: only list and account fields keep data
    removed = set(old["field_data"]) - set(new["field_data"])
    if field.field_type == FieldType.SELECT and removed:
        CustomProfileFieldValue.objects.filter(field=field, value__in=removed).delete()
        # GET /users/me keeps a user's values with their cached credentials.
        forget_credentials_on_commit(realm_ids=[field.realm_id])
    _save_with_free_label(field)
    for prop in UPDATABLE:
        if old[prop] != new[prop]:
            audit(
                field.realm_id,
                AuditLogEventType.CUSTOM_PROFILE_FIELD_CHANGED,
                extra_data=changed(prop, old[prop], new[prop], field_id=field.id),
                acting_user=acting_user,
            )
    send_custom_profile_fields(field.realm)


@transaction.atomic
def do_remove_realm_custom_profile_field(field: CustomProfileField, *, acting_user: User | None) -> None:
    """Delete the field and every user's value for it, once ("Field id N not found." when removed
    meanwhile).

    Audit: CUSTOM_PROFILE_FIELD_REMOVED {field_id, name}. Emits: custom_profile_fields."""
    realm, field_id = field.realm, field.id
    access_custom_profile_field(realm, field_id, lock=True)
    field.delete()
    forget_credentials_on_commit(realm_ids=[realm.id])  # GET /users/me keeps users' values with them
    audit(
        realm,
        AuditLogEventType.CUSTOM_PROFILE_FIELD_REMOVED,
        extra_data={"field_id": field_id, "name": field.name},
        acting_user=acting_user,
    )
    send_custom_profile_fields(realm)


def check_reorder_realm_custom_profile_fields(realm: Realm, order: list[int], *, acting_user: User | None) -> None:
    """Each field's `order` becomes its index in `order`, which must list each field of the
    organization exactly once and nothing else (Zulip only checks that none is missing): an id of
    another organization's field, or of none, is refused like a missing one, and nothing changes."""
    fields = {f.id: f for f in get_custom_profile_fields(realm)}
    if sorted(order) != sorted(fields):
        raise JsonableError("Invalid order mapping.")
    do_reorder_realm_custom_profile_fields(realm, [fields[field_id] for field_id in order], acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_reorder_realm_custom_profile_fields(
    realm: Realm, fields: list[CustomProfileField], *, acting_user: User | None
) -> None:
    """Number every field of the organization (all of them, as read) in the order given.

    Audit: CUSTOM_PROFILE_FIELDS_REORDERED {old and new order of ids} when the order changes.
    Emits: custom_profile_fields."""
    old_order = [f.id for f in sorted(fields, key=lambda f: (f.order, f.id))]
    for index, field in enumerate(fields):
        field.order = index
    CustomProfileField.objects.bulk_update(fields, ["order"])
    new_order = [f.id for f in fields]
    if old_order != new_order:
        audit(
            realm,
            AuditLogEventType.CUSTOM_PROFILE_FIELDS_REORDERED,
            extra_data=changed("order", old_order, new_order),
            acting_user=acting_user,
        )
    send_custom_profile_fields(realm)
