"""Reads of users and custom profile fields, always scoped to one organization."""

import hashlib
import hmac
import re
import string
from collections import defaultdict
from collections.abc import Collection
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import connection
from django.db.models import CharField, F, Q, QuerySet
from django.db.models.functions import Cast
from django.http.request import split_domain_port

from apps.core.errors import JsonableError
from apps.realms.models import AuditLogEventType, EmailVisibility, Realm, RealmAuditLog
from apps.realms.selectors import default_picture_url
from apps.users.errors import ProfileFieldNotFoundError
from apps.users.models import (
    AvatarSource,
    BotType,
    CustomProfileField,
    CustomProfileFieldValue,
    EmailChangeRequest,
    RealmUserDefault,
    Role,
    User,
)
from apps.users.settings_models import NEW_ORGANIZATION_DEFAULTS

# A hidden address as email_key() writes it: ASCII digits only (`\d` and int() also read "١٢").
FAKE_EMAIL_RE = re.compile(r"user([0-9]{1,18})@(.+)", re.DOTALL)

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# What no address contains and PostgreSQL cannot be asked about: it refuses NUL in text, and a
# lone surrogate has no UTF-8 encoding.
_UNSTORABLE_RE = re.compile("[\x00\ud800-\udfff]")

# Which targets' `email_address_visibility` values let a requester of each role see the real email.
_MEMBERS_SEE = {EmailVisibility.EVERYONE, EmailVisibility.MEMBERS}
_MODERATORS_SEE = {*_MEMBERS_SEE, EmailVisibility.MODERATORS}
_ADMINS_SEE = {*_MODERATORS_SEE, EmailVisibility.ADMINS}
VISIBILITY_FOR_ROLE = {
    Role.OWNER: _ADMINS_SEE,
    Role.ADMINISTRATOR: _ADMINS_SEE,
    Role.MODERATOR: _MODERATORS_SEE,
    Role.MEMBER: _MEMBERS_SEE,
    Role.GUEST: {EmailVisibility.EVERYONE},
}


@lru_cache(maxsize=256)
def fake_email_domain(realm_host: str) -> str:
    """The domain of hidden addresses: the organization's host name when it makes a valid email."""
    hostname, _ = split_domain_port(realm_host)
    try:
        validate_email(f"bot@{hostname}")
    except ValidationError:
        return settings.FAKE_EMAIL_DOMAIN
    return hostname


def api_email(user: User) -> str:
    """The `email` field of the API: the real address when everyone may see it, else a fake one."""
    return _api_email(user.id, user.delivery_email, user.email_address_visibility, user.is_bot, user.realm)


def api_email_of_person(user_id: int, delivery_email: str, visibility: int, realm: Realm) -> str:
    """api_email of a person (not a bot) read as plain values, for lists too long for instances."""
    return _api_email(user_id, delivery_email, visibility, False, realm)


def _api_email(user_id: int, delivery_email: str, visibility: int, is_bot: bool, realm: Realm) -> str:
    if is_bot or visibility == EmailVisibility.EVERYONE:
        return delivery_email
    return f"user{user_id}@{fake_email_domain(realm.host)}"


def can_access_delivery_email(requester: User, target: User) -> bool:
    if requester.id == target.id or target.is_bot:
        return True
    return target.email_address_visibility in VISIBILITY_FOR_ROLE[requester.role]


def avatar_url(user: User, *, medium: bool = False) -> str:
    return avatar_url_of(
        user.realm_id, user.delivery_email, user.avatar_source, user.avatar_hash, user.avatar_version, medium=medium
    )


def absolute_avatar_url(user: User) -> str:
    """avatar_url with the organization's address in front of an uploaded avatar's (for what is read
    away from the server: push notifications)."""
    url = avatar_url(user)
    return url if url.startswith(("https://", "http://")) else f"{user.realm.url}{url}"


def avatar_url_of(
    realm_id: int, email: str, source: str, avatar_hash: str, version: int, *, medium: bool = False
) -> str:
    """An uploaded avatar's address on this server (relative, as Zulip's), else Gravatar's."""
    if source == AvatarSource.UPLOADED and avatar_hash:
        return f"/user_avatars/{realm_id}/{avatar_hash}{'-medium' if medium else ''}.png?version={version}"
    return gravatar_url(email, version, medium=medium)


def gravatar_url(email: str, version: int, *, medium: bool = False) -> str:
    """Gravatar's picture for this address; with ENABLE_GRAVATAR off, the default picture."""
    if not settings.ENABLE_GRAVATAR:
        return f"{default_picture_url()}?version={version}"
    digest = hashlib.md5(email.lower().encode(), usedforsecurity=False).hexdigest()
    size = "&s=500" if medium else ""
    return f"https://secure.gravatar.com/avatar/{digest}?d=identicon{size}&version={version}"


def client_computes_gravatar(client_gravatar: bool) -> bool:
    """Whether Gravatar addresses are left for the client to compute (`client_gravatar`, null
    `avatar_url`s): never with ENABLE_GRAVATAR off, as in Zulip."""
    return client_gravatar and settings.ENABLE_GRAVATAR


def avatar_url_for_client(user: User, *, client_gravatar: bool) -> str | None:
    """None when the client computes the Gravatar URL itself (`client_gravatar`), as in Zulip: for
    anyone whose email everyone sees (bots too) whose picture is Gravatar's."""
    if (
        client_computes_gravatar(client_gravatar)
        and user.avatar_source == AvatarSource.GRAVATAR
        and user.email_address_visibility == EmailVisibility.EVERYONE
    ):
        return None
    return avatar_url(user)


def email_key(email: str) -> str:
    """The one form in which login names (emails) are compared, by every lookup of a user by email
    and by every limit counted per email: surrounding whitespace dropped, ASCII letters without
    case, every other character exactly as written.

    The database's own case-insensitive comparison cannot be that form: PostgreSQL's UPPER() also
    folds U+0131 (dotless i) onto "I" and U+017F (long s) onto "S", SQLite's only ASCII, and
    Python's lower() takes U+212A (the Kelvin sign) to "k". A limit counted under one spelling
    while the lookup accepts another would let each spelling guess afresh. Addresses with letters
    other than ASCII ones (an internationalised domain) are found when written as they are stored.
    """
    return email.strip().translate(_ASCII_LOWER)


def delivery_email_candidates(email: str) -> Q:
    """A condition (on the index of UPPER(delivery_email)) that every user whose delivery email has
    `email`'s email_key meets; others may meet it too (PostgreSQL's UPPER() folds more than ASCII),
    so callers keep the users email_key agrees on. Met by nobody when `email` holds what no address
    holds and the database cannot be asked about (a NUL byte, a lone surrogate)."""
    if _UNSTORABLE_RE.search(email):
        return Q(pk__in=[])
    return Q(delivery_email__iexact=email.strip())


def user_with_delivery_email(users: QuerySet[User], email: str) -> User | None:
    """The user of `users` whose delivery email is `email`, compared as email_key does."""
    wanted = email_key(email)
    return next(
        (u for u in users.filter(delivery_email_candidates(email)) if email_key(u.delivery_email) == wanted), None
    )


def _email_or_hidden_address(email: str) -> tuple[str, Q]:
    """(email_key of `email`, a condition every user whose delivery email or hidden address
    `user{id}@domain` has that key meets)."""
    wanted = email_key(email)
    condition = delivery_email_candidates(email)
    match = FAKE_EMAIL_RE.fullmatch(wanted)
    if match:
        condition |= Q(id=int(match.group(1)))
    return wanted, condition


def users_with_email(email: str, realm: Realm | None = None) -> list[User]:
    """Users whose delivery email or API email is `email` (any organization unless `realm` is given)."""
    wanted, condition = _email_or_hidden_address(email)
    candidates = User.objects.select_related("realm").filter(condition)
    if realm is not None:
        candidates = candidates.filter(realm=realm)
    return [u for u in candidates if wanted in (email_key(u.delivery_email), email_key(api_email(u)))]


def get_user_by_api_credentials(email: str, api_key: str) -> User | None:
    """The user with this email (see users_with_email) and API key, in any organization.

    Keys are compared in constant time; the caller checks the organization.
    """
    found = None
    for candidate in users_with_email(email):
        if hmac.compare_digest(candidate.api_key.encode(), api_key.encode()):
            found = candidate
    return found


def active_user_id_by_api_credentials(realm: Realm, email: str, api_key: str) -> int | None:
    """The id of the active user of the active `realm` with these credentials, in one light query;
    None in every other case, incoming webhook bots included (the caller then authenticates fully,
    which says what is wrong).

    For the long-poll path, where a burst of clients reconnecting must cost little.
    """
    if realm.deactivated:
        return None
    wanted, condition = _email_or_hidden_address(email)
    rows = User.objects.filter(condition, realm=realm, is_active=True).values_list(
        "id", "delivery_email", "api_key", "email_address_visibility", "bot_type"
    )
    for user_id, delivery_email, key, visibility, bot_type in rows:
        if bot_type == BotType.INCOMING_WEBHOOK:
            continue  # refused: the full authentication says why
        address = _api_email(user_id, delivery_email, visibility, bot_type is not None, realm)
        named = wanted in (email_key(delivery_email), email_key(address))
        if hmac.compare_digest(key.encode(), api_key.encode()) and named:
            return user_id
    return None


def users_in_realm(realm: Realm) -> QuerySet[User]:
    """The organization's users and bots, active or not, by id."""
    return User.objects.filter(realm=realm).select_related("realm").order_by("id")


# What a user's wire shape (apps.users.serializers.user_to_dict) is made of, read as plain values
# for lists of every user: a User instance carries every setting, and ten thousand of them cost.
USER_ROW_FIELDS = (
    "id", "delivery_email", "email_address_visibility", "full_name", "date_joined", "is_active", "role",
    "bot_type", "bot_owner_id", "timezone", "avatar_source", "avatar_version", "avatar_hash", "is_imported_stub",
)  # fmt: skip


def user_rows_in_realm(realm: Realm, user_ids: list[int] | None = None) -> list[tuple]:
    """The organization's users and bots (those among `user_ids`, when given), active or not, by
    id, as USER_ROW_FIELDS tuples, with `date_joined` already as its wire text (to the minute, in
    UTC). One query."""
    fields = [name if name != "date_joined" else "joined_text" for name in USER_ROW_FIELDS]
    users = User.objects.filter(realm=realm).annotate(joined_text=Cast("date_joined", CharField()))
    if user_ids is not None:
        users = users.filter(id__in=user_ids)
    position = USER_ROW_FIELDS.index("date_joined")
    rows = []
    for row in users.order_by("id").values_list(*fields):
        # The database's text of a UTC time (the connection's time zone): "2026-11-26 20:22:02.1+00".
        text = row[position]
        rows.append((*row[:position], f"{text[:10]}T{text[11:16]}+00:00", *row[position + 1 :]))
    return rows


def users_by_id(realm_id: int, user_ids: list[int]) -> dict[int, User]:
    """The users of the organization among `user_ids` (others are left out), by id."""
    return {user.id: user for user in User.objects.filter(realm_id=realm_id, id__in=user_ids)}


def active_users_and_roles(realm_id: int) -> list[tuple[int, int]]:
    """(id, role) of everyone who can see the organization's users: its active users and bots."""
    return list(User.objects.filter(realm_id=realm_id, is_active=True).values_list("id", "role"))


def active_user_ids_with_roles(realm_id: int, roles: Collection[int]) -> list[int]:
    return list(User.objects.filter(realm_id=realm_id, is_active=True, role__in=roles).values_list("id", flat=True))


def active_bots_owned_by(user: User) -> list[User]:
    return list(_active_bots_of(user))


def active_bots_with_services(user: User) -> list[User]:
    """The user's active bots, their services read along (the account page's files)."""
    return list(_active_bots_of(user).prefetch_related("services"))


def _active_bots_of(user: User):
    return User.objects.filter(bot_owner=user, is_active=True).order_by("id")


def active_name_in_use(realm_id: int, full_name: str, *, exclude: User | None = None) -> bool:
    """Whether another active user or bot of the organization has exactly this name (Zulip's
    check_bot_name_available: a bot's name is its own among the active)."""
    same = User.objects.filter(realm_id=realm_id, full_name=full_name, is_active=True)
    if exclude is not None:
        same = same.exclude(id=exclude.id)
    return same.exists()


def delivery_email_in_use(realm: Realm, email: str, *, exclude: User | None = None) -> bool:
    """Whether another user of the organization has this address (compared without case)."""
    existing = User.objects.filter(realm=realm, delivery_email__iexact=email)
    if exclude is not None:
        existing = existing.exclude(id=exclude.id)
    return existing.exists()


def is_last_owner(user: User) -> bool:
    """Whether `user` is the organization's only active human owner."""
    other_owners = User.objects.filter(
        realm_id=user.realm_id, role=Role.OWNER, is_active=True, bot_type__isnull=True
    ).exclude(id=user.id)
    return user.is_owner and user.is_active and not other_owners.exists()


def get_custom_profile_fields(realm: Realm) -> QuerySet[CustomProfileField]:
    return CustomProfileField.objects.filter(realm=realm).order_by("order", "id")


def access_custom_profile_field(realm: Realm, field_id: int, *, lock: bool = False) -> CustomProfileField:
    """The organization's field `field_id`; another organization's answers like none. `lock`: its
    row locked until the transaction ends (a change or removal at the same moment waits, then finds
    it as it is, or gone)."""
    fields = CustomProfileField.objects.filter(realm=realm, id=field_id)
    field = (fields.select_for_update() if lock else fields).first()
    if field is None:
        raise ProfileFieldNotFoundError(field_id)
    return field


def profile_field_label_in_use(realm: Realm, name: str, *, exclude: CustomProfileField | None = None) -> bool:
    fields = CustomProfileField.objects.filter(realm=realm, name=name)
    if exclude is not None:
        fields = fields.exclude(id=exclude.id)
    return fields.exists()


def count_profile_fields_in_summary(realm: Realm, *, exclude: CustomProfileField | None = None) -> int:
    """How many of the organization's fields are shown in the profile summary."""
    shown = CustomProfileField.objects.filter(realm=realm, display_in_profile_summary=True)
    if exclude is not None:
        shown = shown.exclude(id=exclude.id)
    return shown.count()


def profile_values_of(user: User) -> dict[int, str]:
    """The user's stored values, by field id."""
    return dict(CustomProfileFieldValue.objects.filter(user=user).values_list("field_id", "value"))


# GET /users/me asks for this on every call: in plain SQL, because compiling the ORM's query cost
# several times what running it does (benchmarks/scale/README.md). The table name is the model's.
_OWN_PROFILE_DATA_SQL = (
    f"SELECT field_id, value, rendered_value FROM {CustomProfileFieldValue._meta.db_table} WHERE user_id = %s"  # noqa: S608
)


# The attribute of a user authenticated from the credential cache (apps.users.accounts) holding what
# was read about them and is kept until their cached credentials are dropped.
KEPT_READS = "kept_with_credentials"


def own_profile_data(user: User) -> dict[str, dict]:
    """custom_profile_data of one user (`profile_data` of GET /users/me), kept with their cached
    credentials: the actions that change a user's values drop those (forget_credentials_on_commit)."""
    kept = getattr(user, KEPT_READS, None)
    if kept is not None and "profile_data" in kept:
        return kept["profile_data"]
    with connection.cursor() as cursor:
        cursor.execute(_OWN_PROFILE_DATA_SQL, [user.id])
        rows = cursor.fetchall()
    data = {
        str(field_id): {"value": value, "rendered_value": rendered} if rendered else {"value": value}
        for field_id, value, rendered in rows
    }
    if kept is not None:
        kept["profile_data"] = data
    return data


def custom_profile_data(users: QuerySet[User] | list[User]) -> dict[int, dict[str, dict]]:
    """`profile_data` for each user, in one query: {user_id: {"<field id>": {value, rendered_value?}}}."""
    return _profile_data(CustomProfileFieldValue.objects.filter(user__in=users))


def _profile_data(values: QuerySet[CustomProfileFieldValue]) -> dict[int, dict[str, dict]]:
    data: dict[int, dict[str, dict]] = defaultdict(dict)
    values = values.order_by("id").values_list("user_id", "field_id", "value", "rendered_value")
    for user_id, field_id, value, rendered_value in values:
        entry = {"value": value}
        if rendered_value:
            entry["rendered_value"] = rendered_value
        data[user_id][str(field_id)] = entry
    return data


def custom_profile_data_in_realm(realm: Realm, user_ids: list[int] | None = None) -> dict[int, dict[str, dict]]:
    """custom_profile_data of every user of the organization (those among `user_ids`, when given),
    in one query by the organization's fields (nothing to read, however many users, when it has none)."""
    values = CustomProfileFieldValue.objects.filter(field__realm_id=realm.id)
    return _profile_data(values if user_ids is None else values.filter(user_id__in=user_ids))


# --- settings -------------------------------------------------------------------------------------


def realm_user_default(realm: Realm) -> RealmUserDefault:
    """The organization's defaults for new users (unsaved, NEW_ORGANIZATION_DEFAULTS, for an
    organization created without them)."""
    found = RealmUserDefault.objects.filter(realm=realm).first()
    return found if found is not None else RealmUserDefault(realm=realm, **NEW_ORGANIZATION_DEFAULTS)


def access_humans_by_ids(realm: Realm, user_ids: list[int]) -> list[User]:
    """The people (deactivated ones too) of the organization with these ids, in order; "Invalid
    user ID: N" for a bot, or an id of another organization or of nobody."""
    user_ids = list(dict.fromkeys(user_ids))
    found = {u.id: u for u in users_in_realm(realm).filter(id__in=user_ids, bot_type__isnull=True)}
    for user_id in user_ids:
        if user_id not in found:
            raise JsonableError(f"Invalid user ID: {user_id}")
    return [found[user_id] for user_id in user_ids]


def active_humans_among(realm: Realm, user_ids: set[int] | None = None) -> list[User]:
    """The organization's active people (among `user_ids`, when given: bots and others left out), by id."""
    people = users_in_realm(realm).filter(is_active=True, bot_type__isnull=True)
    return list(people if user_ids is None else people.filter(id__in=user_ids))


def users_who_changed_setting(user_ids: list[int], name: str) -> set[int]:
    """Which of these users changed the setting `name` themselves at least once (Zulip's "already
    edited", for PATCH /settings' skip_if_already_edited): their own change is in the audit log."""
    return set(
        RealmAuditLog.objects.filter(
            modified_user_id__in=user_ids,
            acting_user_id=F("modified_user_id"),
            event_type=AuditLogEventType.USER_SETTING_CHANGED,
            extra_data__property=name,
        ).values_list("modified_user_id", flat=True)
    )


def email_change_request(key: str, *, for_update: bool) -> EmailChangeRequest | None:
    """The email change with this confirmation key, with its user (`for_update`: locked until the
    transaction ends)."""
    if len(key) != EmailChangeRequest.KEY_LENGTH or _UNSTORABLE_RE.search(key):
        return None
    requests = EmailChangeRequest.objects.select_related("user__realm")
    if for_update:
        requests = requests.select_for_update(of=("self",))
    return requests.filter(key=key).first()
