"""Changing a user's attributes: name, email, avatar, API key, bot owner, the special permissions
operators grant, and PATCH /users/{id}, which composes them with role and profile data. (The user
settings of PATCH /settings, time zone included, are apps/users/actions/settings.py's.)"""

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from apps.core.errors import JsonableError
from apps.events.publish import forget_credentials_on_commit
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType
from apps.users.actions.create_user import check_email, check_email_available, check_full_name, generate_api_key
from apps.users.actions.notify import (
    audit_user_change,
    send_avatar_update,
    send_delivery_email_update,
    send_person_update,
)
from apps.users.actions.profile_data import check_update_user_custom_profile_data
from apps.users.actions.roles import check_change_user_role
from apps.users.errors import EmailInUseError
from apps.users.models import User
from apps.users.selectors import api_email


@transaction.atomic
def check_update_user(
    target: User,
    *,
    full_name: str | None,
    role: int | None,
    profile_data: list[tuple[int, Any]] | None,
    new_email: str | None,
    acting_user: User,
) -> None:
    """PATCH /users/{id}: all the requested changes, or none of them when one is refused. A blank or
    unchanged name is no change (Zulip's rule: older accounts keep names no longer allowed)."""
    if full_name is not None and full_name.strip() and full_name != target.full_name:
        do_change_full_name(target, check_full_name(full_name), acting_user=acting_user)
    if role is not None:
        check_change_user_role(target, role, acting_user=acting_user)
    if profile_data is not None:
        check_update_user_custom_profile_data(target, profile_data, acting_user=acting_user)
    if new_email is not None:
        check_change_user_email(target, new_email, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_change_full_name(user: User, full_name: str, *, acting_user: User | None) -> None:
    """Set the user's name (already validated with check_full_name); the same name changes nothing.

    Audit: USER_FULL_NAME_CHANGED. Emits: realm_user/update {full_name}."""
    old_name = user.full_name
    if full_name == old_name:
        return
    User.objects.filter(id=user.id).update(full_name=full_name)
    user.full_name = full_name
    forget_credentials_on_commit(user_ids=[user.id])
    audit_user_change(
        user, AuditLogEventType.USER_FULL_NAME_CHANGED, "full_name", old_name, full_name, acting_user=acting_user
    )
    send_person_update(user, {"full_name": full_name})


def check_change_user_email(target: User, new_email: str, *, acting_user: User) -> None:
    """Change another user's address: only owners with the can_change_user_emails permission."""
    if not (acting_user.is_owner and acting_user.can_change_user_emails):
        raise JsonableError("User not authorized to change user emails")
    if new_email.strip().lower() != target.delivery_email.lower():
        do_change_user_delivery_email(target, new_email, acting_user=acting_user)


def do_change_user_delivery_email(user: User, new_email: str, *, acting_user: User | None) -> None:
    """Change the real email address. Raises for an invalid address or one in use in the organization.

    Audit: USER_EMAIL_CHANGED. Emits: realm_user/update {delivery_email} to those who may see it
    (null to the others), and {new_email} when the API email changes too, then {avatar_url...}
    (Gravatar follows the address).
    """
    new_email = check_email(new_email)
    check_email_available(user.realm, new_email, exclude=user)
    old_email, old_api_email = user.delivery_email, api_email(user)
    with transaction.atomic(savepoint=False):
        try:
            with transaction.atomic():
                User.objects.filter(id=user.id).update(delivery_email=new_email)
        except IntegrityError:
            raise EmailInUseError(new_email) from None  # taken meanwhile by another request
        user.delivery_email = new_email
        audit_user_change(
            user, AuditLogEventType.USER_EMAIL_CHANGED, "delivery_email", old_email, new_email, acting_user=acting_user
        )
        forget_credentials_on_commit(user_ids=[user.id])
        send_delivery_email_update(user)
        if api_email(user) != old_api_email:
            send_person_update(user, {"new_email": api_email(user)})
        send_avatar_update(user)


@transaction.atomic(savepoint=False)
def do_refresh_avatar(user: User, *, acting_user: User | None) -> None:
    """Bump the avatar version, so clients fetch the picture again (e.g. after a Gravatar change).

    Emits: realm_user/update with the avatar fields.
    """
    User.objects.filter(id=user.id).update(avatar_version=F("avatar_version") + 1)
    user.refresh_from_db(fields=["avatar_version"])
    forget_credentials_on_commit(user_ids=[user.id])
    send_avatar_update(user)


@transaction.atomic(savepoint=False)
def do_regenerate_api_key(user: User, *, acting_user: User | None) -> str:
    """Give the user a new API key; the old one stops working at once, in every server process.

    Audit: USER_API_KEY_CHANGED (without the key)."""
    user.api_key = generate_api_key()
    User.objects.filter(id=user.id).update(api_key=user.api_key)
    audit(user.realm_id, AuditLogEventType.USER_API_KEY_CHANGED, modified_user=user, acting_user=acting_user)
    forget_credentials_on_commit(user_ids=[user.id])
    return user.api_key


@transaction.atomic(savepoint=False)
def do_set_user_staff(user: User, is_staff: bool, *, acting_user: User | None) -> None:
    """Let the user into the Django admin (operators), or no longer.

    Audit: USER_SPECIAL_PERMISSION_CHANGED {is_staff} (nothing when it already is)."""
    _set_special_permission(user, "is_staff", is_staff, also=("is_superuser",), acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_set_can_change_user_emails(user: User, value: bool, *, acting_user: User | None) -> None:
    """Grant or revoke the permission to change others' emails (owners use it; operators grant it).

    Audit: USER_SPECIAL_PERMISSION_CHANGED {can_change_user_emails} (nothing when it already is)."""
    _set_special_permission(user, "can_change_user_emails", value, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_set_can_create_users(user: User, value: bool, *, acting_user: User | None) -> None:
    """Grant or revoke the permission to create accounts with POST /users (administrators use it;
    operators grant it).

    Audit: USER_SPECIAL_PERMISSION_CHANGED {can_create_users} (nothing when it already is)."""
    _set_special_permission(user, "can_create_users", value, acting_user=acting_user)


def _set_special_permission(
    user: User, name: str, value: bool, *, also: tuple[str, ...] = (), acting_user: User | None
) -> None:
    old = getattr(user, name)
    fields = (name, *also)
    if all(getattr(user, field) == value for field in fields):
        return
    User.objects.filter(id=user.id).update(**dict.fromkeys(fields, value))
    forget_credentials_on_commit(user_ids=[user.id])
    for field in fields:
        setattr(user, field, value)
    if old != value:
        audit_user_change(
            user, AuditLogEventType.USER_SPECIAL_PERMISSION_CHANGED, name, old, value, acting_user=acting_user
        )
