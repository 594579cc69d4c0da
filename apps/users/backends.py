"""Password sign-in within one organization: for POST /fetch_api_key and the Django admin."""

import contextlib
import logging

from django.conf import settings
from django.contrib.auth.backends import BaseBackend
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import HttpRequest

from apps.core import ratelimit
from apps.core.auth import realm_for_request
from apps.core.errors import (
    REDIS_UNAVAILABLE,
    AuthenticationFailedError,
    JsonableError,
    PasswordAuthDisabledError,
    RateLimitedError,
    RealmDeactivatedError,
    UserDeactivatedError,
)
from apps.realms.models import Realm
from apps.users.actions.create_user import do_note_first_sign_in
from apps.users.models import User
from apps.users.selectors import email_key, user_with_delivery_email

logger = logging.getLogger(__name__)


def check_password_login(realm: Realm, username: str, password: str, *, address: str | None = None) -> User:
    """The user of `realm` with this email and password, or the error to answer.

    Every attempt takes a slot of the per-username limit (5 per 30 minutes by default) before the
    password is checked, so concurrent guesses cannot slip past it; a success frees the slots, and
    an attempt the database could not answer gives its slot back. Attempts from a client `address`
    also take a slot of its limit (100 per 30 minutes: one password tried against many accounts, the
    security QA pass); a success gives its own back. The limits fail closed: with Redis unreachable
    this raises its error (503). A username that is not an email address is refused first, before
    it takes a slot.
    """
    try:
        validate_email(username.strip())
    except ValidationError:
        raise JsonableError("Enter a valid email address.") from None
    if not realm.password_auth_enabled:
        raise PasswordAuthDisabledError()
    attempt = ratelimit.hit_name()
    # Counted per spelling the lookup tells apart, no finer and no coarser (see email_key).
    limit_keys = [f"authenticate_by_username:{realm.id}:{email_key(username)}"]
    limits = [settings.RATE_LIMIT_AUTH_FAILURES]
    if address:
        limit_keys.append(f"authenticate_by_address:{address}")
        limits.append(settings.RATE_LIMIT_AUTH_FAILURES_BY_IP)
    # Who is being guessed at, from where, and who is locked out: the operator's to tell (the operator
    # QA pass: the log had only the answers' statuses).
    organization = realm.string_id or "(default)"
    who = f"{username.strip()!r} in organization {organization!r} from {address or 'an unknown address'}"
    for index, (limit_key, limit) in enumerate(zip(limit_keys, limits, strict=True)):
        state = ratelimit.check(limit_key, limit, name=attempt)
        if state.blocked:
            _take_back(limit_keys[:index], attempt)  # not an attempt at all
            whose = "the account's" if index == 0 else "the address's"
            logger.warning("Login refused for %s: %s failed logins are over their limit", who, whose)
            raise RateLimitedError(state.retry_after, state=state)
    try:
        user = user_with_delivery_email(User.objects.select_related("realm").filter(realm=realm), username)
        if user is None:
            User().set_password(password)  # same work as a real check, so timing tells nothing
            verified = False
        else:
            verified = user.check_password(password)
    except Exception:
        # The database failed, not the password: the attempt is no failure (the fault QA pass: an
        # outage's retries locked people out for 30 minutes once it was over).
        _take_back(limit_keys, attempt)
        raise
    if not verified:
        logger.warning("Login failed for %s: %s", who, "no such account" if user is None else "wrong password")
        raise AuthenticationFailedError()
    ratelimit.clear(limit_keys[0])
    _take_back(limit_keys[1:], attempt)
    if not user.is_active:
        raise UserDeactivatedError()
    if realm.deactivated:
        raise RealmDeactivatedError()
    if user.joins_at_first_login:
        do_note_first_sign_in(user)
    return user


def _take_back(limit_keys: list[str], attempt: str) -> None:
    with contextlib.suppress(*REDIS_UNAVAILABLE):
        for limit_key in limit_keys:
            ratelimit.take_back(limit_key, attempt)


class RealmEmailBackend(BaseBackend):
    """Django authentication backend: email and password in the organization of the request's host."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs
    ):
        if request is None or username is None or password is None:
            return None
        try:
            realm = realm_for_request(request)
            return check_password_login(realm, username, password, address=request.META.get("REMOTE_ADDR"))
        except RealmDeactivatedError:
            # Server operators keep the admin even when their own organization is deactivated.
            user = user_with_delivery_email(User.objects.filter(realm=realm), username)
            return user if user is not None and user.is_staff else None
        except JsonableError:
            return None

    def get_user(self, user_id: int) -> User | None:
        user = User.objects.select_related("realm").filter(id=user_id).first()
        if user is None or not user.is_active or (user.realm.deactivated and not user.is_staff):
            return None
        return user
