"""Every user setting Zulip has, declared once: as a column of UserBaseSettings (the settings of
users, apps.users.models.User, and of RealmUserDefault, an organization's defaults for new users),
with what the rest of Parley needs to know about it.

Each declaration (`user_setting(field, ...)`) drives everything about its setting: its type and
allowed values (PATCH /settings, PATCH /realm/user_settings_defaults, the admin, the
change_user_settings command all validate with `Setting.validate`), its wire value (the stored
value, in `user_settings` and in events), whether it is also one of the legacy top-level keys of
/register, and who may change it. `USER_SETTINGS` lists them, in declaration order.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import models

from apps.core.errors import InvalidArgumentError, JsonableError
from apps.realms.models import EmailVisibility, Realm
from apps.users.settings_values import (
    AnimateImagePreviews,
    AutomaticAlwaysNever,
    AutomaticTopicPolicy,
    ChannelDefaultView,
    ColorScheme,
    DesktopIconCount,
    Emojiset,
    HomeView,
    MarkReadOnScroll,
    ResolvedTopicNoticeAutoRead,
    UnreadsCountDisplay,
    UserListStyle,
    check_email_batching_period,
    check_language,
    check_notification_sound,
    check_timezone,
)

# Zulip's two legacy groups: also sent as top-level /register keys to clients without the
# `user_settings_object` capability (fetched as "update_display_settings" and
# "update_global_notifications"). No setting newer than Zulip 5.0 joins them.
DISPLAY = "display"
NOTIFICATION = "notification"


@dataclass(frozen=True)
class Setting:
    """What Parley knows about one user setting (see the module's docstring)."""

    name: str
    kind: type  # bool, int or str
    default: Any
    choices: frozenset | None
    minimum: int | None
    maximum: int | None
    # The message refusing a value, or None. Zulip refuses a time zone as a parameter's value
    # (REQUEST_VARIABLE_INVALID, var_name), the other values checked so once the parameters are read
    # (check_settings_values: a plain BAD_REQUEST).
    check: Callable[[Any], str | None] | None
    legacy: str | None  # DISPLAY, NOTIFICATION or None
    for_others: bool  # may administrators change it for others (PATCH /settings with target_users)
    org_default: bool  # may administrators set the organization's default for new users
    profile: bool  # a profile field beside the settings: users have it, the organization's defaults not

    def validate(self, value: Any) -> Any:
        """The value, or Zulip's refusal of it (validate_parameter's, then check_later's)."""
        self.validate_parameter(value)
        self.check_later(value)
        return value

    def validate_parameter(self, value: Any) -> None:
        """Refuses a value as Zulip refuses a parameter's (InvalidArgumentError, with its name)."""
        kind_name = {bool: "a boolean", int: "an integer", str: "a string"}[self.kind]
        if type(value) is not self.kind:
            raise InvalidArgumentError(self.name, f"{self.name} is not {kind_name}")
        if self.choices is not None and value not in self.choices:
            raise InvalidArgumentError(self.name, f"Invalid {self.name}")
        if self.minimum is not None and value < self.minimum:
            raise InvalidArgumentError(self.name, f"{self.name} is too small")
        if self.maximum is not None and value > self.maximum:
            raise InvalidArgumentError(self.name, f"{self.name} is too large")
        problem = self.check(value) if self.check is not None and self.name == "timezone" else None
        if problem is not None:
            raise InvalidArgumentError(self.name, problem)

    def check_later(self, value: Any) -> None:
        """Refuses a value Zulip checks once every parameter is read (check_settings_values: a plain
        BAD_REQUEST)."""
        problem = self.check(value) if self.check is not None and self.name != "timezone" else None
        if problem is not None:
            raise JsonableError(problem)


def user_setting(
    field: models.Field,
    *,
    legacy: str | None = None,
    sensitive: bool = False,
    for_others: bool = True,
    org_default: bool = True,
    profile: bool = False,
    minimum: int | None = None,
    maximum: int | None = None,
    check: Callable[[Any], str | None] | None = None,
) -> models.Field:
    """Declare a model field a user setting. `sensitive`: a privacy or security choice that
    administrators may not make for others (Zulip's SECURITY_SENSITIVE_USER_SETTINGS). `profile`:
    sent and changed as a setting, but a field of the user's profile in Zulip (UserProfile's, not
    UserBaseSettings'): organizations have no default for it."""
    field.user_setting = {
        "legacy": legacy,
        "for_others": for_others and not sensitive,
        "org_default": org_default and not profile,
        "profile": profile,
        "minimum": minimum,
        "maximum": maximum,
        "check": check,
    }
    return field


def _bool(default: bool) -> models.BooleanField:
    return models.BooleanField(default=default)


def _small(choices: type[models.IntegerChoices] | None, default: int) -> models.PositiveSmallIntegerField:
    return models.PositiveSmallIntegerField(choices=choices.choices if choices else None, default=int(default))


def _text(choices: type[models.TextChoices] | None, default: str, max_length: int = 20) -> models.CharField:
    return models.CharField(max_length=max_length, choices=choices.choices if choices else None, default=str(default))


class UserBaseSettings(models.Model):
    """The settings themselves, in Zulip's order and with Zulip's defaults."""

    # --- display ---
    enter_sends = user_setting(_bool(False), legacy=DISPLAY)
    left_side_userlist = user_setting(_bool(False), legacy=DISPLAY)
    default_language = user_setting(_text(None, "en", max_length=50), legacy=DISPLAY, check=check_language)
    web_home_view = user_setting(_text(HomeView, HomeView.INBOX), legacy=DISPLAY)
    web_escape_navigates_to_home_view = user_setting(_bool(True))
    fluid_layout_width = user_setting(_bool(False), legacy=DISPLAY)
    high_contrast_mode = user_setting(_bool(False), legacy=DISPLAY)
    translate_emoticons = user_setting(_bool(False), legacy=DISPLAY)
    display_emoji_reaction_users = user_setting(_bool(True))
    twenty_four_hour_time = user_setting(_bool(False), legacy=DISPLAY)
    starred_message_counts = user_setting(_bool(True), legacy=DISPLAY)
    web_suggest_update_timezone = user_setting(_bool(True))
    color_scheme = user_setting(_small(ColorScheme, ColorScheme.AUTOMATIC), legacy=DISPLAY)
    # The range of font sizes Zulip's web app offers; line heights around its 122-140 percent.
    web_font_size_px = user_setting(_small(None, 16), minimum=12, maximum=20)
    web_line_height_percent = user_setting(_small(None, 140), minimum=100, maximum=200)
    web_animate_image_previews = user_setting(_text(AnimateImagePreviews, AnimateImagePreviews.ON_HOVER))
    demote_inactive_streams = user_setting(_small(AutomaticAlwaysNever, AutomaticAlwaysNever.AUTOMATIC), legacy=DISPLAY)
    web_mark_read_on_scroll_policy = user_setting(_small(MarkReadOnScroll, MarkReadOnScroll.ALWAYS))
    web_channel_default_view = user_setting(_small(ChannelDefaultView, ChannelDefaultView.FIRST_TOPIC))
    emojiset = user_setting(_text(Emojiset, Emojiset.GOOGLE), legacy=DISPLAY)
    user_list_style = user_setting(_small(UserListStyle, UserListStyle.WITH_AVATAR))
    web_stream_unreads_count_display_policy = user_setting(
        _small(UnreadsCountDisplay, UnreadsCountDisplay.UNMUTED_STREAMS)
    )
    web_left_sidebar_unreads_count_summary = user_setting(_bool(True))
    web_left_sidebar_show_channel_folders = user_setting(_bool(True))
    web_inbox_show_channel_folders = user_setting(_bool(True))
    web_navigate_to_sent_message = user_setting(_bool(True))
    hide_ai_features = user_setting(_bool(False))
    # The profile time zone (IANA name, "" for none); others see it (realm_user events).
    timezone = user_setting(
        models.CharField(max_length=40, blank=True, default=""),
        legacy=DISPLAY,
        for_others=False,
        profile=True,
        check=check_timezone,
    )

    # --- notifications ---
    email_notifications_batching_period_seconds = user_setting(
        models.IntegerField(default=120), legacy=NOTIFICATION, check=check_email_batching_period
    )
    enable_stream_desktop_notifications = user_setting(_bool(False), legacy=NOTIFICATION)
    enable_stream_email_notifications = user_setting(_bool(False), legacy=NOTIFICATION)
    enable_stream_push_notifications = user_setting(_bool(False), legacy=NOTIFICATION)
    enable_stream_audible_notifications = user_setting(_bool(False), legacy=NOTIFICATION)
    notification_sound = user_setting(_text(None, "zulip"), legacy=NOTIFICATION, check=check_notification_sound)
    wildcard_mentions_notify = user_setting(_bool(True), legacy=NOTIFICATION)
    enable_followed_topic_desktop_notifications = user_setting(_bool(True))
    enable_followed_topic_email_notifications = user_setting(_bool(True))
    enable_followed_topic_push_notifications = user_setting(_bool(True))
    enable_followed_topic_audible_notifications = user_setting(_bool(True))
    enable_followed_topic_wildcard_mentions_notify = user_setting(_bool(True))
    enable_desktop_notifications = user_setting(_bool(True), legacy=NOTIFICATION)
    pm_content_in_desktop_notifications = user_setting(_bool(True), legacy=NOTIFICATION)
    enable_sounds = user_setting(_bool(True), legacy=NOTIFICATION)
    enable_offline_email_notifications = user_setting(_bool(True), legacy=NOTIFICATION)
    message_content_in_email_notifications = user_setting(_bool(True), legacy=NOTIFICATION)
    enable_offline_push_notifications = user_setting(_bool(True), legacy=NOTIFICATION)
    enable_online_push_notifications = user_setting(_bool(True), legacy=NOTIFICATION)
    desktop_icon_count_display = user_setting(
        _small(DesktopIconCount, DesktopIconCount.ALL_UNREAD), legacy=NOTIFICATION
    )
    enable_digest_emails = user_setting(_bool(True), legacy=NOTIFICATION, sensitive=True)
    # Each person's own choice: not organization defaults (as in Zulip).
    enable_login_emails = user_setting(_bool(True), legacy=NOTIFICATION, sensitive=True, org_default=False)
    enable_marketing_emails = user_setting(_bool(True), legacy=NOTIFICATION, sensitive=True, org_default=False)
    presence_enabled = user_setting(_bool(True), legacy=NOTIFICATION, sensitive=True)
    realm_name_in_email_notifications_policy = user_setting(
        _small(AutomaticAlwaysNever, AutomaticAlwaysNever.AUTOMATIC), legacy=NOTIFICATION
    )
    automatically_follow_topics_policy = user_setting(_small(AutomaticTopicPolicy, AutomaticTopicPolicy.INITIATION))
    automatically_unmute_topics_in_muted_streams_policy = user_setting(
        _small(AutomaticTopicPolicy, AutomaticTopicPolicy.SEND)
    )
    automatically_follow_topics_where_mentioned = user_setting(_bool(True))
    resolved_topic_notice_auto_read_policy = user_setting(
        _text(ResolvedTopicNoticeAutoRead, ResolvedTopicNoticeAutoRead.EXCEPT_FOLLOWED)
    )
    # Whether the user's drafts are kept on the server (apps.drafts); turning it off deletes them.
    enable_drafts_synchronization = user_setting(_bool(True), legacy=DISPLAY)

    # --- privacy ---
    send_stream_typing_notifications = user_setting(_bool(True), sensitive=True)
    send_private_typing_notifications = user_setting(_bool(True), sensitive=True)
    send_read_receipts = user_setting(_bool(True), sensitive=True)
    allow_private_data_export = user_setting(_bool(False), sensitive=True)
    receives_typing_notifications = user_setting(_bool(True))
    # Who may see the user's real address (see apps.users.selectors.api_email).
    email_address_visibility = user_setting(
        models.PositiveSmallIntegerField(choices=EmailVisibility.choices, default=EmailVisibility.EVERYONE),
        sensitive=True,
    )

    class Meta:
        abstract = True


class RealmUserDefault(UserBaseSettings):
    """An organization's settings for new users (Zulip's RealmUserDefault), edited by its
    administrators. Created with the organization; an organization created otherwise (tests) reads
    as NEW_ORGANIZATION_DEFAULTS until it is first edited."""

    realm = models.OneToOneField(Realm, on_delete=models.CASCADE, related_name="user_defaults")

    class Meta:
        verbose_name = "organization default for new users"
        verbose_name_plural = "organization defaults for new users"

    def __str__(self) -> str:
        return f"Defaults for new users of {self.realm}"


# What a new organization's defaults start from, where they differ from a user's: real addresses
# are seen by administrators only (Zulip's default for new organizations).
NEW_ORGANIZATION_DEFAULTS = {"email_address_visibility": EmailVisibility.ADMINS}


def _kind(field: models.Field) -> type:
    if isinstance(field, models.BooleanField):
        return bool
    if isinstance(field, models.IntegerField):
        return int
    return str


def _settings_of(model: type[models.Model]) -> dict[str, Setting]:
    found = {}
    for field in model._meta.local_fields:
        spec = getattr(field, "user_setting", None)
        if spec is None:
            continue
        found[field.name] = Setting(
            name=field.name,
            kind=_kind(field),
            default=field.default,
            choices=frozenset(value for value, _ in field.choices) if field.choices else None,
            **spec,
        )
    return found


USER_SETTINGS: dict[str, Setting] = _settings_of(RealmUserDefault)


def validate_settings(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The changes (names of USER_SETTINGS), refused in Zulip's order: every value as a parameter,
    then those checked once every parameter is read (Setting.check_later)."""
    for name, value in changes.items():
        USER_SETTINGS[name].validate_parameter(value)
    for name, value in changes.items():
        USER_SETTINGS[name].check_later(value)
    return dict(changes)
