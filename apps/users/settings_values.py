"""The values user settings may take beyond their type: the choices of each enumerated setting, the
languages, emoji sets and notification sounds the server offers, and the checks Zulip makes on the
free-form ones (apps.users.settings_models declares which setting takes what)."""

from functools import cache
from zoneinfo import available_timezones

from django.conf import settings
from django.db import models


class ColorScheme(models.IntegerChoices):
    AUTOMATIC = 1, "Automatic"
    DARK = 2, "Dark theme"
    LIGHT = 3, "Light theme"


class AutomaticAlwaysNever(models.IntegerChoices):
    """demote_inactive_streams, realm_name_in_email_notifications_policy."""

    AUTOMATIC = 1, "Automatic"
    ALWAYS = 2, "Always"
    NEVER = 3, "Never"


class MarkReadOnScroll(models.IntegerChoices):
    ALWAYS = 1, "Always"
    CONVERSATION_ONLY = 2, "Only in conversation views"
    NEVER = 3, "Never"


class ChannelDefaultView(models.IntegerChoices):
    FIRST_TOPIC = 1, "Top topic in the channel"
    CHANNEL_FEED = 2, "Channel feed"
    TOPIC_LIST = 3, "List of topics"
    TOP_UNREAD = 4, "Top unread topic in channel"


class UserListStyle(models.IntegerChoices):
    COMPACT = 1, "Compact"
    WITH_STATUS = 2, "With status"
    WITH_AVATAR = 3, "With avatar and status"


class UnreadsCountDisplay(models.IntegerChoices):
    ALL_STREAMS = 1, "All channels"
    UNMUTED_STREAMS = 2, "Unmuted channels and topics"
    NO_STREAMS = 3, "No channels"


class DesktopIconCount(models.IntegerChoices):
    ALL_UNREAD = 1, "All unread messages"
    DM_MENTION_FOLLOWED = 2, "DMs, mentions, and followed topics"
    DM_MENTION = 3, "DMs and mentions"
    NONE = 4, "None"


class AutomaticTopicPolicy(models.IntegerChoices):
    """Which topics to follow (or unmute in muted channels) automatically."""

    PARTICIPATION = 1, "Topics the user participates in"
    SEND = 2, "Topics the user sends a message to"
    INITIATION = 3, "Topics the user starts"
    NEVER = 4, "Never"


class HomeView(models.TextChoices):
    # "recent_topics" before Zulip's feature level 454.
    RECENT = "recent", "Recent conversations"
    INBOX = "inbox", "Inbox"
    ALL_MESSAGES = "all_messages", "Combined feed"


class AnimateImagePreviews(models.TextChoices):
    ALWAYS = "always", "Always"
    ON_HOVER = "on_hover", "On hover"
    NEVER = "never", "Never"


class ResolvedTopicNoticeAutoRead(models.TextChoices):
    """Stored as Zulip sends it (Zulip stores a number and sends this name)."""

    ALWAYS = "always", "Always"
    EXCEPT_FOLLOWED = "except_followed", "Except in followed topics"
    NEVER = "never", "Never"


class Emojiset(models.TextChoices):
    GOOGLE = "google", "Google"
    TWITTER = "twitter", "Twitter"
    TEXT = "text", "Plain text"
    GOOGLE_BLOB = "google-blob", "Google blobs"


def emojiset_choices() -> list[dict[str, str]]:
    """`emojiset_choices` of /register: every emoji set with its name."""
    return [{"key": key, "text": str(label)} for key, label in Emojiset.choices]


# The notification sounds of Zulip's clients (Zulip lists the files it serves; "none" is silence).
NOTIFICATION_SOUNDS = (
    "ascend",
    "beep_boop",
    "bink",
    "bright",
    "brlip",
    "chime",
    "deep tom",
    "ding",
    "double tap",
    "down",
    "dry bongos",
    "dutdut",
    "fast ascend",
    "flute",
    "friendly",
    "kick roll",
    "loud tintong",
    "metallic snare",
    "pan",
    "shaker",
    "simple",
    "stairs",
    "subtle",
    "swish",
    "tintong",
    "up",
    "wood block",
    "zaping",
    "zing",
    "zulip",
)

# Zulip's limit: a week.
MAX_EMAIL_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60


def available_languages() -> dict[str, str]:
    """The languages the server offers, code -> English name: Django's LANGUAGES setting (the same
    codes as Zulip's: "en", "de", "pt-br", "zh-hans", ...)."""
    return {code: str(name) for code, name in settings.LANGUAGES}


def language_name(code: str) -> str:
    return available_languages().get(code, "Unknown")


@cache
def _timezones() -> frozenset[str]:
    return frozenset(available_timezones())


# The checks of free-form settings: the value, or the message Zulip refuses it with.


def check_language(value: str) -> str | None:
    return None if value in available_languages() else "Invalid default_language"


def check_notification_sound(value: str) -> str | None:
    if value == "none" or value in NOTIFICATION_SOUNDS:
        return None
    return f"Invalid notification sound '{value}'"


def check_email_batching_period(value: int) -> str | None:
    if 0 < value <= MAX_EMAIL_BATCHING_PERIOD_SECONDS:
        return None
    return f"Invalid email batching period: {value} seconds"


def check_timezone(value: str) -> str | None:
    """An IANA time zone name (zoneinfo's), or "" for none."""
    return None if value == "" or value in _timezones() else f"Invalid timezone '{value}'"
