"""Creating users and bots: who may be created, with what, and the first API key."""

import re
import secrets
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.realms.audit import audit
from apps.realms.domains import ADMIN_REFUSALS, check_email_allowed
from apps.realms.models import AuditLogEventType, EmailVisibility, Realm
from apps.realms.selectors import lock_realm
from apps.users.actions.notify import send_user_added
from apps.users.actions.realm_defaults import new_user_settings
from apps.users.bots import send_bot_added
from apps.users.errors import EmailInUseError
from apps.users.hooks import Joining, person_created, user_created
from apps.users.models import BotService, BotType, Role, User
from apps.users.selectors import delivery_email_in_use, fake_email_domain

# Characters Zulip refuses in names: they break mention syntax or Markdown.
NAME_INVALID_CHARS = set('*`\\>"@')


def generate_api_key() -> str:
    """32 characters from [A-Za-z0-9], from the `secrets` module (Zulip's format)."""
    while True:
        key = secrets.token_urlsafe(32).replace("-", "").replace("_", "")[: User.API_KEY_LENGTH]
        if len(key) == User.API_KEY_LENGTH:
            return key


def check_full_name(full_name: str) -> str:
    """The stripped name, or the error Zulip gives for it."""
    name = full_name.strip()
    if len(name) > User.MAX_NAME_LENGTH:
        raise JsonableError("Name too long!")
    if len(name) < User.MIN_NAME_LENGTH:
        raise JsonableError("Name too short!")
    if any(ch in NAME_INVALID_CHARS or not ch.isprintable() for ch in name):
        raise JsonableError("Invalid characters in name!")
    if re.search(r"\|\d+$", name):
        raise JsonableError("Invalid format!")
    return name


def check_email(email: str) -> str:
    """The stripped address, or "Invalid address."."""
    email = email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise JsonableError("Invalid address.") from None
    if len(email) > User._meta.get_field("delivery_email").max_length:
        raise JsonableError("Invalid address.")
    return email


def check_email_available(realm: Realm, email: str, *, exclude: User | None = None) -> None:
    if delivery_email_in_use(realm, email, exclude=exclude):
        raise EmailInUseError(email)


def _check_bot_settings(
    realm: Realm,
    *,
    bot_type: int | None,
    bot_owner: User | None,
    password: str | None,
    service_url: str | None,
    system_bot: bool,
) -> None:
    if system_bot and (bot_type is None or bot_owner is not None):
        raise JsonableError("A system bot is a bot without an owner")
    if bot_type is not None:
        if not system_bot and (bot_owner is None or bot_owner.realm_id != realm.id):
            raise JsonableError("A bot needs an owner in the same organization")
        if password:
            raise JsonableError("Bots cannot have a password")
        if bot_type in (BotType.OUTGOING_WEBHOOK, BotType.EMBEDDED) and not service_url:
            raise JsonableError("Outgoing webhook bots need a service URL")
    elif bot_owner is not None or service_url:
        raise JsonableError("Only bots have an owner or a service URL")
    if service_url:
        check_service_url(service_url)


def check_service_url(url: str) -> str:
    """An http(s) URL for a bot's service. Where it points is checked when the server posts to it
    (the address its host has then: apps/webhooks/outgoing.py), not here."""
    try:
        URLValidator(schemes=["http", "https"])(url)
        # Ports 0 and past 65535 pass the validator (the hostile and verify QA passes); past 65535,
        # reading it raises ValueError.
        if urlsplit(url).port == 0:
            raise ValueError(url)
    except (ValidationError, ValueError):
        raise JsonableError("Invalid service URL") from None
    if len(url) > BotService._meta.get_field("base_url").max_length:
        raise JsonableError("Invalid service URL")
    return url


def do_create_user(
    realm: Realm,
    email: str,
    full_name: str,
    *,
    role: int = Role.MEMBER,
    password: str | None = None,
    bot_type: int | None = None,
    bot_owner: User | None = None,
    service_url: str | None = None,
    service_name: str | None = None,
    service_interface: int = BotService.Interface.GENERIC,
    bot_defaults: dict[str, Any] | None = None,
    system_bot: bool = False,
    welcome_message_custom_text: str | None = None,
    join_default_channels: bool = True,
    channel_ids: Sequence[int] = (),
    joins_at_first_login: bool = False,
    acting_user: User | None,
) -> User:
    """Create a user or bot with a fresh API key.

    A `system_bot` is a bot of the server's own, without an owner (do_create_system_bot_once). A
    service bot's service is reached at `service_url` (named `service_name`, else by the bot's
    short name: its address before "-bot@", as zulip-botserver's configuration names it);
    `bot_defaults` are a bot's default_* fields (its default channels, checked by the caller).
    `welcome_message_custom_text` (an invitation's text), `join_default_channels` (a person joins
    the organization's default channels, unless their invitation link says otherwise) and
    `channel_ids` (the channels their invitation names) are passed on to the person_created hooks.
    An account made for someone else to sign in to later `joins_at_first_login` (its `date_joined`
    then moves to that sign-in: do_note_first_sign_in).

    Raises JsonableError for an invalid or taken email, an invalid name, a weak password, or bot
    settings that do not fit together; all is checked (and the password hashed) before the
    transaction. People start with the organization's defaults for new users (their settings,
    email visibility included); bots with Zulip's defaults, their email shown to all.
    Audit: USER_CREATED {role}. Emits: realm_user/add to the organization, then what the
    user_created hooks (and, for a person, the person_created hooks) send; for a bot with an owner,
    realm_bot/add to those who administer it.
    """
    email = check_email(email)
    full_name = check_full_name(full_name)
    check_email_available(realm, email)
    _check_bot_settings(
        realm,
        bot_type=bot_type,
        bot_owner=bot_owner,
        password=password,
        service_url=service_url,
        system_bot=system_bot,
    )
    bot_settings = {"email_address_visibility": EmailVisibility.EVERYONE}
    settings = new_user_settings(realm) if bot_type is None else bot_settings
    user = User(
        realm=realm,
        delivery_email=email,
        full_name=full_name,
        role=role,
        bot_type=bot_type,
        bot_owner=bot_owner,
        api_key=generate_api_key(),
        joins_at_first_login=joins_at_first_login,
        **settings,
        **(bot_defaults or {}),
    )
    if password:
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise JsonableError(" ".join(exc.messages)) from None
        user.set_password(password)
    else:
        user.set_unusable_password()
    with transaction.atomic():
        try:
            with transaction.atomic():
                user.save()
        except IntegrityError:
            raise EmailInUseError(email) from None  # created meanwhile by another request
        if service_url:
            BotService.objects.create(
                bot=user,
                name=service_name or bot_short_name(user.delivery_email),
                base_url=service_url,
                interface=service_interface,
                token=generate_api_key(),
            )
        audit(
            realm,
            AuditLogEventType.USER_CREATED,
            modified_user=user,
            extra_data={"role": role},
            acting_user=acting_user,
        )
        send_user_added(user)
        user_created.call(user)
        if bot_type is None:
            person_created.call(user, Joining(welcome_message_custom_text, join_default_channels, tuple(channel_ids)))
        elif bot_owner is not None:
            send_bot_added(user)
    return user


def do_note_first_sign_in(user: User) -> None:
    """An account made by someone else (POST /users) joined when its person first signs in, as in
    Zulip: `date_joined` moves from the account's creation to now (check_password_login calls it).

    Emits nothing (Zulip tells no client of it either)."""
    user.date_joined, user.joins_at_first_login = timezone.now(), False
    # The row's save() drops the cached copies of the user (apps/users/receivers.py).
    user.save(update_fields=["date_joined", "joins_at_first_login"])


def check_create_user_by_admin(admin: User, *, email: str, password: str, full_name: str) -> User:
    """POST /users: an administrator with the can_create_users permission (granted by an operator)
    creates a member account with a password, as Zulip's create_user_backend does."""
    if not admin.can_create_users:
        raise JsonableError("User not authorized to create users")
    if not password:
        raise JsonableError("The password is too weak.")
    if len(password) > User.MAX_PASSWORD_LENGTH:
        raise JsonableError(f"The password is too long (limit: {User.MAX_PASSWORD_LENGTH} characters).")
    check_email_allowed(admin.realm, check_email(email), ADMIN_REFUSALS)
    return do_create_user(
        admin.realm, email, full_name, password=password, joins_at_first_login=True, acting_user=admin
    )


@transaction.atomic(savepoint=False)
def do_create_system_bot_once(realm: Realm, kind: type, *, full_name: str, email_local_part: str) -> User:
    """The organization's system bot of a `kind` (a model with one row per organization naming its
    `bot`: apps.invites' WelcomeBot, apps.messages' NotificationBot), created when it has none: a
    generic bot owned by nobody, its address `email_local_part`@ the organization's domain for
    hidden addresses (numbered when someone has it). The organization's row is locked while one is
    made (not when it is there, as it is at each notice), so there is only ever one of each kind.

    Audit: USER_CREATED. Emits: realm_user/add (do_create_user) when created.
    """
    rows = kind.objects.filter(realm=realm).select_related("bot__realm")
    if (row := rows.first()) is None:
        lock_realm(realm.id)
        row = rows.first()
    if row is not None:
        return row.bot
    domain = fake_email_domain(realm.host)
    email, number = f"{email_local_part}@{domain}", 1
    while delivery_email_in_use(realm, email):
        number += 1
        email = f"{email_local_part}-{number}@{domain}"
    bot = do_create_user(realm, email, full_name, bot_type=BotType.GENERIC, system_bot=True, acting_user=None)
    kind.objects.create(realm=realm, bot=bot)
    return bot


def bot_short_name(email: str) -> str:
    """A bot's short name (POST /bots' `short_name`): its address before "-bot@" (or before "@")."""
    local = email.rsplit("@", 1)[0]
    return local.removesuffix("-bot") or local
