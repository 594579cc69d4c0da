from django.conf import settings
from django.db import models
from django.utils import timezone


class EmailVisibility(models.IntegerChoices):
    """Who may see a user's real (delivery) email address; Zulip's `email_address_visibility`."""

    EVERYONE = 1, "Everyone"
    MEMBERS = 2, "Members only"
    ADMINS = 3, "Administrators only"
    NOBODY = 4, "Nobody"
    MODERATORS = 5, "Moderators and administrators"


class Realm(models.Model):
    """An organization. Everything else belongs to exactly one; none sees another's objects."""

    MAX_NAME_LENGTH = 40
    MAX_STRING_ID_LENGTH = 40
    MAX_DESCRIPTION_LENGTH = 1000
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
    default_email_address_visibility = models.PositiveSmallIntegerField(
        choices=EmailVisibility.choices,
        default=EmailVisibility.ADMINS,
        help_text="Email visibility given to new users (Zulip's default for new organizations).",
    )
    password_auth_enabled = models.BooleanField(
        default=True, help_text="Whether users may trade email and password for an API key."
    )
    # Group-valued settings (apps.groups.models.REALM_SETTINGS says how each may be set). NULL only
    # while the organization is being created, before its system groups exist.
    can_create_private_channel_group = models.ForeignKey(
        "groups.UserGroup",
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
        help_text="Who may create private channels.",
    )
    can_create_public_channel_group = models.ForeignKey(
        "groups.UserGroup",
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
        help_text="Who may create public channels.",
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
