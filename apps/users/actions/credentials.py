"""A person's own password and email address (PATCH /settings): a new password needs the old one
and passes Django's password validators; a new address is confirmed by opening a link sent to it
(apps/users/pages.py), which expires, before the address changes."""

import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from apps.core import ratelimit
from apps.core.errors import AuthenticationFailedError, JsonableError, RateLimitedError
from apps.core.mail import templated_email
from apps.core.text import duration_text
from apps.realms.domains import check_email_allowed
from apps.users.actions.create_user import check_email, check_email_available
from apps.users.actions.user_settings import do_change_user_delivery_email
from apps.users.backends import check_password_login
from apps.users.errors import EmailChangeLinkError
from apps.users.models import EmailChangeRequest, User
from apps.users.selectors import delivery_email_in_use, email_change_request

logger = logging.getLogger(__name__)


# --- password -------------------------------------------------------------------------------------


def check_new_password(user: User, old_password: str | None, new_password: str) -> str:
    """The hash of `new_password`, once `old_password` is the user's password (checked as a
    sign-in is, under the same per-address limit of attempts) and the new one passes Django's
    validators (AUTH_PASSWORD_VALIDATORS); else Zulip's errors."""
    try:
        check_password_login(user.realm, user.delivery_email, old_password or "")
    except RateLimitedError as exc:
        seconds = max(int(exc.retry_after), 1)
        raise JsonableError(f"You're making too many attempts! Try again in {seconds} seconds.") from None
    except AuthenticationFailedError:
        raise JsonableError("Wrong password!") from None
    if len(new_password) > User.MAX_PASSWORD_LENGTH:
        raise JsonableError(f"New password is too long (limit: {User.MAX_PASSWORD_LENGTH} characters).")
    try:
        validate_password(new_password, user)
    except ValidationError:
        raise JsonableError("New password is too weak!") from None
    return make_password(new_password)


# --- email ----------------------------------------------------------------------------------------


def check_email_change(user: User, email: str) -> str | None:
    """The new address to confirm (None: it is the current one), once valid, one the organization
    allows (apps.realms.domains), not taken in it and within the user's limit of changes
    (RATE_LIMIT_EMAIL_CHANGE_*: Zulip's `email_change_by_user`; 429 past it, 503 when Redis cannot
    count)."""
    new_email = email.strip()
    if new_email == user.delivery_email:
        return None
    new_email = check_email(new_email)
    check_email_allowed(user.realm, new_email)
    check_email_available(user.realm, new_email, exclude=user)
    _count_email_change(user)
    return new_email


def _count_email_change(user: User) -> None:
    if not settings.RATE_LIMITING_ENABLED:
        return
    ratelimit.check_all(
        [(f"email_change_by_user:{limit[1]}:{user.id}", limit) for limit in settings.RATE_LIMIT_EMAIL_CHANGE]
    )


@transaction.atomic(savepoint=False)
def do_start_email_change(user: User, new_email: str, *, acting_user: User | None) -> EmailChangeRequest:
    """Revoke the user's pending changes and send a confirmation link to `new_email` (checked with
    check_email_change), once the transaction commits. Nothing changes until the link is opened."""
    EmailChangeRequest.objects.filter(user=user, status=EmailChangeRequest.Status.PENDING).update(
        status=EmailChangeRequest.Status.REVOKED
    )
    request = EmailChangeRequest.objects.create(
        user=user,
        old_email=user.delivery_email,
        new_email=new_email,
        key=secrets.token_hex(EmailChangeRequest.KEY_LENGTH // 2),
    )
    link = f"{user.realm.url}{reverse('confirm_email_change', kwargs={'key': request.key})}"
    context = {
        "full_name": user.full_name,
        "realm_name": user.realm.name,
        "realm_url": user.realm.url,
        "old_email": user.delivery_email,
        "new_email": new_email,
        "link": link,
        "valid_for": duration_text(settings.EMAIL_CHANGE_LINK_VALIDITY_SECONDS),
    }
    transaction.on_commit(lambda: _send("users/emails/confirm_new_email", new_email, context))
    return request


def link_expiry() -> timedelta:
    return timedelta(seconds=settings.EMAIL_CHANGE_LINK_VALIDITY_SECONDS)


def pending_email_change(key: str, realm_id: int, *, for_update: bool = True) -> EmailChangeRequest:
    """The change the link `key` confirms, if it still may be (a link of this organization, neither
    used, replaced nor expired, the user active with the address it replaces); else
    EmailChangeLinkError. `for_update`: locked until the transaction ends (call inside one)."""
    request = email_change_request(key, for_update=for_update)
    if request is None or request.user.realm_id != realm_id:
        raise EmailChangeLinkError("This confirmation link is not valid.", status=404)
    if request.status == EmailChangeRequest.Status.USED:
        raise EmailChangeLinkError("This confirmation link has already been used.")
    user = request.user
    expired = request.created + link_expiry() < timezone.now()
    if (
        expired
        or request.status != EmailChangeRequest.Status.PENDING
        or user.delivery_email != request.old_email
        or not user.is_active
        or user.realm.deactivated
    ):
        raise EmailChangeLinkError("This confirmation link has expired or is no longer valid.")
    if delivery_email_in_use(user.realm, request.new_email, exclude=user):
        raise EmailChangeLinkError(f"The address {request.new_email} is already in use in this organization.")
    return request


@transaction.atomic
def check_confirm_email_change(key: str, realm_id: int) -> EmailChangeRequest:
    """Opening the link: the user's address becomes the new one (do_change_user_delivery_email: its
    events and audit entry), the link is used up, and the old address is told, after the commit."""
    request = pending_email_change(key, realm_id)
    user = request.user
    do_change_user_delivery_email(user, request.new_email, acting_user=user)
    EmailChangeRequest.objects.filter(id=request.id).update(status=EmailChangeRequest.Status.USED)
    request.status = EmailChangeRequest.Status.USED
    context = {
        "full_name": user.full_name,
        "realm_name": user.realm.name,
        "realm_url": user.realm.url,
        "old_email": request.old_email,
        "new_email": request.new_email,
    }
    transaction.on_commit(lambda: _send("users/emails/email_changed", request.old_email, context))
    return request


def _send(template: str, to: str, context: dict) -> None:
    """Send a templated email (`<template>.subject.txt` and `<template>.txt`); a failure is logged,
    not raised: the change it tells of is already committed."""
    try:
        templated_email(template, context, to).send()
    except Exception:
        logger.exception("could not send %s to %s", template, to)
