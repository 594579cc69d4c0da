"""Every change to users, bots, API keys and custom profile fields goes through these functions."""

import datetime
import json
import re
import secrets
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any
from zoneinfo import available_timezones

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from django.db import IntegrityError, transaction
from django.db.models import F

from apps.core.errors import JsonableError, OrganizationOwnerRequiredError
from apps.core.markdown import render_markdown
from apps.events.publish import forget_credentials_on_commit, send_event_on_commit
from apps.realms.actions import do_create_realm
from apps.realms.models import EmailVisibility, Realm
from apps.users.hooks import user_created, user_reactivated, user_role_changing, users_deactivated
from apps.users.models import BotService, BotType, CustomProfileField, CustomProfileFieldValue, Role, User
from apps.users.selectors import VISIBILITY_FOR_ROLE, api_email, avatar_url
from apps.users.serializers import custom_profile_field_to_dict, user_to_dict

FieldType = CustomProfileField.FieldType

# Characters Zulip refuses in names: they break mention syntax or Markdown.
NAME_INVALID_CHARS = set('*`\\>"@')
PROFILE_TEXT_LIMITS = {
    FieldType.SHORT_TEXT: 50,
    FieldType.LONG_TEXT: 500,
    FieldType.EXTERNAL_ACCOUNT: 50,
    FieldType.PRONOUNS: 50,
}
DEFAULT_EXTERNAL_ACCOUNTS = {
    "github": {"name": "GitHub username", "url_pattern": "https://github.com/%(username)s"},
    "twitter": {"name": "Twitter username", "url_pattern": "https://twitter.com/%(username)s"},
}


def generate_api_key() -> str:
    """32 characters from [A-Za-z0-9], from the `secrets` module (Zulip's format)."""
    while True:
        key = secrets.token_urlsafe(32).replace("-", "").replace("_", "")[: User.API_KEY_LENGTH]
        if len(key) == User.API_KEY_LENGTH:
            return key


# --- events ----------------------------------------------------------------------------------------


def _audience(realm_id: int) -> list[tuple[int, int]]:
    """(id, role) of everyone who can see the organization's users: its active users and bots."""
    return list(User.objects.filter(realm_id=realm_id, is_active=True).values_list("id", "role"))


def send_person_update(user: User, person: dict[str, Any]) -> None:
    """Emits: realm_user/update with `person` (plus user_id) to everyone who can see `user`."""
    event = {"type": "realm_user", "op": "update", "person": {"user_id": user.id, **person}}
    send_event_on_commit(user.realm_id, event, [uid for uid, _ in _audience(user.realm_id)])


def _send_by_email_access(user: User, build: Callable[[bool], dict[str, Any]]) -> None:
    """Send `build(sees_real_email)` to each part of the audience: the event differs between those
    who may see the user's real address and those who may not."""
    audience = _audience(user.realm_id)
    by_access: dict[bool, list[int]] = {True: [], False: []}
    for uid, role in audience:
        by_access[uid == user.id or user.is_bot or user.email_address_visibility in VISIBILITY_FOR_ROLE[role]].append(
            uid
        )
    for sees, user_ids in by_access.items():
        if user_ids:
            send_event_on_commit(user.realm_id, build(sees), user_ids)


def _send_user_added(user: User) -> None:
    """Emits: realm_user/add with the full user object, as each recipient may see it."""

    def build(sees_real_email: bool) -> dict[str, Any]:
        person = user_to_dict(user, acting_user=user, client_gravatar=True, profile_data={})
        if not sees_real_email:
            person["delivery_email"] = None
        return {"type": "realm_user", "op": "add", "person": person}

    _send_by_email_access(user, build)


def _send_custom_profile_fields(realm: Realm) -> None:
    """Emits: custom_profile_fields with every definition, to the organization's active users."""
    fields = [
        custom_profile_field_to_dict(f) for f in CustomProfileField.objects.filter(realm=realm).order_by("order", "id")
    ]
    send_event_on_commit(
        realm, {"type": "custom_profile_fields", "fields": fields}, [uid for uid, _ in _audience(realm.id)]
    )


# --- users ---------------------------------------------------------------------------------------


def check_full_name(full_name: str) -> str:
    """The stripped name, or the error Zulip gives for it."""
    name = full_name.strip()
    if len(name) > User.MAX_NAME_LENGTH:
        raise JsonableError("Name too long!")
    if not name:
        raise JsonableError("Name must not be empty!")
    if any(ch in NAME_INVALID_CHARS or not ch.isprintable() for ch in name):
        raise JsonableError("Invalid characters in name!")
    if re.search(r"\|\d+$", name):
        raise JsonableError("Invalid format!")
    return name


def check_email(email: str) -> str:
    email = email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise JsonableError("Invalid address.") from None
    return email


def check_email_available(realm: Realm, email: str, *, exclude: User | None = None) -> None:
    existing = User.objects.filter(realm=realm, delivery_email__iexact=email)
    if exclude is not None:
        existing = existing.exclude(id=exclude.id)
    if existing.exists():
        raise JsonableError(f"Email '{email}' already in use")


@transaction.atomic
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
    acting_user: User | None,
) -> User:
    """Create a user or bot with a fresh API key.

    Raises JsonableError for an invalid or taken email, an invalid name, a weak password, or bot
    settings that do not fit together. Bots always show their email; people get the organization's
    default email visibility. Emits: realm_user/add to the organization.
    """
    email = check_email(email)
    full_name = check_full_name(full_name)
    check_email_available(realm, email)
    if bot_type is not None:
        if bot_owner is None or bot_owner.realm_id != realm.id:
            raise JsonableError("A bot needs an owner in the same organization")
        if password:
            raise JsonableError("Bots cannot have a password")
        if bot_type in (BotType.OUTGOING_WEBHOOK, BotType.EMBEDDED) and not service_url:
            raise JsonableError("Outgoing webhook bots need a service URL")
    elif bot_owner is not None or service_url:
        raise JsonableError("Only bots have an owner or a service URL")
    if service_url:
        try:
            URLValidator(schemes=["http", "https"])(service_url)
        except ValidationError:
            raise JsonableError("Invalid service URL") from None
    user = User(
        realm=realm,
        delivery_email=email,
        full_name=full_name,
        role=role,
        bot_type=bot_type,
        bot_owner=bot_owner,
        api_key=generate_api_key(),
        email_address_visibility=(
            EmailVisibility.EVERYONE if bot_type is not None else realm.default_email_address_visibility
        ),
    )
    if password:
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise JsonableError(" ".join(exc.messages)) from None
        user.set_password(password)
    else:
        user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:
        raise JsonableError(f"Email '{email}' already in use") from None
    if service_url:
        BotService.objects.create(bot=user, name=full_name, base_url=service_url, token=generate_api_key())
    _send_user_added(user)
    user_created.call(user)
    return user


@transaction.atomic
def do_create_realm_with_owner(
    string_id: str,
    name: str,
    *,
    owner_email: str,
    owner_full_name: str,
    owner_password: str | None = None,
    default_email_address_visibility: int = EmailVisibility.ADMINS,
) -> tuple[Realm, User]:
    """Create an organization (apps.realms' do_create_realm: with its system groups) and its first
    owner; on any error nothing is created."""
    realm = do_create_realm(string_id, name, default_email_address_visibility=default_email_address_visibility)
    owner = do_create_user(
        realm, owner_email, owner_full_name, role=Role.OWNER, password=owner_password, acting_user=None
    )
    return realm, owner


@transaction.atomic
def do_create_server_administrator(email: str, full_name: str, password: str) -> User:
    """An owner of the default organization who may use the Django admin (`createsuperuser`); the
    default organization, named "Parley", is created with them when there is none yet."""
    realm = Realm.objects.filter(string_id=Realm.DEFAULT_STRING_ID).first()
    if realm is None:
        realm, user = do_create_realm_with_owner(
            Realm.DEFAULT_STRING_ID, "Parley", owner_email=email, owner_full_name=full_name, owner_password=password
        )
    else:
        user = do_create_user(realm, email, full_name, role=Role.OWNER, password=password, acting_user=None)
    do_set_user_staff(user, True, acting_user=None)
    return user


@transaction.atomic
def do_change_full_name(user: User, full_name: str, *, acting_user: User | None) -> None:
    """Set the user's name (already validated with check_full_name). Emits: realm_user/update."""
    User.objects.filter(id=user.id).update(full_name=full_name)
    user.full_name = full_name
    send_person_update(user, {"full_name": full_name})


def check_change_user_role(target: User, role: int, *, acting_user: User) -> None:
    """Change `target`'s role if `acting_user` may: only owners give or take the owner role.

    Raises UNAUTHORIZED_PRINCIPAL, or BAD_REQUEST for the last owner; changes nothing on refusal.
    """
    if role == target.role:
        return
    if Role.OWNER in (role, target.role) and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    do_change_user_role(target, role, acting_user=acting_user)


def is_last_owner(user: User) -> bool:
    """Whether `user` is the organization's only active human owner."""
    other_owners = User.objects.filter(
        realm_id=user.realm_id, role=Role.OWNER, is_active=True, bot_type__isnull=True
    ).exclude(id=user.id)
    return user.is_owner and user.is_active and not other_owners.exists()


def check_keeps_an_owner(user: User, message: str) -> None:
    """Refuse a change that would leave the organization without an owner.

    Locks the organization's row (call inside a transaction) so that two owners demoting or
    deactivating each other at the same moment cannot both pass.
    """
    Realm.objects.select_for_update().filter(id=user.realm_id).first()
    if is_last_owner(user):
        raise JsonableError(message)


LAST_OWNER_ROLE_MESSAGE = "The owner permission cannot be removed from the only organization owner."
LAST_OWNER_DEACTIVATION_MESSAGE = "Cannot deactivate the only organization owner"


@transaction.atomic
def do_change_user_role(user: User, role: int, *, acting_user: User | None) -> None:
    """Set the role (no permission checks: operators, and check_change_user_role).

    Raises for the organization's only owner: an organization always keeps one.
    Emits: realm_user/update {role}, then what the user_role_changing hooks send (the system groups'
    user_group/remove_members and add_members, then stream/create (+ subscription/peer_add) and
    stream/delete for the channels the user now sees or no longer sees).
    """
    if role != Role.OWNER:
        check_keeps_an_owner(user, LAST_OWNER_ROLE_MESSAGE)
    old_role = user.role
    after_steps = user_role_changing.call(user, old_role, role) if old_role != role else []
    User.objects.filter(id=user.id).update(role=role)
    user.role = role
    send_person_update(user, {"role": role})
    for step in after_steps:
        if step is not None:
            step()


@transaction.atomic
def do_change_user_delivery_email(user: User, new_email: str, *, acting_user: User | None) -> None:
    """Change the real email address. Raises for an invalid address or one in use in the organization.

    Emits: realm_user/update {delivery_email} to those who may see it (null to the others), and
    {new_email} when the API email changes too, then {avatar_url...} (Gravatar follows the address).
    """
    new_email = check_email(new_email)
    check_email_available(user.realm, new_email, exclude=user)
    old_api_email = api_email(user)
    User.objects.filter(id=user.id).update(delivery_email=new_email)
    user.delivery_email = new_email
    forget_credentials_on_commit(user_ids=[user.id])
    _send_by_email_access(
        user,
        lambda sees: {
            "type": "realm_user",
            "op": "update",
            "person": {"user_id": user.id, "delivery_email": new_email if sees else None},
        },
    )
    if api_email(user) != old_api_email:
        send_person_update(user, {"new_email": api_email(user)})
    _send_avatar_update(user)


def check_change_user_email(target: User, new_email: str, *, acting_user: User) -> None:
    if not (acting_user.is_owner and acting_user.can_change_user_emails):
        raise JsonableError("User not authorized to change user emails")
    if new_email.strip().lower() != target.delivery_email.lower():
        do_change_user_delivery_email(target, new_email, acting_user=acting_user)


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
    """PATCH /users/{id}: all the requested changes, or none of them when one is refused."""
    if full_name is not None:
        full_name = check_full_name(full_name)
        if full_name != target.full_name:
            do_change_full_name(target, full_name, acting_user=acting_user)
    if role is not None:
        check_change_user_role(target, role, acting_user=acting_user)
    if profile_data is not None:
        check_update_user_custom_profile_data(target, profile_data, acting_user=acting_user)
    if new_email is not None:
        check_change_user_email(target, new_email, acting_user=acting_user)


def check_deactivate_user(target: User, *, acting_user: User) -> None:
    """Deactivate `target` for an administrator; owners only by owners; never the last owner."""
    if target.is_owner and not acting_user.is_owner:
        raise OrganizationOwnerRequiredError()
    do_deactivate_user(target, acting_user=acting_user)


@transaction.atomic
def do_deactivate_user(user: User, *, acting_user: User | None) -> list[User]:
    """Deactivate the user and, first, every active bot they own. Returns all users deactivated.

    Raises for the organization's only owner. Emits: realm_user/update {is_active: false} for each,
    then what the users_deactivated hooks send (user_group/update for group settings whose
    anonymous groups listed them, subscription/peer_remove for their channels). Group memberships
    are kept (reads ignore deactivated users); clients drop the user from groups by themselves.
    """
    check_keeps_an_owner(user, LAST_OWNER_DEACTIVATION_MESSAGE)
    bots = list(User.objects.filter(bot_owner=user, is_active=True))
    deactivated = [*bots, user]
    # The audience is read before the change: those deactivated now still learn of it.
    audience = [uid for uid, _ in _audience(user.realm_id)]
    User.objects.filter(id__in=[u.id for u in deactivated]).update(is_active=False)
    forget_credentials_on_commit(user_ids=[u.id for u in deactivated])
    for each in deactivated:
        each.is_active = False
        send_event_on_commit(
            user.realm_id,
            {"type": "realm_user", "op": "update", "person": {"user_id": each.id, "is_active": False}},
            audience,
        )
    users_deactivated.call(deactivated)
    return deactivated


@transaction.atomic
def do_reactivate_user(user: User, *, acting_user: User | None) -> None:
    """Reactivate the user; reactivating an active user changes nothing (as in Zulip).

    Emits: realm_user/update {is_active: true}, then what the user_reactivated hooks send
    (user_group/add_members for the user's groups, user_group/update for settings that list the
    user again, subscription/peer_add for their channels).
    """
    if user.is_active:
        return
    User.objects.filter(id=user.id).update(is_active=True)
    user.is_active = True
    send_person_update(user, {"is_active": True})
    user_reactivated.call(user)


@transaction.atomic
def do_change_bot_owner(bot: User, owner: User, *, acting_user: User | None) -> None:
    """Give the bot to another active user of its organization. Emits: realm_user/update {bot_owner_id}."""
    if not bot.is_bot:
        raise JsonableError("Only bots have an owner")
    if owner.realm_id != bot.realm_id or not owner.is_active or owner.is_bot:
        raise JsonableError("Invalid bot owner")
    User.objects.filter(id=bot.id).update(bot_owner=owner)
    bot.bot_owner = owner
    send_person_update(bot, {"bot_owner_id": owner.id})


@cache
def _timezones() -> frozenset[str]:
    return frozenset(available_timezones())


def check_timezone(name: str) -> str:
    """An IANA time zone name, or "" for none."""
    if name and name not in _timezones():
        raise JsonableError(f"Invalid timezone '{name}'")
    return name


@transaction.atomic
def do_change_user_timezone(user: User, timezone_name: str, *, acting_user: User | None) -> None:
    """Set the profile time zone. Emits: realm_user/update {email, timezone}."""
    timezone_name = check_timezone(timezone_name)
    User.objects.filter(id=user.id).update(timezone=timezone_name)
    user.timezone = timezone_name
    send_person_update(user, {"email": api_email(user), "timezone": timezone_name})


def _send_avatar_update(user: User) -> None:
    send_person_update(
        user,
        {
            "avatar_source": user.avatar_source,
            "avatar_url": avatar_url(user),
            "avatar_url_medium": avatar_url(user, medium=True),
            "avatar_version": user.avatar_version,
        },
    )


@transaction.atomic
def do_refresh_avatar(user: User, *, acting_user: User | None) -> None:
    """Bump the avatar version, so clients fetch the picture again (e.g. after a Gravatar change).

    Emits: realm_user/update with the avatar fields.
    """
    User.objects.filter(id=user.id).update(avatar_version=F("avatar_version") + 1)
    user.refresh_from_db(fields=["avatar_version"])
    _send_avatar_update(user)


@transaction.atomic
def do_regenerate_api_key(user: User, *, acting_user: User | None) -> str:
    """Give the user a new API key; the old one stops working at once, in every server process."""
    user.api_key = generate_api_key()
    User.objects.filter(id=user.id).update(api_key=user.api_key)
    forget_credentials_on_commit(user_ids=[user.id])
    return user.api_key


@transaction.atomic
def do_set_user_staff(user: User, is_staff: bool, *, acting_user: User | None) -> None:
    User.objects.filter(id=user.id).update(is_staff=is_staff, is_superuser=is_staff)
    user.is_staff = user.is_superuser = is_staff


@transaction.atomic
def do_set_can_change_user_emails(user: User, value: bool, *, acting_user: User | None) -> None:
    User.objects.filter(id=user.id).update(can_change_user_emails=value)
    user.can_change_user_emails = value


# --- custom profile field values -------------------------------------------------------------------


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
    users = {u.id: u for u in User.objects.filter(realm_id=field.realm_id, id__in=value)}
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


@transaction.atomic
def check_update_user_custom_profile_data(user: User, data: Iterable[tuple[int, Any]], *, acting_user: User) -> None:
    """Set or clear (value None, "" or []) the user's values; all are validated before any is written.

    Raises "Field id N not found." for fields of other organizations too.
    Emits: realm_user/update {custom_profile_field} for each value that changed.
    """
    from apps.users.selectors import access_custom_profile_field

    if user.is_bot:
        raise JsonableError("Bots have no custom profile fields.")
    changes: list[tuple[CustomProfileField, str | None]] = []
    for field_id, value in data:
        field = access_custom_profile_field(user.realm, field_id)
        _check_may_edit_field(field, user=user, acting_user=acting_user)
        changes.append((field, None if value in (None, "", []) else check_profile_field_value(field, value)))
    current = dict(CustomProfileFieldValue.objects.filter(user=user).values_list("field_id", "value"))
    for field, value in changes:
        if current.get(field.id) == value:
            continue  # unchanged values are neither written nor announced
        if value is None:
            CustomProfileFieldValue.objects.filter(user=user, field=field).delete()
            send_person_update(user, {"custom_profile_field": {"id": field.id, "value": None}})
            continue
        rendered = render_markdown(value) if field.field_type in CustomProfileField.RENDERED_TYPES else ""
        CustomProfileFieldValue.objects.update_or_create(
            user=user, field=field, defaults={"value": value, "rendered_value": rendered}
        )
        announced = {"id": field.id, "value": value}
        if rendered:
            announced["rendered_value"] = rendered
        send_person_update(user, {"custom_profile_field": announced})


def check_remove_user_custom_profile_data(user: User, field_ids: Iterable[int], *, acting_user: User) -> None:
    check_update_user_custom_profile_data(user, [(fid, None) for fid in field_ids], acting_user=acting_user)


# --- custom profile field definitions ----------------------------------------------------------------


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
        shown = CustomProfileField.objects.filter(realm=realm, display_in_profile_summary=True)
        if exclude is not None:
            shown = shown.exclude(id=exclude.id)
        if shown.count() >= CustomProfileField.MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS:
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


@transaction.atomic
def try_add_realm_custom_profile_field(
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
    """Add a field at the end of the order. Raises the validation errors of Zulip, in its order.

    Emits: custom_profile_fields (as do the other definition changes below).
    """
    name, hint = check_profile_field_definition(
        realm,
        name=name,
        hint=hint,
        field_type=field_type,
        field_data=field_data,
        display_in_profile_summary=display_in_profile_summary,
    )
    if CustomProfileField.objects.filter(realm=realm, name=name).exists():
        raise JsonableError("A field with that label already exists.")
    field = CustomProfileField.objects.create(
        realm=realm,
        name=name,
        hint=hint,
        field_type=field_type,
        field_data=_field_data_text(field_type, field_data),
        display_in_profile_summary=display_in_profile_summary,
        required=required,
        editable_by_user=editable_by_user,
    )
    field.order = field.id
    field.save(update_fields=["order"])
    _send_custom_profile_fields(realm)
    return field


@transaction.atomic
def try_update_realm_custom_profile_field(
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
    """Change a field's definition. Options removed from a list field clear the users' values."""
    old_data = json.loads(field.field_data) if field.field_data else {}
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
    if CustomProfileField.objects.filter(realm=field.realm, name=new_name).exclude(id=field.id).exists():
        raise JsonableError("A field with that label already exists.")
    if field.field_type == FieldType.SELECT and field_data is not None:
        removed = set(old_data) - set(new_data)
        CustomProfileFieldValue.objects.filter(field=field, value__in=removed).delete()
    field.name, field.hint = new_name, new_hint
    field.field_data = _field_data_text(field.field_type, new_data)
    field.display_in_profile_summary = new_summary
    if required is not None:
        field.required = required
    if editable_by_user is not None:
        field.editable_by_user = editable_by_user
    field.save()
    _send_custom_profile_fields(field.realm)


@transaction.atomic
def do_remove_realm_custom_profile_field(field: CustomProfileField, *, acting_user: User | None) -> None:
    """Delete the field and every user's value for it. Emits: custom_profile_fields."""
    realm = field.realm
    field.delete()
    _send_custom_profile_fields(realm)


@transaction.atomic
def try_reorder_realm_custom_profile_fields(realm: Realm, order: list[int], *, acting_user: User | None) -> None:
    """Each field's `order` becomes its index in `order`, which must list each field of the
    organization exactly once and nothing else (Zulip only checks that none is missing): an id of
    another organization's field, or of none, is refused like a missing one, and nothing changes.
    Emits: custom_profile_fields."""
    fields = {f.id: f for f in CustomProfileField.objects.filter(realm=realm)}
    if sorted(order) != sorted(fields):
        raise JsonableError("Invalid order mapping.")
    for index, field_id in enumerate(order):
        fields[field_id].order = index
    CustomProfileField.objects.bulk_update(fields.values(), ["order"])
    _send_custom_profile_fields(realm)
