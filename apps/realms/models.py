from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models
from django.utils import timezone

from apps.realms.limits import MAX_WAITING_PERIOD_DAYS


class EmailVisibility(models.IntegerChoices):
    """Who may see a user's real (delivery) email address; Zulip's `email_address_visibility`."""

    EVERYONE = 1, "Everyone"
    MEMBERS = 2, "Members only"
    ADMINS = 3, "Administrators only"
    NOBODY = 4, "Nobody"
    MODERATORS = 5, "Moderators and administrators"


def group_setting(help_text: str) -> models.ForeignKey:
    """A group-valued setting of the organization (apps.groups.models.REALM_SETTINGS says how each
    may be set). NULL only while the organization is being created, before its system groups exist."""
    return models.ForeignKey(
        "groups.UserGroup", on_delete=models.PROTECT, null=True, related_name="+", help_text=help_text
    )


def channel_setting(help_text: str) -> models.ForeignKey:
    """A channel-valued setting of the organization (apps.realms.serializers.CHANNEL_SETTINGS); NULL:
    none, as when the channel is deleted."""
    return models.ForeignKey(
        "subscriptions.Stream", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text=help_text
    )


def seconds_limit(default: int, help_text: str) -> models.PositiveIntegerField:
    """A time limit of the organization's, in seconds; NULL: none."""
    return models.PositiveIntegerField(null=True, blank=True, default=default, db_default=default, help_text=help_text)


class Realm(models.Model):
    """An organization. Everything else belongs to exactly one; none sees another's objects."""

    MAX_NAME_LENGTH = 40
    MAX_STRING_ID_LENGTH = 40
    MAX_DESCRIPTION_LENGTH = 1000
    MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH = 8000
    # The organization reached on the bare EXTERNAL_HOST, localhost and IP addresses.
    DEFAULT_STRING_ID = ""

    string_id = models.CharField(
        max_length=MAX_STRING_ID_LENGTH,
        unique=True,
        blank=True,
        help_text="Subdomain under EXTERNAL_HOST; empty for the default organization.",
    )
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    description = models.TextField(blank=True, default="")
    date_created = models.DateTimeField(default=timezone.now)
    deactivated = models.BooleanField(default=False)
    password_auth_enabled = models.BooleanField(
        default=True, help_text="Whether users may trade email and password for an API key."
    )
    # A default in the database too: rows written by code that does not know the column (migrations
    # of other apps, run against an older state of this model) get it.
    welcome_message_custom_text = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text="Markdown the Welcome Bot adds to its message to each new member (an invitation may replace it).",
    )
    # Group-valued settings (see group_setting).
    can_create_private_channel_group = group_setting("Who may create private channels.")
    can_create_public_channel_group = group_setting("Who may create public channels.")
    create_multiuse_invite_group = group_setting("Who may create reusable invitation links.")
    can_invite_users_group = group_setting("Who may invite people by email.")
    can_add_subscribers_group = group_setting(
        "Who may subscribe others to any channel they may see (each channel's own setting adds others)."
    )
    can_delete_any_message_group = group_setting("Who may delete any message, at any time.")
    can_delete_own_message_group = group_setting(
        "Who may delete their own messages (and their bots'), within the time limit below."
    )
    can_move_messages_between_topics_group = group_setting("Who may move messages to another topic.")
    can_move_messages_between_channels_group = group_setting("Who may move messages to another channel.")
    can_resolve_topics_group = group_setting("Who may mark topics resolved (and unresolved).")
    can_set_delete_message_policy_group = group_setting(
        "Who may change who may delete messages in a channel they administer."
    )
    can_set_topics_policy_group = group_setting(
        "Who may change whether a channel they administer takes messages without a topic."
    )
    can_add_custom_emoji_group = group_setting("Who may add custom emoji.")
    can_create_bots_group = group_setting("Who may create bots of every kind.")
    can_create_write_only_bots_group = group_setting("Who may create incoming webhook bots (bots that only post).")
    can_create_groups = group_setting("Who may create user groups.")
    can_manage_all_groups = group_setting(
        "Who may manage every user group (its name, members and settings), besides those each group names."
    )
    can_mention_many_users_group = group_setting(
        "Who may use wildcard mentions (@all, @topic) in channels and topics with more than 15 people."
    )
    direct_message_permission_group = group_setting(
        "Who may authorize a direct message: each one must include one of them (as sender or recipient)."
    )
    direct_message_initiator_group = group_setting(
        "Who may start direct message conversations (anyone may answer one that exists)."
    )
    can_access_all_users_group = group_setting(
        "Whether guests see everyone (role:everyone) or only the people they share a channel or a direct "
        "message conversation with (role:members); the others appear to them as an unknown user."
    )
    # Zulip's *_limit_seconds: None is no limit.
    message_content_delete_limit_seconds = seconds_limit(
        600, "How long after sending people may delete their own messages, in seconds; empty: any time."
    )
    allow_message_editing = models.BooleanField(
        default=True, db_default=True, help_text="Whether people may edit the content of their messages."
    )
    message_content_edit_limit_seconds = seconds_limit(
        600, "How long after sending people may edit their messages' content, in seconds; empty: any time."
    )
    move_messages_within_stream_limit_seconds = seconds_limit(
        604800, "How long after sending messages may be moved to another topic (moderators: any time); empty: any time."
    )
    move_messages_between_streams_limit_seconds = seconds_limit(
        604800,
        "How long after sending messages may be moved to another channel (moderators: any time); empty: any time.",
    )

    enable_read_receipts = models.BooleanField(
        default=True,
        help_text="Whether people may see who read a message (each may still keep their own reads to themselves).",
    )

    waiting_period_threshold = models.PositiveIntegerField(
        default=0,
        db_default=0,
        validators=[MaxValueValidator(MAX_WAITING_PERIOD_DAYS)],
        help_text="How many days after joining a member becomes a full member (role:fullmembers); 0: at once.",
    )

    class TopicsPolicy(models.TextChoices):
        """Zulip's realm topics_policy: what channels that do not set their own allow."""

        ALLOW_EMPTY_TOPIC = "allow_empty_topic", 'Messages may go to the "general chat" topic'
        DISABLE_EMPTY_TOPIC = "disable_empty_topic", "Messages must have a topic"

    topics_policy = models.CharField(
        max_length=32,
        choices=TopicsPolicy.choices,
        default=TopicsPolicy.ALLOW_EMPTY_TOPIC,
        db_default=TopicsPolicy.ALLOW_EMPTY_TOPIC,
        help_text="Whether messages to channels that do not decide it themselves may go without a topic.",
    )
    moderation_request_channel = channel_setting(
        "The private channel where reports of messages arrive; empty: reporting is off."
    )
    # Where the Notification Bot announces things (Zulip's): none by default.
    new_stream_announcements_stream = channel_setting(
        "Where new channels are announced, when their creator asks; empty: nowhere."
    )
    signup_announcements_stream = channel_setting("Where the arrival of each new person is announced; empty: nowhere.")
    zulip_update_announcements_stream = channel_setting(
        "Zulip's channel for news of the server's new features (kept for clients; Parley posts none)."
    )

    class EditHistoryVisibility(models.TextChoices):
        ALL = "all", "Show edits and moves"
        MOVES = "moves", "Show moves only"
        NONE = "none", "Show neither"

    message_edit_history_visibility_policy = models.CharField(
        max_length=10,
        choices=EditHistoryVisibility.choices,
        default=EditHistoryVisibility.ALL,
        db_default=EditHistoryVisibility.ALL,
        help_text="What of a message's edit history people are shown.",
    )

    emails_restricted_to_domains = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Whether only addresses of the organization's allowed domains (below) may join.",
    )
    disallow_disposable_email_addresses = models.BooleanField(
        default=True,
        db_default=True,
        help_text="Whether disposable addresses are refused (when addresses are not restricted to domains).",
    )
    avatar_changes_disabled = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Whether only administrators may change avatars (people keep their Gravatar or picture).",
    )
    presence_disabled = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Whether nobody is shown online: presence is neither shown nor sent (Zulip's presence_disabled).",
    )

    class Meta:
        verbose_name = "organization"

    def __str__(self) -> str:
        return f"{self.name} ({self.string_id or 'default'})"

    @property
    def host(self) -> str:
        if self.string_id == self.DEFAULT_STRING_ID:
            return settings.EXTERNAL_HOST
        return f"{self.string_id}.{settings.EXTERNAL_HOST}"

    @property
    def url(self) -> str:
        return f"{settings.EXTERNAL_URI_SCHEME}{self.host}"


class AuditLogEventType(models.IntegerChoices):
    """What an audit log entry records. Zulip's numbers (RealmAuditLog) where Zulip has the event;
    Parley's own in free places of the same ranges otherwise."""

    USER_CREATED = 101, "user created"
    USER_DEACTIVATED = 103, "user deactivated"
    USER_REACTIVATED = 104, "user reactivated"
    USER_ROLE_CHANGED = 105, "role changed"
    USER_AVATAR_SOURCE_CHANGED = 121, "avatar changed"
    USER_PASSWORD_CHANGED = 122, "password changed"
    USER_FULL_NAME_CHANGED = 124, "name changed"
    USER_EMAIL_CHANGED = 125, "email changed"
    USER_API_KEY_CHANGED = 127, "API key rotated"
    USER_BOT_OWNER_CHANGED = 128, "bot owner changed"
    USER_SETTING_CHANGED = 132, "setting changed"
    USER_SPECIAL_PERMISSION_CHANGED = 134, "special permission changed"  # Parley: staff, email changes

    REALM_DEACTIVATED = 201, "organization deactivated"
    REALM_REACTIVATED = 202, "organization reactivated"
    REALM_PROPERTY_CHANGED = 207, "organization setting changed"
    REALM_CREATED = 215, "organization created"
    REALM_DEFAULT_USER_SETTINGS_CHANGED = 216, "default for new users changed"
    REALM_DOMAIN_ADDED = 218, "allowed domain added"
    REALM_DOMAIN_CHANGED = 219, "allowed domain changed"
    REALM_DOMAIN_REMOVED = 220, "allowed domain removed"
    REALM_LINKIFIER_ADDED = 223, "linkifier added"
    REALM_LINKIFIER_CHANGED = 224, "linkifier changed"
    REALM_LINKIFIER_REMOVED = 225, "linkifier removed"
    REALM_LINKIFIERS_REORDERED = 228, "linkifiers reordered"
    REALM_PLAYGROUND_ADDED = 229, "code playground added"
    REALM_PLAYGROUND_REMOVED = 230, "code playground removed"
    CUSTOM_PROFILE_FIELD_CREATED = 240, "profile field created"  # Parley's
    CUSTOM_PROFILE_FIELD_CHANGED = 241, "profile field changed"
    CUSTOM_PROFILE_FIELD_REMOVED = 242, "profile field removed"
    CUSTOM_PROFILE_FIELDS_REORDERED = 243, "profile fields reordered"
    INVITATION_CREATED = 250, "invitation created"  # Parley's
    INVITATION_REVOKED = 251, "invitation revoked"
    INVITATION_EMAIL_SENT = 252, "invitation email sent"

    STREAM_CREATED = 601, "channel created"
    STREAM_DEACTIVATED = 602, "channel archived"
    STREAM_REACTIVATED = 604, "channel unarchived"
    STREAM_NAME_CHANGED = 603, "channel renamed"
    STREAM_PROPERTY_CHANGED = 607, "channel setting changed"
    STREAM_GROUP_BASED_SETTING_CHANGED = 608, "channel permission changed"
    STREAM_TOPIC_DELETED = 620, "topic deleted"  # Parley's

    USER_GROUP_CREATED = 701, "group created"
    USER_GROUP_DIRECT_USER_MEMBERSHIP_ADDED = 703, "group member added"
    USER_GROUP_DIRECT_USER_MEMBERSHIP_REMOVED = 704, "group member removed"
    USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_ADDED = 705, "subgroup added"
    USER_GROUP_DIRECT_SUBGROUP_MEMBERSHIP_REMOVED = 706, "subgroup removed"
    USER_GROUP_NAME_CHANGED = 720, "group renamed"
    USER_GROUP_DESCRIPTION_CHANGED = 721, "group description changed"
    USER_GROUP_GROUP_BASED_SETTING_CHANGED = 722, "group permission changed"
    USER_GROUP_DEACTIVATED = 730, "group deactivated"  # Parley's
    USER_GROUP_REACTIVATED = 731, "group reactivated"

    CHANNEL_FOLDER_CREATED = 901, "channel folder created"
    CHANNEL_FOLDER_NAME_CHANGED = 902, "channel folder renamed"
    CHANNEL_FOLDER_DESCRIPTION_CHANGED = 903, "channel folder description changed"
    CHANNEL_FOLDER_ARCHIVED = 904, "channel folder archived"
    CHANNEL_FOLDER_UNARCHIVED = 905, "channel folder unarchived"
    CHANNEL_FOLDERS_REORDERED = 920, "channel folders reordered"  # Parley's


class RealmAuditLog(models.Model):
    """An append-only record of a change to an organization: who did what to whom, when, and the
    old and new value (`extra_data`). Written by the actions, in the transaction of the change;
    never edited (the Django admin shows it read-only; `manage.py export_audit_log` exports it).

    `acting_user` is who made the change (None: an operator's command or the server itself);
    `modified_*` is what it changed. Rows are kept as long as the organization: users, channels
    and groups are deactivated, never deleted.
    """

    realm = models.ForeignKey(Realm, on_delete=models.PROTECT, related_name="+")
    event_type = models.PositiveSmallIntegerField(choices=AuditLogEventType.choices)
    event_time = models.DateTimeField(default=timezone.now)
    acting_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    modified_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # The models of higher apps, named (apps.subscriptions, apps.groups): the log records changes
    # to every kind of thing an organization holds.
    modified_stream = models.ForeignKey(
        "subscriptions.Stream", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    modified_user_group = models.ForeignKey(
        "groups.UserGroup", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # {"property": ..., "old_value": ..., "new_value": ...} and whatever else says what changed.
    extra_data = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "audit log entry"
        verbose_name_plural = "audit log"
        indexes = [models.Index(fields=["realm", "event_time"], name="realms_auditlog_realm_time")]

    def __str__(self) -> str:
        return f"{self.get_event_type_display()} at {self.event_time:%Y-%m-%d %H:%M:%S}"


class RealmDomain(models.Model):
    """A domain whose addresses may join an organization that restricts addresses to its domains
    (emails_restricted_to_domains); with `allow_subdomains`, its subdomains' too. Stored lower-case."""

    MAX_DOMAIN_LENGTH = 80

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="domains")
    domain = models.CharField(max_length=MAX_DOMAIN_LENGTH)
    allow_subdomains = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["realm", "domain"], name="realms_one_domain_per_realm")]

    def __str__(self) -> str:
        return f"{self.domain}{' (and subdomains)' if self.allow_subdomains else ''}"
