"""Request parameter classes of /user_groups and the wire shape of a user group."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import from_json

from apps.core.errors import RequestVariableConversionError
from apps.core.params import Id, Json, ParamError, Params, one_of
from apps.groups.models import REALM_SETTINGS, UserGroup
from apps.realms.limits import MAX_WAITING_PERIOD_DAYS
from apps.realms.models import Realm

# One request's lists are bounded: enough for any organization, small enough to stay cheap.
MAX_IDS = 10_000
IdList = Annotated[list[Id], Field(max_length=MAX_IDS)]
MAX_ID = 2**63 - 1


@dataclass(frozen=True)
class AnonymousGroupValue:
    """A group-setting value given as `{direct_members, direct_subgroups}`."""

    direct_members: tuple[int, ...]
    direct_subgroups: tuple[int, ...]


# A group-setting value: a group id, or the members and subgroups of an anonymous group.
GroupSettingValue = int | AnonymousGroupValue


@dataclass(frozen=True)
class GroupSettingChange:
    """PATCH's `{"new": value, "old": value}`; `old`, when given, must be the current value."""

    new: GroupSettingValue
    old: GroupSettingValue | None


def user_group_to_dict(
    group: UserGroup,
    *,
    members: list[int],
    direct_subgroup_ids: list[int],
    settings: Mapping[str, int | dict[str, list[int]]],
) -> dict[str, Any]:
    """Zulip's UserGroup object, for GET /user_groups, `realm_user_groups` and `user_group/add`."""
    return {
        "id": group.id,
        "name": group.name,
        "description": group.description,
        "members": sorted(members),
        "direct_subgroup_ids": sorted(direct_subgroup_ids),
        "creator_id": group.creator_id,
        "date_created": int(group.date_created.timestamp()) if group.date_created is not None else None,
        "is_system_group": group.is_system_group,
        "deactivated": group.deactivated,
        **{name: settings[name] for name in UserGroup.SETTINGS},
    }


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID


def parse_setting_value(value: Any, name: str) -> GroupSettingValue:
    """A group id or `{"direct_members": [ids], "direct_subgroups": [ids]}`, else Zulip's error."""
    if _is_id(value):
        return value
    if isinstance(value, dict) and set(value) == {"direct_members", "direct_subgroups"}:
        members, subgroups = value["direct_members"], value["direct_subgroups"]
        if (
            isinstance(members, list)
            and isinstance(subgroups, list)
            and len(members) + len(subgroups) <= MAX_IDS
            and all(_is_id(item) for item in [*members, *subgroups])
        ):
            # Duplicates mean nothing more; the order of first appearance is kept.
            return AnonymousGroupValue(tuple(dict.fromkeys(members)), tuple(dict.fromkeys(subgroups)))
    raise ParamError(f"{name} does not have the expected format")


def parse_setting_field(value: Any, info: ValidationInfo) -> GroupSettingValue | None:
    return None if value is None else parse_setting_value(value, info.field_name)


def parse_setting_change_field(value: Any, info: ValidationInfo) -> GroupSettingChange | None:
    if value is None:
        return None
    name = info.field_name
    if not isinstance(value, dict) or "new" not in value or set(value) - {"new", "old"}:
        raise ParamError(f"{name} does not have the expected format")
    old = value.get("old")
    return GroupSettingChange(
        new=parse_setting_value(value["new"], name),
        old=None if old is None else parse_setting_value(old, name),
    )


SETTING_NAMES = tuple(UserGroup.SETTINGS)


class GetUserGroupsParams(Params):
    include_deactivated_groups: Json[bool] = False


class _GroupSettingParams(Params):
    """The six group-valued settings, each JSON; subclasses say which form they take."""

    can_add_members_group: Json[Any] = None
    can_join_group: Json[Any] = None
    can_leave_group: Json[Any] = None
    can_manage_group: Json[Any] = None
    can_mention_group: Json[Any] = None
    can_remove_members_group: Json[Any] = None

    def settings(self) -> dict[str, Any]:
        """The settings the request gave, by name."""
        return {name: getattr(self, name) for name in SETTING_NAMES if getattr(self, name) is not None}


class CreateUserGroupParams(_GroupSettingParams):
    """Settings are values: a group id or `{direct_members, direct_subgroups}`."""

    name: str
    description: str
    members: Json[IdList]
    subgroups: Json[IdList] | None = None

    _settings = field_validator(*SETTING_NAMES)(parse_setting_field)


class UpdateUserGroupParams(_GroupSettingParams):
    """Settings are changes: `{"new": value, "old": value}` (`old` optional)."""

    name: str | None = None
    description: str | None = None
    deactivated: Json[bool] | None = None

    _settings = field_validator(*SETTING_NAMES)(parse_setting_change_field)


class UpdateMembersParams(Params):
    add: Json[IdList] = Field(default_factory=list)
    delete: Json[IdList] = Field(default_factory=list)
    add_subgroups: Json[IdList] = Field(default_factory=list)
    delete_subgroups: Json[IdList] = Field(default_factory=list)


class UpdateSubgroupsParams(Params):
    add: Json[IdList] = Field(default_factory=list)
    delete: Json[IdList] = Field(default_factory=list)


class GetMembersParams(Params):
    direct_member_only: Json[bool] = False


class GetSubgroupsParams(Params):
    direct_subgroup_only: Json[bool] = False


# --- PATCH /realm (here, because it changes the organization's group-valued settings too) ----------

# Zulip's value for "no limit" of the *_limit_seconds settings.
UNLIMITED = "unlimited"
MAX_LIMIT_SECONDS = 2**31 - 1
PLAIN_REALM_SETTINGS = (
    "name",
    "description",
    "welcome_message_custom_text",
    "allow_message_editing",
    "message_edit_history_visibility_policy",
    "enable_read_receipts",
    "topics_policy",
    "waiting_period_threshold",
    "emails_restricted_to_domains",
    "disallow_disposable_email_addresses",
    "avatar_changes_disabled",
    "presence_disabled",
)
TIME_LIMIT_SETTINGS = (
    "message_content_edit_limit_seconds",
    "message_content_delete_limit_seconds",
    "move_messages_within_stream_limit_seconds",
    "move_messages_between_streams_limit_seconds",
)


def parse_time_limit(raw: str, name: str) -> int | None:
    """Zulip's parse_message_time_limit_setting: a positive number of seconds, or "unlimited" (None),
    JSON-encoded as Zulip's web app sends it, or "unlimited" as it is (the Python client's way)."""
    try:
        value = from_json(raw)
    except ValueError:
        value = raw
    if value == UNLIMITED:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_LIMIT_SECONDS:
        return value
    raise RequestVariableConversionError(name, value)


class UpdateRealmParams(Params):
    """The organization settings Parley keeps; those left out stay as they are."""

    name: str | None = None
    description: str | None = None
    welcome_message_custom_text: str | None = None
    allow_message_editing: Json[bool] | None = None
    message_edit_history_visibility_policy: one_of(*Realm.EditHistoryVisibility.values) | None = None
    enable_read_receipts: Json[bool] | None = None
    topics_policy: one_of(*Realm.TopicsPolicy.values) | None = None
    waiting_period_threshold: Json[Annotated[int, Field(ge=0, le=MAX_WAITING_PERIOD_DAYS)]] | None = None
    emails_restricted_to_domains: Json[bool] | None = None
    disallow_disposable_email_addresses: Json[bool] | None = None
    avatar_changes_disabled: Json[bool] | None = None
    presence_disabled: Json[bool] | None = None
    message_content_edit_limit_seconds: str | None = None
    message_content_delete_limit_seconds: str | None = None
    move_messages_within_stream_limit_seconds: str | None = None
    move_messages_between_streams_limit_seconds: str | None = None
    create_multiuse_invite_group: Json[Any] = None
    can_invite_users_group: Json[Any] = None
    can_add_subscribers_group: Json[Any] = None
    can_create_private_channel_group: Json[Any] = None
    can_create_public_channel_group: Json[Any] = None
    can_delete_any_message_group: Json[Any] = None
    can_delete_own_message_group: Json[Any] = None
    can_move_messages_between_channels_group: Json[Any] = None
    can_move_messages_between_topics_group: Json[Any] = None
    can_resolve_topics_group: Json[Any] = None
    can_set_delete_message_policy_group: Json[Any] = None
    can_set_topics_policy_group: Json[Any] = None
    can_add_custom_emoji_group: Json[Any] = None
    can_mention_many_users_group: Json[Any] = None
    can_create_bots_group: Json[Any] = None
    can_create_write_only_bots_group: Json[Any] = None
    can_create_groups: Json[Any] = None
    can_manage_all_groups: Json[Any] = None
    direct_message_permission_group: Json[Any] = None
    direct_message_initiator_group: Json[Any] = None
    can_access_all_users_group: Json[Any] = None

    _groups = field_validator(*REALM_SETTINGS)(parse_setting_change_field)

    def settings(self) -> dict[str, Any]:
        """The organization's own settings the request gave, by name, checked ("unlimited": None)."""
        given = {name: getattr(self, name) for name in PLAIN_REALM_SETTINGS if getattr(self, name) is not None}
        for name in TIME_LIMIT_SETTINGS:
            if getattr(self, name) is not None:
                given[name] = parse_time_limit(getattr(self, name), name)
        return given

    def group_settings(self) -> dict[str, GroupSettingChange]:
        return {name: getattr(self, name) for name in REALM_SETTINGS if getattr(self, name) is not None}
