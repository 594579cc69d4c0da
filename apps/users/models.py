from uuid import uuid4

from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import models
from django.db.models.functions import Upper
from django.utils import timezone

from apps.realms.models import Realm
from apps.users.settings_models import RealmUserDefault, UserBaseSettings

__all__ = ["RealmUserDefault"]  # declared with the settings (apps/users/settings_models.py)


class Role(models.IntegerChoices):
    OWNER = 100, "Organization owner"
    ADMINISTRATOR = 200, "Organization administrator"
    MODERATOR = 300, "Moderator"
    MEMBER = 400, "Member"
    GUEST = 600, "Guest"


class BotType(models.IntegerChoices):
    GENERIC = 1, "Generic"
    INCOMING_WEBHOOK = 2, "Incoming webhook"
    OUTGOING_WEBHOOK = 3, "Outgoing webhook"
    EMBEDDED = 4, "Embedded"


class AvatarSource(models.TextChoices):
    GRAVATAR = "G", "Gravatar"
    UPLOADED = "U", "Uploaded"


class UserManager(BaseUserManager):
    """Django's manager for the user model. Users are created by apps.users.actions (the
    `createsuperuser` command included: apps/users/management/commands/createsuperuser.py)."""


_SYSTEM_BOTS = models.Q(bot_type__isnull=False, bot_owner=None)  # User.SYSTEM_BOTS


class User(AbstractBaseUser, PermissionsMixin, UserBaseSettings):
    """A person or bot in one organization, with the fields of Zulip's User object and every user
    setting (UserBaseSettings: timezone, email_address_visibility, ... are among them).

    `delivery_email` is the real address; the API `email` is derived from it and the user's
    `email_address_visibility` (see apps.users.selectors.api_email).
    """

    MAX_NAME_LENGTH = 100
    # Longer passwords are refused wherever one is set, so that every one set can also log in.
    MAX_PASSWORD_LENGTH = 1024
    MIN_NAME_LENGTH = 2
    API_KEY_LENGTH = 32

    realm = models.ForeignKey(Realm, on_delete=models.PROTECT, related_name="users")
    # The directory API's `id` (apps/directory): public, generated once, never reused.
    uuid = models.UUIDField("UUID", default=uuid4, unique=True, editable=False)
    delivery_email = models.EmailField("email address", max_length=254)
    full_name = models.CharField(max_length=MAX_NAME_LENGTH)
    role = models.PositiveSmallIntegerField(choices=Role.choices, default=Role.MEMBER)
    is_active = models.BooleanField(default=True)
    date_joined = models.DateTimeField(default=timezone.now)
    api_key = models.CharField(max_length=API_KEY_LENGTH)

    bot_type = models.PositiveSmallIntegerField(choices=BotType.choices, null=True, blank=True)
    bot_owner = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="owned_bots")
    # Bots' defaults (Zulip's): the channel a bot posts to when it names none, the channel whose
    # events it registers for, and whether it registers for every public channel's.
    default_sending_stream = models.ForeignKey(
        "subscriptions.Stream", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    default_events_register_stream = models.ForeignKey(
        "subscriptions.Stream", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Bots: when their owner was last told that they sent nowhere (apps.messages.actions.send).
    last_reminder = models.DateTimeField(null=True, blank=True)
    default_all_public_streams = models.BooleanField(default=False, db_default=False)

    avatar_source = models.CharField(max_length=1, choices=AvatarSource.choices, default=AvatarSource.GRAVATAR)
    avatar_version = models.PositiveIntegerField(default=1)
    # An uploaded avatar's name (random, new with each upload): served as
    # /user_avatars/{realm_id}/{avatar_hash}.png (apps.users.avatars).
    avatar_hash = models.CharField(max_length=32, blank=True, default="", db_default="")
    is_imported_stub = models.BooleanField(default=False)
    # Made for someone without them (POST /users): `date_joined` is the account's creation until
    # its first sign-in, then that sign-in's time (Zulip's TOS_VERSION_BEFORE_FIRST_LOGIN).
    joins_at_first_login = models.BooleanField(default=False, db_default=False)
    # Special permission, granted by an operator (change_user_role), to change others' emails.
    can_change_user_emails = models.BooleanField(default=False)
    # Special permission, granted by an operator (change_user_role), to create accounts with
    # POST /users (administrators only, as in Zulip).
    can_create_users = models.BooleanField(default=False)
    # May sign in to the Django admin (server operators).
    is_staff = models.BooleanField(default=False)

    objects = UserManager()

    USERNAME_FIELD = "delivery_email"
    EMAIL_FIELD = "delivery_email"
    REQUIRED_FIELDS = ["full_name"]

    class Meta:
        constraints = [
            models.UniqueConstraint(Upper("delivery_email"), "realm", name="users_user_unique_email_per_realm"),
        ]
        indexes = [
            # GET /users of the directory API: an organization's active users in `uuid` order, read
            # page by page from a position (keyset), one index range per page; with the name in the
            # index, PostgreSQL reads a page from the index alone (benchmarks/directory).
            models.Index(
                fields=["realm", "uuid"],
                include=["full_name"],
                condition=models.Q(is_active=True) & ~_SYSTEM_BOTS,
                name="users_user_directory",
            ),
            # The bots someone administers (realm_bots of POST /register): an organization's bots,
            # or one owner's, without reading its people.
            models.Index(
                fields=["realm", "bot_owner"], condition=models.Q(bot_type__isnull=False), name="users_user_bots"
            ),
            # Who wants an email about every message of their channels (apps.email_notifications):
            # few people, found without reading an organization's users on every channel message.
            models.Index(
                fields=["realm"], condition=models.Q(enable_stream_email_notifications=True), name="users_channel_email"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.full_name} <{self.delivery_email}>"

    @property
    def is_bot(self) -> bool:
        return self.bot_type is not None

    @property
    def is_incoming_webhook(self) -> bool:
        """A bot whose key only sends messages (apps.core.auth refuses it everywhere else)."""
        return self.bot_type == BotType.INCOMING_WEBHOOK

    # The server's own bots (the Welcome Bot, the Notification Bot): owned by nobody. As a query
    # condition, and as a property of a user.
    SYSTEM_BOTS = _SYSTEM_BOTS

    @property
    def is_system_bot(self) -> bool:
        return self.bot_type is not None and self.bot_owner_id is None

    @property
    def is_owner(self) -> bool:
        return self.role == Role.OWNER

    @property
    def is_admin(self) -> bool:
        return self.role in (Role.OWNER, Role.ADMINISTRATOR)

    @property
    def is_moderator(self) -> bool:
        return self.role == Role.MODERATOR

    @property
    def is_guest(self) -> bool:
        return self.role == Role.GUEST

    def get_full_name(self) -> str:
        return self.full_name

    def get_short_name(self) -> str:
        return self.full_name


class Bot(User):
    """The bots of all organizations, for the admin's own Bots page."""

    class Meta:
        proxy = True


class BotService(models.Model):
    """Where an outgoing-webhook or embedded bot is reached, and the token it is sent."""

    class Interface(models.IntegerChoices):
        GENERIC = 1, "Generic"
        SLACK = 2, "Slack compatible"

    bot = models.ForeignKey(User, on_delete=models.CASCADE, related_name="services")
    name = models.CharField(max_length=100)
    base_url = models.URLField(max_length=2000)
    token = models.CharField(max_length=32)
    interface = models.PositiveSmallIntegerField(choices=Interface.choices, default=Interface.GENERIC)

    def __str__(self) -> str:
        return f"{self.name} → {self.base_url}"


# The external accounts Zulip predefines (an EXTERNAL_ACCOUNT field's `subtype`): such a field takes
# its name from here and has no hint; other subtypes are "custom", with their own URL pattern.
DEFAULT_EXTERNAL_ACCOUNTS = {
    "github": {"name": "GitHub username", "url_pattern": "https://github.com/%(username)s"},
    "twitter": {"name": "Twitter username", "url_pattern": "https://twitter.com/%(username)s"},
}


class CustomProfileField(models.Model):
    """An organization-defined profile field (Zulip's custom profile fields)."""

    class FieldType(models.IntegerChoices):
        SHORT_TEXT = 1, "Text (short)"
        LONG_TEXT = 2, "Text (long)"
        SELECT = 3, "List of options"
        DATE = 4, "Date"
        URL = 5, "Link"
        USER = 6, "Users"
        EXTERNAL_ACCOUNT = 7, "External account"
        PRONOUNS = 8, "Pronouns"

    NAME_MAX_LENGTH = 40
    HINT_MAX_LENGTH = 80
    MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2
    # Types whose values are Markdown and get a `rendered_value`.
    RENDERED_TYPES = frozenset({FieldType.SHORT_TEXT, FieldType.LONG_TEXT})

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="custom_profile_fields")
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    hint = models.CharField(max_length=HINT_MAX_LENGTH, blank=True, default="")
    field_type = models.PositiveSmallIntegerField(choices=FieldType.choices)
    # JSON text: the options of a SELECT field, the subtype of an EXTERNAL_ACCOUNT field.
    field_data = models.TextField(blank=True, default="")
    order = models.IntegerField(default=0)
    display_in_profile_summary = models.BooleanField(default=False)
    required = models.BooleanField(default=False)
    editable_by_user = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["realm", "name"], name="users_profile_field_unique_name")]
        ordering = ["order", "id"]

    def __str__(self) -> str:
        return self.name


class CustomProfileFieldValue(models.Model):
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="profile_values")
    field = models.ForeignKey(CustomProfileField, on_delete=models.CASCADE, related_name="values")
    value = models.TextField()
    # HTML of Markdown-capable types; empty for the others.
    rendered_value = models.TextField(blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "field"], name="users_profile_value_unique")]

    def __str__(self) -> str:
        return f"{self.field.name}: {self.value}"


class EmailChangeRequest(models.Model):
    """A change of a user's own address (PATCH /settings `email`), waiting for the link sent to the
    new address to be opened (apps/users/pages.py). A newer request revokes the user's older ones;
    a request is used once, and expires (settings.EMAIL_CHANGE_LINK_VALIDITY_SECONDS)."""

    class Status(models.IntegerChoices):
        PENDING = 0, "Pending"
        USED = 1, "Confirmed"
        REVOKED = 2, "Replaced by a newer request"

    KEY_LENGTH = 40

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="email_change_requests")
    old_email = models.EmailField(max_length=254)
    new_email = models.EmailField(max_length=254)
    # The secret of the confirmation link (random, unique).
    key = models.CharField(max_length=KEY_LENGTH, unique=True)
    created = models.DateTimeField(default=timezone.now)
    status = models.PositiveSmallIntegerField(choices=Status.choices, default=Status.PENDING)

    class Meta:
        indexes = [
            # Revoking a user's pending requests when they ask again.
            models.Index(fields=["user", "status"], name="users_emailchange_user_status"),
        ]

    def __str__(self) -> str:
        return f"{self.old_email} → {self.new_email} ({self.get_status_display()})"
