"""Request parameter classes and the wire shapes of users, their settings and custom profile fields."""

from typing import Annotated, Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from typing_extensions import TypedDict

from apps.core.params import Id, Json, ParamError, Params, one_of
from apps.realms.models import EmailVisibility, Realm
from apps.users.models import AvatarSource, CustomProfileField, Role, User
from apps.users.selectors import (
    USER_ROW_FIELDS,
    VISIBILITY_FOR_ROLE,
    avatar_url_of,
    client_computes_gravatar,
    fake_email_domain,
)
from apps.users.settings_models import USER_SETTINGS, RealmUserDefault, Setting, UserBaseSettings
from apps.users.settings_values import NOTIFICATION_SOUNDS, emojiset_choices

RoleValue = one_of(*Role.values)
ProfileFieldTypeValue = one_of(*CustomProfileField.FieldType.values)


def user_to_dict(
    user: User,
    *,
    acting_user: User,
    client_gravatar: bool,
    profile_data: dict[str, dict] | None = None,
) -> dict[str, Any]:
    """Zulip's User object as `acting_user` may see it. `profile_data` only for humans, if given."""
    row = tuple(getattr(user, name) for name in USER_ROW_FIELDS)
    data = None if profile_data is None else {user.id: profile_data}
    [shape] = users_to_dicts(
        [row], user.realm, acting_user=acting_user, client_gravatar=client_gravatar, profile_data=data
    )
    return shape


def users_to_dicts(
    rows: list[tuple],
    realm: Realm,
    *,
    acting_user: User,
    client_gravatar: bool,
    profile_data: dict[int, dict[str, dict]] | None = None,
) -> list[dict[str, Any]]:
    """user_to_dict of many users of `realm`, read as USER_ROW_FIELDS tuples (user_rows_in_realm):
    what depends on the requester and the organization is worked out once, not per user (and
    `date_joined` may come as its wire text).
    `profile_data` by user id (humans without any get {}); None leaves the field out."""
    fake_domain = fake_email_domain(realm.host)
    sees = VISIBILITY_FOR_ROLE[acting_user.role]
    everyone, gravatar = EmailVisibility.EVERYONE, AvatarSource.GRAVATAR
    client_gravatar = client_computes_gravatar(client_gravatar)
    owner, admins, guest = Role.OWNER, (Role.OWNER, Role.ADMINISTRATOR), Role.GUEST
    result = []
    for (user_id, email, visibility, full_name, date_joined, is_active, role, bot_type, bot_owner_id, timezone,
         avatar_source, avatar_version, avatar_hash, is_imported_stub) in rows:  # fmt: skip
        is_bot = bot_type is not None
        shown = is_bot or visibility == everyone
        if client_gravatar and avatar_source == gravatar and visibility == everyone:
            avatar = None
        else:
            avatar = avatar_url_of(realm.id, email, avatar_source, avatar_hash, avatar_version)
        shape = {
            "user_id": user_id,
            "email": email if shown else f"user{user_id}@{fake_domain}",
            "delivery_email": email if is_bot or user_id == acting_user.id or visibility in sees else None,
            "full_name": full_name,
            "date_joined": date_joined if isinstance(date_joined, str) else date_joined.isoformat(timespec="minutes"),
            "is_active": is_active,
            "is_owner": role == owner,
            "is_admin": role in admins,
            "is_guest": role == guest,
            "is_bot": is_bot,
            "bot_type": bot_type,
            "bot_owner_id": bot_owner_id,
            "role": role,
            "timezone": timezone,
            "avatar_url": avatar,
            "avatar_version": avatar_version,
            "is_imported_stub": is_imported_stub,
        }
        if profile_data is not None and not is_bot:
            shape["profile_data"] = profile_data.get(user_id, {})
        if is_bot and bot_owner_id is None:
            # The server's own bots (Notification Bot, Welcome Bot): Zulip marks its system bots so.
            shape["is_system_bot"] = True
        result.append(shape)
    return result


def own_user_to_dict(user: User, *, profile_data: dict[str, dict], extras: dict[str, Any]) -> dict[str, Any]:
    """GET /users/me: the own-user fields, at the top level of the response, with the fields other
    apps add (`extras`: the own_user_extras hooks, e.g. max_message_id)."""
    result = user_to_dict(user, acting_user=user, client_gravatar=False, profile_data=profile_data)
    del result["bot_type"], result["bot_owner_id"]
    result.update(extras)
    return result


def custom_profile_field_to_dict(field: CustomProfileField) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": field.id,
        "name": field.name,
        "type": field.field_type,
        "hint": field.hint,
        "field_data": field.field_data,
        "order": field.order,
        "required": field.required,
        "editable_by_user": field.editable_by_user,
    }
    if field.display_in_profile_summary:
        result["display_in_profile_summary"] = True
    return result


# --- answers: the OpenAPI document's success schemas (apps/core/openapi.py) ------------------------


class OwnUserShape(TypedDict):
    """own_user_to_dict's fields (GET /users/me); other apps add theirs (max_message_id)."""

    user_id: int
    email: str
    delivery_email: str | None
    full_name: str
    date_joined: str
    is_active: bool
    is_owner: bool
    is_admin: bool
    is_guest: bool
    is_bot: bool
    role: int
    timezone: str
    avatar_url: str | None
    avatar_version: int
    is_imported_stub: bool
    profile_data: NotRequired[dict[str, dict[str, Any]]]
    max_message_id: NotRequired[int]


class UserShape(OwnUserShape):
    """Zulip's User object: user_to_dict."""

    bot_type: int | None
    bot_owner_id: int | None


class UsersAnswer(TypedDict):
    members: list[UserShape]


class UserAnswer(TypedDict):
    user: UserShape


# Generous bounds that keep one request's work small: no organization has this many fields.
MAX_ITEMS = 1000


class ProfileDataItem(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: Id
    value: str | Annotated[list[Id], Field(max_length=MAX_ITEMS)] | None


ProfileData = Annotated[list[ProfileDataItem], Field(max_length=MAX_ITEMS)]


class GetUsersParams(Params):
    client_gravatar: Json[bool] = True
    include_custom_profile_fields: Json[bool] = False
    # Only these users (Zulip's get_members_backend); ids of no user of the organization give none.
    user_ids: Json[Annotated[list[Id], Field(max_length=MAX_ITEMS)]] | None = None


class CreateUserParams(Params):
    email: str
    password: str
    full_name: str


class UpdateUserParams(Params):
    full_name: str | None = None
    role: Json[RoleValue] | None = None
    profile_data: Json[ProfileData] | None = None
    new_email: str | None = None


class UpdateOwnProfileDataParams(Params):
    data: Json[ProfileData]


class RemoveOwnProfileDataParams(Params):
    data: Json[Annotated[list[Id], Field(max_length=MAX_ITEMS)]]


class CreateCustomProfileFieldParams(Params):
    name: str = ""
    hint: str = ""
    field_type: Json[ProfileFieldTypeValue]
    field_data: Json[dict[str, Any]] = Field(default_factory=dict)
    display_in_profile_summary: Json[bool] = False
    required: Json[bool] = False
    editable_by_user: Json[bool] = True


class UpdateCustomProfileFieldParams(Params):
    name: str | None = None
    hint: str | None = None
    field_data: Json[dict[str, Any]] | None = None
    display_in_profile_summary: Json[bool] | None = None
    required: Json[bool] | None = None
    editable_by_user: Json[bool] | None = None


class ReorderCustomProfileFieldsParams(Params):
    order: Json[Annotated[list[Id], Field(max_length=MAX_ITEMS)]]


class FetchApiKeyParams(Params):
    username: str
    password: str


class SessionFetchApiKeyParams(Params):
    """/json/fetch_api_key: the logged-in person's password (Zulip's json_fetch_api_key)."""

    password: str = ""


# --- settings -------------------------------------------------------------------------------------


def settings_to_dict(source: UserBaseSettings, *, legacy: str | None = None) -> dict[str, Any]:
    """The settings of a user or of an organization's defaults, as Zulip sends them (their stored
    values); only those of one legacy group (DISPLAY, NOTIFICATION) when `legacy` is given."""
    defaults = isinstance(source, RealmUserDefault)
    return {
        name: getattr(source, name)
        for name, setting in USER_SETTINGS.items()
        if (legacy is None or setting.legacy == legacy) and not (defaults and setting.profile)
    }


def settings_object_to_dict(source: UserBaseSettings) -> dict[str, Any]:
    """`user_settings` and `realm_user_settings_defaults` of /register: every setting, and the
    choices of the emoji set and notification sound."""
    return {
        **settings_to_dict(source),
        "emojiset_choices": emojiset_choices(),
        "available_notification_sounds": list(NOTIFICATION_SOUNDS),
    }


def _param_type(setting: Setting) -> Any:
    """Booleans and numbers are JSON in the form; strings are sent raw (Zulip's encodings)."""
    return str if setting.kind is str else Json[setting.kind]


class TargetUsersParam(BaseModel):
    """PATCH /settings' `target_users`: whose settings an administrator changes."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    user_ids: Annotated[list[Id], Field(max_length=MAX_ITEMS * 10)] = []
    group_ids: Annotated[list[Id], Field(max_length=MAX_ITEMS)] = []
    skip_if_already_edited: bool

    @model_validator(mode="after")
    def _someone(self) -> "TargetUsersParam":
        if not self.user_ids and not self.group_ids:
            raise ParamError("Either user_ids or group_ids must be provided.")
        return self


def _settings_params(name: str, settings: dict[str, Setting], **more: Any) -> type[Params]:
    fields = {setting_name: (_param_type(setting) | None, None) for setting_name, setting in settings.items()}
    return create_model(name, __base__=Params, **more, **fields)


# PATCH /settings (and its legacy aliases /settings/display, /settings/notifications).
UpdateSettingsParams = _settings_params(
    "UpdateSettingsParams",
    USER_SETTINGS,
    full_name=(str | None, None),
    email=(str | None, None),
    old_password=(str | None, None),
    new_password=(str | None, None),
    target_users=(Json[TargetUsersParam] | None, None),
)

# PATCH /realm/user_settings_defaults.
RealmUserDefaultsParams = _settings_params(
    "RealmUserDefaultsParams", {name: setting for name, setting in USER_SETTINGS.items() if setting.org_default}
)


def given_settings(params: Params) -> dict[str, Any]:
    """The settings a request gave (a null value gives none), by name."""
    return {
        name: getattr(params, name)
        for name in USER_SETTINGS
        if name in type(params).model_fields and getattr(params, name) is not None
    }
