"""Making and administering bots through the API (Zulip's /bots, with its rules and texts): who may
make which kind, the bot's address from its short name, its service and default channels; its
owner or an administrator renames it, gives it away, changes its service, defaults and role, reads
and rotates its API key, deactivates it. The changes themselves are apps.users' actions."""

from collections.abc import Sequence
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from apps.bots.selectors import CREATABLE_BOT_TYPES, allowed_bot_types
from apps.core.errors import (
    JsonableError,
    MissingArgumentError,
    OrganizationAdministratorRequiredError,
    OrganizationOwnerRequiredError,
)
from apps.realms.selectors import lock_realm
from apps.subscriptions.selectors import access_stream_by_name
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.avatars import check_upload_avatar
from apps.users.actions.bot_owner import do_change_bot_owner
from apps.users.actions.bot_services import do_change_bot_defaults, do_update_bot_service
from apps.users.actions.create_user import check_email, check_full_name, check_service_url, do_create_user
from apps.users.actions.roles import check_change_user_role
from apps.users.actions.user_settings import do_change_full_name, do_change_user_delivery_email
from apps.users.bots import BOT_DEFAULTS
from apps.users.errors import EmailInUseError
from apps.users.models import BotService, BotType, Role, User
from apps.users.selectors import active_name_in_use, delivery_email_in_use, fake_email_domain


def bot_email(realm, short_name: str) -> str:
    """`<short name>-bot@<the organization's domain for hidden addresses>`; "Bad name or username"
    for a short name that makes no address."""
    short_name = short_name.strip()
    if not short_name:
        raise JsonableError("Bad name or username")
    try:
        return check_email(f"{short_name}-bot@{fake_email_domain(realm.host)}")
    except JsonableError:
        raise JsonableError("Bad name or username") from None


def _check_payload_url(name: str, url: Any) -> str:
    if not isinstance(url, str):
        raise JsonableError(f"{name} is not a string")
    try:
        return check_service_url(url)
    except JsonableError:
        raise JsonableError(f"Invalid {name}: Value error, Not a URL") from None


def _default_channel(user: User, name: str | None):
    """The channel a default names (one `user` may read), None for "" (none)."""
    if not name:
        return None
    return access_stream_by_name(user, name)[0]


def _bot_defaults(user: User, given: dict[str, Any]) -> dict[str, Any]:
    """The defaults of a bot the request gives (those not None), channels found by name."""
    defaults = {name: given[name] for name in BOT_DEFAULTS if given.get(name) is not None}
    for name in ("default_sending_stream", "default_events_register_stream"):
        if name in defaults:
            defaults[name] = _default_channel(user, defaults[name])
    return defaults


@transaction.atomic
def check_create_bot(
    owner: User,
    *,
    full_name: str,
    short_name: str,
    bot_type: int = BotType.GENERIC,
    payload_url: Any = "",
    service_name: str | None = None,
    interface_type: int = BotService.Interface.GENERIC,
    defaults: dict[str, Any] | None = None,
    avatar: Sequence[UploadedFile] = (),
) -> User:
    """POST /bots: a bot owned by `owner`, checked in Zulip's order (the short name, the name, the
    kind, the address and the name free, the permission, the interface, the default channels, the
    service). Its address is `<short name>-bot@...`; an outgoing webhook bot's service is reached at
    `payload_url`, named `service_name` (else the short name); its avatar is the picture in `avatar`
    (at most one), else Gravatar's.

    Audit and events: do_create_user's (realm_user/add, the system groups', realm_bot/add)."""
    realm = owner.realm
    email = bot_email(realm, short_name)
    full_name = check_full_name(full_name)
    if bot_type == BotType.EMBEDDED:
        raise JsonableError("Embedded bots are not enabled.")
    lock_realm(realm.id)  # two requests naming bots alike (or one address) take turns
    if delivery_email_in_use(realm, email):
        raise JsonableError("Email is already in use.")
    if active_name_in_use(realm.id, full_name):
        raise JsonableError("Name is already in use.")
    allowed = allowed_bot_types(owner)
    if not allowed or (bot_type in CREATABLE_BOT_TYPES and bot_type not in allowed):
        raise JsonableError("Insufficient permission")
    if bot_type not in CREATABLE_BOT_TYPES:
        raise JsonableError("Invalid bot type")
    if interface_type not in BotService.Interface.values:
        raise JsonableError("Invalid interface type")
    bot_defaults = _bot_defaults(owner, defaults or {})
    if bot_type == BotType.INCOMING_WEBHOOK and service_name:
        raise JsonableError(f"Invalid integration '{service_name}'.")  # Parley has no integrations
    service_url = None
    if bot_type == BotType.OUTGOING_WEBHOOK:
        if payload_url == "":  # (the bots QA pass: "Not a URL" said nothing of where it was missing)
            raise MissingArgumentError("payload_url")
        service_url = _check_payload_url("payload_url", payload_url)
    limit = BotService._meta.get_field("name").max_length
    if service_name and len(service_name) > limit:
        raise JsonableError(f"service_name is too long (limit: {limit} characters)")
    if len(avatar) > 1:
        raise JsonableError("You may only upload one file at a time")
    try:
        bot = do_create_user(
            realm,
            email,
            full_name,
            bot_type=bot_type,
            bot_owner=owner,
            service_url=service_url,
            service_name=service_name or short_name.strip()[:limit],
            service_interface=interface_type,
            bot_defaults=bot_defaults,
            acting_user=owner,
        )
    except EmailInUseError:
        raise JsonableError("Email is already in use.") from None
    if avatar:
        check_upload_avatar(bot, avatar[0], acting_user=owner)
    return bot


@transaction.atomic
def check_update_bot(
    bot: User,
    *,
    full_name: str | None = None,
    short_name: str | None = None,
    role: int | None = None,
    bot_owner_id: int | None = None,
    service_payload_url: Any = None,
    service_interface: int | None = None,
    defaults: dict[str, Any] | None = None,
    avatar: Sequence[UploadedFile] = (),
    acting_user: User,
) -> None:
    """PATCH /bots/{id} by someone who administers the bot (access_bot_by_id): every change asked,
    or none when one is refused (Zulip's checks and texts). A name or an address that stays the same
    changes nothing; a picture in `avatar` (at most one) becomes its avatar."""
    if len(avatar) > 1:
        raise JsonableError("You may only upload one file at a time")
    lock_realm(bot.realm_id)
    if full_name is not None and full_name.strip() != bot.full_name:
        name = check_full_name(full_name)
        if active_name_in_use(bot.realm_id, name, exclude=bot):
            raise JsonableError("Name is already in use.")
        do_change_full_name(bot, name, acting_user=acting_user)
    if short_name is not None:
        email = bot_email(bot.realm, short_name)
        if email.lower() != bot.delivery_email.lower():
            if delivery_email_in_use(bot.realm, email, exclude=bot):
                raise JsonableError("Email address already in use")
            try:
                do_change_user_delivery_email(bot, email, acting_user=acting_user)
            except EmailInUseError:  # taken meanwhile by a change that does not take the lock (a person's)
                raise JsonableError("Email address already in use") from None
    if role is not None and role != bot.role:
        if Role.OWNER in (role, bot.role) and not acting_user.is_owner:
            raise OrganizationOwnerRequiredError()
        if not acting_user.is_admin:
            raise OrganizationAdministratorRequiredError()
        check_change_user_role(bot, role, acting_user=acting_user)
    if bot_owner_id is not None:
        do_change_bot_owner(bot, _new_owner(bot, bot_owner_id), acting_user=acting_user)
    if service_payload_url is not None or service_interface is not None:
        _update_service(bot, service_payload_url, service_interface, acting_user=acting_user)
    do_change_bot_defaults(bot, _bot_defaults(acting_user, defaults or {}), acting_user=acting_user)
    if avatar:
        check_upload_avatar(bot, avatar[0], acting_user=acting_user)


def _new_owner(bot: User, owner_id: int) -> User:
    owner = User.objects.filter(realm_id=bot.realm_id, id=owner_id).first()
    if owner is None:
        raise JsonableError("Failed to change owner, no such user")
    if not owner.is_active:
        raise JsonableError("Failed to change owner, user is deactivated")
    if owner.is_bot:
        raise JsonableError("Failed to change owner, bots can't own other bots")
    return owner


def _update_service(bot: User, url: Any, interface: int | None, *, acting_user: User) -> None:
    if interface is not None and interface not in BotService.Interface.values:
        raise JsonableError("Invalid interface type")
    service = BotService.objects.filter(bot=bot).order_by("id").first()
    if service is None:
        raise JsonableError("This bot has no service")
    base_url = None if url is None else _check_payload_url("service_payload_url", url)
    do_update_bot_service(service, base_url=base_url, interface=interface, acting_user=acting_user)


def do_deactivate_bot(bot: User, *, acting_user: User) -> None:
    """DELETE /bots/{id}: the bot no longer acts; deactivating it again changes nothing (Zulip)."""
    if bot.is_active:
        do_deactivate_user(bot, acting_user=acting_user)
