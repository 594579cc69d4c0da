"""Request parameter classes of channels, subscriptions and topics, and their wire shapes."""

import re
from enum import Enum
from typing import Annotated, Any, Literal, NotRequired, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from typing_extensions import TypedDict

from apps.core.errors import JsonableError, RequestVariableConversionError
from apps.core.params import Id, IncludeSubscribers, Json, ParamError, Params
from apps.groups.serializers import (
    GroupSettingChange,
    GroupSettingValue,
    UpdateRealmParams,
    parse_setting_change_field,
    parse_setting_field,
)
from apps.realms.limits import MAX_TOPIC_LENGTH
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.topics import topic_from_client

MAX_ITEMS = 10_000

# Zulip's palette for new subscriptions (zerver/lib/stream_color.py): each new subscription takes
# the first color the user does not use yet.
STREAM_ASSIGNMENT_COLORS = (
    "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55", "#b0a5fd", "#addfe5",
    "#f5ce6e", "#c2726a", "#94c849", "#bd86e5", "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063",
    "#9987e1", "#e4523d", "#c2c2c2", "#4f8de4", "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
)  # fmt: skip
COLOR_RE = re.compile(r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})")

# A subscription's notification settings null (the user's default) are, for clients without the
# `notification_settings_null` capability, the user's enable_stream_* settings (Zulip's
# handle_stream_notifications_compatibility; wildcard_mentions_notify stays null).
NULL_NOTIFICATION_FALLBACKS = {
    "desktop_notifications": "enable_stream_desktop_notifications",
    "audible_notifications": "enable_stream_audible_notifications",
    "push_notifications": "enable_stream_push_notifications",
    "email_notifications": "enable_stream_email_notifications",
}
NOTIFICATION_PROPERTIES = (*NULL_NOTIFICATION_FALLBACKS, "wildcard_mentions_notify")
BOOLEAN_PROPERTIES = ("in_home_view", "is_muted", "pin_to_top", *NOTIFICATION_PROPERTIES)

# Zulip's deprecated stream_post_policy, derived from can_send_message_group.
POST_POLICY_BY_GROUP = {"role:administrators": 2, "role:fullmembers": 3, "role:moderators": 4}


def check_color(var_name: str, value: str) -> str:
    if not COLOR_RE.fullmatch(value):
        raise ParamError(f"{var_name} is not a valid hex color code")
    return normalize_color(value)


def normalize_color(value: str) -> str:
    """A color as clients read it: "#rrggbb", lowercase (the mobile app reads six hex digits, and
    its debug builds assert lowercase; Zulip keeps what it was given). Taken as #rgb or #RRGGBB."""
    digits = value[1:].lower()
    return "#" + ("".join(digit * 2 for digit in digits) if len(digits) == 3 else digits)


def stream_to_dict(
    stream: Stream, setting_values: dict[int, Any], *, subscriber_count: int, group_names: dict[int, str]
) -> dict[str, Any]:
    """Zulip's BasicChannel: GET /streams, `stream` events and the channel part of a subscription.
    `setting_values` maps setting group ids to their API values (groups.setting_values_for_api)."""
    post_policy = POST_POLICY_BY_GROUP.get(group_names.get(stream.can_send_message_group_id, ""), 1)
    return {
        "stream_id": stream.id,
        "name": stream.name,
        "description": stream.description,
        "rendered_description": stream.rendered_description,
        "date_created": int(stream.date_created.timestamp()),
        "creator_id": stream.creator_id,
        "invite_only": stream.invite_only,
        "is_web_public": stream.is_web_public,
        "history_public_to_subscribers": stream.history_public_to_subscribers,
        "is_archived": stream.deactivated,
        "first_message_id": stream.first_message_id,
        "message_retention_days": stream.message_retention_days,
        "folder_id": stream.folder_id,
        "topics_policy": stream.topics_policy,
        "stream_post_policy": post_policy,
        "is_announcement_only": post_policy == 2,
        "is_recently_active": True,
        "stream_weekly_traffic": None,
        "subscriber_count": subscriber_count,
        **{name: setting_values[getattr(stream, f"{name}_id")] for name in Stream.SETTINGS},
    }


def subscription_to_dict(
    sub: Subscription, channel: dict[str, Any], *, subscribers: list[int] | None
) -> dict[str, Any]:
    """Zulip's Subscription object: the channel, the user's settings for it and, if asked, its
    subscribers. Notification settings are null when they follow the user's defaults."""
    result = {
        **channel,
        "color": sub.color,
        "is_muted": sub.is_muted,
        "in_home_view": not sub.is_muted,
        "pin_to_top": sub.pin_to_top,
        **{name: getattr(sub, name) for name in NOTIFICATION_PROPERTIES},
        # The channel's address for the email gateway, which Parley has not (GET
        # /streams/{id}/email_address: empty). Zulip stopped sending it at feature level 226, but
        # zulip-terminal 0.7.0 reads it to show a channel's information (the real-client QA pass:
        # it crashed there).
        "email_address": "",
    }
    if subscribers is not None:
        result["subscribers"] = sorted(subscribers)
    return result


def null_notification_fallbacks(settings: Any) -> dict[str, bool]:
    """What a user's null notification settings are for clients that cannot take null (`settings`:
    the user, or a dict of their enable_stream_* values)."""
    read = settings.get if isinstance(settings, dict) else lambda name: getattr(settings, name)
    return {prop: read(setting) for prop, setting in NULL_NOTIFICATION_FALLBACKS.items()}


def fill_null_notification_settings(subscription: dict[str, Any], fallbacks: dict[str, bool]) -> dict[str, Any]:
    """For clients without the `notification_settings_null` capability (see NULL_NOTIFICATION_FALLBACKS)."""
    return {
        **subscription,
        **{name: value for name, value in fallbacks.items() if name in subscription and subscription[name] is None},
    }


def user_topic_to_dict(user_topic: UserTopic) -> dict[str, Any]:
    return {
        "stream_id": user_topic.stream_id,
        "topic_name": user_topic.topic_name,
        "last_updated": int(user_topic.last_updated.timestamp()),
        "visibility_policy": user_topic.visibility_policy,
    }


# --- answers: the OpenAPI document's success schemas (apps/core/openapi.py) ------------------------


class SubscriptionShape(TypedDict):
    """Zulip's Subscription object (subscription_to_dict): the channel (stream_to_dict, whose
    group-valued settings are left out here), the user's settings for it and its subscribers if asked."""

    stream_id: int
    name: str
    description: str
    rendered_description: str
    date_created: int
    creator_id: int | None
    invite_only: bool
    is_web_public: bool
    history_public_to_subscribers: bool
    is_archived: bool
    first_message_id: int | None
    message_retention_days: int | None
    folder_id: int | None
    topics_policy: str
    stream_post_policy: int
    is_announcement_only: bool
    subscriber_count: int
    color: str
    is_muted: bool
    in_home_view: bool
    pin_to_top: bool
    desktop_notifications: bool | None
    audible_notifications: bool | None
    push_notifications: bool | None
    email_notifications: bool | None
    wildcard_mentions_notify: bool | None
    email_address: str
    subscribers: NotRequired[list[int]]


class SubscriptionsAnswer(TypedDict):
    subscriptions: list[SubscriptionShape]


# --- parameters -----------------------------------------------------------------------------------
#
# Values are checked after the fields' types (model validators run only when every field parsed), so
# a malformed parameter is reported first, as before; these errors are Zulip's (BAD_REQUEST).


class Unchanged(Enum):
    """A setting a change leaves as it is, where None is a value (message_retention_days)."""

    UNCHANGED = "unchanged"


UNCHANGED = Unchanged.UNCHANGED

MAX_RETENTION_DAYS = 2**31 - 1


def parse_message_retention_days(value: str | int) -> int | None:
    """Zulip's values: "realm_default" (None), "unlimited" (-1) or a positive number of days."""
    if value == "realm_default":
        return None
    if value == "unlimited":
        return -1
    # Within the column's range (a 32-bit integer on PostgreSQL): beyond it, a 400, not a 500.
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_RETENTION_DAYS:
        return value
    raise RequestVariableConversionError("message_retention_days", value)


def parse_topics_policy(value: str) -> str:
    if value not in Stream.TopicsPolicy.values:
        raise JsonableError("Invalid topics_policy")
    return value


def check_topic_length(topic: str) -> None:
    if len(topic) > MAX_TOPIC_LENGTH:
        raise JsonableError(f"topic is too long (limit: {MAX_TOPIC_LENGTH} characters)")


class NewSubscription(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    name: str
    color: str | None = None
    description: Annotated[str, Field(max_length=Stream.MAX_DESCRIPTION_LENGTH)] | None = None

    @field_validator("color")
    @classmethod
    def _color(cls, value: str | None) -> str | None:
        return None if value is None else check_color("add.color", value)


# An empty list means the user themself, as no list does (Zulip's `if principals:`).
Principals = Annotated[list[Id], Field(max_length=MAX_ITEMS)] | Annotated[list[str], Field(max_length=MAX_ITEMS)]


class _ChannelSettings(Params):
    """The group settings a channel is created with (a group id or {direct_members, direct_subgroups})."""

    can_add_subscribers_group: Json[Any] = None
    can_administer_channel_group: Json[Any] = None
    can_create_topic_group: Json[Any] = None
    can_delete_any_message_group: Json[Any] = None
    can_delete_own_message_group: Json[Any] = None
    can_move_messages_out_of_channel_group: Json[Any] = None
    can_move_messages_within_channel_group: Json[Any] = None
    can_remove_subscribers_group: Json[Any] = None
    can_resolve_topics_group: Json[Any] = None
    can_send_message_group: Json[Any] = None
    can_subscribe_group: Json[Any] = None

    _settings = field_validator(*Stream.SETTINGS)(parse_setting_field)

    def group_settings(self) -> dict[str, GroupSettingValue]:
        return {name: getattr(self, name) for name in Stream.SETTINGS if getattr(self, name) is not None}


class NewChannelParams(_ChannelSettings):
    """The settings of the channels a request creates (POST /users/me/subscriptions and POST
    /channels/create)."""

    invite_only: Json[bool] = False
    is_web_public: Json[bool] = False
    is_default_stream: Json[bool] = False
    history_public_to_subscribers: Json[bool] | None = None
    message_retention_days: Json[str | int] = "realm_default"
    topics_policy: str | None = None
    folder_id: Json[int] | None = None  # of the channels created
    announce: Json[bool] = False

    @model_validator(mode="after")
    def _values(self) -> Self:
        self.retention_days()
        return self.model_copy(
            update={"topics_policy": parse_topics_policy(self.topics_policy or Stream.TopicsPolicy.INHERIT)}
        )

    def retention_days(self) -> int | None:
        """The new channels' message_retention_days (None: the organization's default)."""
        return parse_message_retention_days(self.message_retention_days)


class SubscribeParams(NewChannelParams):
    subscriptions: Json[Annotated[list[NewSubscription], Field(max_length=MAX_ITEMS)]]
    principals: Json[Principals] | None = None
    authorization_errors_fatal: Json[bool] = True
    send_new_subscription_messages: Json[bool] = True


class CreateChannelParams(NewChannelParams):
    """POST /channels/create (Zulip 11): `subscribers` is required, as in Zulip (empty: nobody)."""

    name: str
    description: Annotated[str, Field(max_length=Stream.MAX_DESCRIPTION_LENGTH)] = ""
    subscribers: Json[Annotated[list[Id], Field(max_length=MAX_ITEMS)]]


class CreateChannelAnswer(TypedDict):
    id: int


class UnsubscribeParams(Params):
    subscriptions: Json[Annotated[list[str], Field(max_length=MAX_ITEMS)]]
    principals: Json[Principals] | None = None


class UpdateSubscriptionsParams(Params):
    """PATCH /users/me/subscriptions: Zulip's update_subscriptions, both lists optional."""

    add: Json[Annotated[list[NewSubscription], Field(max_length=MAX_ITEMS)]] = Field(default_factory=list)
    delete: Json[Annotated[list[str], Field(max_length=MAX_ITEMS)]] = Field(default_factory=list)


class ListSubscriptionsParams(Params):
    # "partial": the whole lists too (Zulip's server may send whole lists where it could send part).
    include_subscribers: IncludeSubscribers = "false"


class SubscriptionPropertyChange(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    stream_id: Id
    property: str
    value: bool | str


class UpdateSubscriptionPropertyParams(Params):
    property: str
    # A JSON boolean, else the raw string (a color).
    value: Annotated[Json[bool] | str, Field(union_mode="left_to_right")]


class BulkSubscriptionPropertiesParams(Params):
    subscription_data: Json[Annotated[list[SubscriptionPropertyChange], Field(max_length=MAX_ITEMS)]]


class UserTopicParams(Params):
    stream_id: Json[Id]
    topic: str  # its stored form (topics.topic_from_client) once parsed
    visibility_policy: Json[int]

    @field_validator("visibility_policy")
    @classmethod
    def _policy(cls, value: int) -> int:
        if value not in UserTopic.VisibilityPolicy.values:
            raise ParamError("Invalid visibility_policy")
        return value

    @model_validator(mode="after")
    def _topic(self) -> Self:
        topic = topic_from_client(self.topic)
        check_topic_length(topic)
        return self.model_copy(update={"topic": topic})


class GetStreamsParams(Params):
    include_public: Json[bool] = True
    include_web_public: Json[bool] = False
    include_subscribed: Json[bool] = True
    exclude_archived: Json[bool] = True
    include_all: Json[bool] = False
    include_all_active: Json[bool] = False
    include_default: Json[bool] = False
    include_owner_subscribed: Json[bool] = False


class DefaultStreamParams(Params):
    stream_id: Json[int]


class StreamEmailAddressParams(Params):
    sender_id: Json[int] | None = None


class StreamEmailAddressAnswer(TypedDict):
    email: str


class GetStreamIdParams(Params):
    stream: str


class UpdateStreamParams(Params):
    description: Annotated[str, Field(max_length=Stream.MAX_DESCRIPTION_LENGTH)] | None = None
    new_name: str | None = None
    is_private: Json[bool] | None = None
    is_web_public: Json[bool] | None = None
    history_public_to_subscribers: Json[bool] | None = None
    is_default_stream: Json[bool] | None = None
    message_retention_days: Json[str | int] | None = None
    topics_policy: str | None = None
    folder_id: Json[int | None] = None  # null takes the channel out of its folder
    is_archived: Json[bool] | None = None
    can_add_subscribers_group: Json[Any] = None
    can_administer_channel_group: Json[Any] = None
    can_create_topic_group: Json[Any] = None
    can_delete_any_message_group: Json[Any] = None
    can_delete_own_message_group: Json[Any] = None
    can_move_messages_out_of_channel_group: Json[Any] = None
    can_move_messages_within_channel_group: Json[Any] = None
    can_remove_subscribers_group: Json[Any] = None
    can_resolve_topics_group: Json[Any] = None
    can_send_message_group: Json[Any] = None
    can_subscribe_group: Json[Any] = None

    _settings = field_validator(*Stream.SETTINGS)(parse_setting_change_field)

    def folder_change(self) -> int | Unchanged | None:
        """The new folder's id (None: no folder), or UNCHANGED when `folder_id` was not sent."""
        return self.folder_id if "folder_id" in self.model_fields_set else UNCHANGED

    @model_validator(mode="after")
    def _values(self) -> Self:
        self.retention_days()
        if self.topics_policy is not None:
            parse_topics_policy(self.topics_policy)
        return self

    def retention_days(self) -> int | Unchanged | None:
        """The new message_retention_days (None: the organization's default), or UNCHANGED."""
        if self.message_retention_days is None:
            return UNCHANGED
        return parse_message_retention_days(self.message_retention_days)

    def group_setting_changes(self) -> dict[str, GroupSettingChange]:
        return {name: getattr(self, name) for name in Stream.SETTINGS if getattr(self, name) is not None}


class LegacyMuteTopicParams(Params):
    stream_id: Json[Id] | None = None
    stream: str | None = None
    topic: str  # its stored form (topics.topic_from_client) once parsed
    op: Literal["add", "remove"]

    @model_validator(mode="after")
    def _checks(self) -> Self:
        topic = topic_from_client(self.topic)
        check_topic_length(topic)
        if (self.stream_id is None) == (self.stream is None):
            raise JsonableError("Please choose one: 'stream' or 'stream_id'.")
        return self.model_copy(update={"topic": topic})


# The organization's announcement channels: PATCH /realm takes each as `<name>_id`.
ANNOUNCEMENT_CHANNELS = (
    "new_stream_announcements_stream",
    "signup_announcements_stream",
    "zulip_update_announcements_stream",
)


class UpdateRealmWithChannelParams(UpdateRealmParams):
    """PATCH /realm: the organization's settings (apps.groups) and those whose value is a channel."""

    moderation_request_channel_id: Json[int] | None = None
    new_stream_announcements_stream_id: Json[int] | None = None
    signup_announcements_stream_id: Json[int] | None = None
    zulip_update_announcements_stream_id: Json[int] | None = None


class CreateDefaultChannelGroupParams(Params):
    group_name: Annotated[str, Field(max_length=1000)]
    description: Annotated[str, Field(max_length=10_000)]
    stream_names: Json[Annotated[list[str], Field(max_length=MAX_ITEMS)]]


class UpdateDefaultChannelGroupParams(Params):
    new_group_name: Annotated[str, Field(max_length=1000)] | None = None
    new_description: Annotated[str, Field(max_length=10_000)] | None = None


class DefaultChannelGroupChannelsParams(Params):
    op: Annotated[str, Field(max_length=100)]
    stream_names: Json[Annotated[list[str], Field(max_length=MAX_ITEMS)]]
