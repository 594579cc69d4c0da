"""Request parameter classes and the wire shapes of users, their settings and custom profile fields."""

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from apps.core.params import Id, Json, ParamError, Params, one_of
from apps.users.models import CustomProfileField, Role, User
from apps.users.selectors import UserRow, api_email, avatar_url_for_client, can_access_delivery_email
from apps.users.settings_models import USER_SETTINGS, Setting, UserBaseSettings
from apps.users.settings_values import NOTIFICATION_SOUNDS, emojiset_choices

RoleValue = one_of(*Role.values)
ProfileFieldTypeValue = one_of(*CustomProfileField.FieldType.values)


def user_to_dict(
    user: User | UserRow,
    *,
    acting_user: User,
    client_gravatar: bool,
    profile_data: dict[str, dict] | None = None,
) -> dict[str, Any]:
    """Zulip's User object as `acting_user` may see it. `profile_data` only for humans, if given."""
    result: dict[str, Any] = {
        "user_id": user.id,
        "email": api_email(user),
        "delivery_email": user.delivery_email if can_access_delivery_email(acting_user, user) else None,
        "full_name": user.full_name,
        "date_joined": user.date_joined.isoformat(timespec="minutes"),
        "is_active": user.is_active,
        "is_owner": user.is_owner,
        "is_admin": user.is_admin,
        "is_guest": user.is_guest,
        "is_bot": user.is_bot,
        "bot_type": user.bot_type,
        "bot_owner_id": user.bot_owner_id,
        "role": user.role,
        "timezone": user.timezone,
        "avatar_url": avatar_url_for_client(user, client_gravatar=client_gravatar),
        "avatar_version": user.avatar_version,
        "is_imported_stub": user.is_imported_stub,
    }
    if profile_data is not None and not user.is_bot:
        result["profile_data"] = profile_data
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


# --- settings -------------------------------------------------------------------------------------


def settings_to_dict(source: UserBaseSettings, *, legacy: str | None = None) -> dict[str, Any]:
    """The settings of a user or of an organization's defaults, as Zulip sends them (their stored
    values); only those of one legacy group (DISPLAY, NOTIFICATION) when `legacy` is given."""
    return {
        name: getattr(source, name)
        for name, setting in USER_SETTINGS.items()
        if legacy is None or setting.legacy == legacy
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
