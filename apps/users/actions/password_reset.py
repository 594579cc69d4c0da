"""Forgotten passwords (Zulip's /accounts/password/reset/): whoever gives an address on an
organization's sign-in page is emailed, by the task worker, a link that sets a new password when
the address is an active person's of that organization, or a note saying there is no such account
(the page answers the same either way, and as fast: it tells nobody who has an account). A link is
Django's password reset token: it expires after PASSWORD_RESET_TIMEOUT and stops working once the
password changes or its owner logs in."""

import logging

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.contrib.auth.tokens import default_token_generator
from django.db import transaction
from django.utils.encoding import force_str
from django.utils.http import urlsafe_base64_decode

from apps.core import ratelimit
from apps.core.errors import REDIS_UNAVAILABLE, PasswordAuthDisabledError, count_dependency_failure
from apps.events.publish import forget_credentials_on_commit
from apps.realms.audit import audit
from apps.realms.models import AuditLogEventType, Realm
from apps.users.actions.create_user import check_email
from apps.users.models import User
from apps.users.selectors import email_key
from apps.users.tasks import send_password_reset_email

logger = logging.getLogger(__name__)


def check_request_password_reset(realm: Realm, email: str, *, ip: str) -> None:
    """Queue the email answering a reset asked for `email` in `realm` (see the module's docstring),
    within the limits (RateLimitedError past them, nothing queued): per address, whatever the
    organization (RATE_LIMIT_PASSWORD_RESET: Zulip's password_reset_form_by_email), and per asking
    IP address (RATE_LIMIT_PASSWORD_RESET_PER_IP_PER_DAY: Zulip's sends_email_by_ip), so that the
    form mails nobody over and over."""
    if not realm.password_auth_enabled:
        raise PasswordAuthDisabledError()
    email = check_email(email)
    if settings.RATE_LIMITING_ENABLED:
        by_email = [(f"password_reset_form_by_email:{limit[1]}:{email_key(email)}", limit)
                    for limit in settings.RATE_LIMIT_PASSWORD_RESET]  # fmt: skip
        by_ip = (settings.RATE_LIMIT_PASSWORD_RESET_PER_IP_PER_DAY, 86400)
        ratelimit.check_all([*by_email, (f"sends_email_by_ip:{ip}", by_ip)])
    with transaction.atomic():
        send_password_reset_email.enqueue(realm.id, email)


def password_reset_user(realm: Realm, uidb64: str) -> User | None:
    """The person a link's `uidb64` names, if one of `realm`'s who may set a password there."""
    try:
        user_id = int(force_str(urlsafe_base64_decode(uidb64)))
    except (TypeError, ValueError, OverflowError):
        return None
    if not realm.password_auth_enabled or realm.deactivated or not 0 < user_id < 2**63:
        return None
    return User.objects.filter(realm=realm, id=user_id, is_active=True, bot_type__isnull=True).first()


def do_reset_password(user: User, token: str, password: str) -> None:
    """Set the password the person chose through a reset link (Django's validators already passed),
    once: the link's `token` is checked again with their row locked, so that the same link sent
    twice at once sets one password (PasswordResetLinkError for the other). Their other sessions end
    (Django's session hash), and their failed sign-in attempts are forgotten (with Redis unreachable
    they simply expire).

    Audit: USER_PASSWORD_CHANGED."""
    with transaction.atomic():
        locked = User.objects.select_for_update().filter(id=user.id, is_active=True).first()
        if locked is None or not default_token_generator.check_token(locked, token):
            raise PasswordResetLinkError()
        user.password = make_password(password)
        User.objects.filter(id=user.id).update(password=user.password)
        forget_credentials_on_commit(user_ids=[user.id])
        audit(user.realm_id, AuditLogEventType.USER_PASSWORD_CHANGED, modified_user=user, acting_user=user)
    try:
        ratelimit.clear(f"authenticate_by_username:{user.realm_id}:{email_key(user.delivery_email)}")
    except REDIS_UNAVAILABLE as exc:
        count_dependency_failure(exc)
        logger.warning("could not forget the failed sign-ins of user %d: %r", user.id, exc)


class PasswordResetLinkError(Exception):
    """The link was used (or the password changed) meanwhile."""
