from django.db import models
from django.utils import timezone

from apps.groups.models import UserGroup
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.users.models import Role, User


class Invitation(models.Model):
    """What both kinds of invitation hold: the organization, who created it, the role, channels and
    groups it gives, and the link's secret.

    The link carries `key`, a secret of KEY_BITS random bits. A link is found by the SHA-256 digest
    of the key it carries (`key_digest`, unique), then the keys are compared in constant time
    (apps.invites.selectors): the database's comparison never sees what the visitor typed.
    """

    KEY_BITS = 160

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    # Who created it; None for an operator's command (or an admin of another organization).
    referred_by = models.ForeignKey(User, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    key = models.CharField(max_length=64)
    key_digest = models.CharField(max_length=64, unique=True)
    invited_as = models.PositiveSmallIntegerField(choices=Role.choices, default=Role.MEMBER)
    streams = models.ManyToManyField(Stream, blank=True, related_name="+")
    groups = models.ManyToManyField(UserGroup, blank=True, related_name="+")
    include_realm_default_subscriptions = models.BooleanField(default=False)
    # None: the organization's default welcome text; "": no custom text.
    welcome_message_custom_text = models.TextField(null=True, blank=True)  # noqa: DJ001
    created = models.DateTimeField(default=timezone.now)
    # None: never expires.
    expiry_date = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def link_url(self) -> str:
        return f"{self.realm.url}/join/{self.key}/"

    def is_expired(self, now=None) -> bool:
        return self.expiry_date is not None and self.expiry_date <= (now or timezone.now())


class MultiuseInvite(Invitation):
    """A reusable invitation link (Zulip's MultiuseInvite): whoever opens it before it expires or is
    revoked may create an account in the organization, with its role, channels and groups."""

    revoked = models.BooleanField(default=False)

    class Meta:
        verbose_name = "invitation link"
        indexes = [
            # GET /invites: an organization's open invitations (its members' own ones by referrer).
            models.Index(fields=["realm", "referred_by"], condition=models.Q(revoked=False), name="invites_open"),
        ]

    def __str__(self) -> str:
        return f"invitation {self.id} to {self.realm} as {self.get_invited_as_display()}"

    @property
    def is_usable(self) -> bool:
        return not self.revoked and not self.is_expired()


class EmailInvitation(Invitation):
    """An invitation sent by email (Zulip's PreregistrationUser of an invitation): its link lets one
    person create one account, with the address it was sent to. Used, it is kept (who joined through
    it); revoked, it is kept too (the audit log names it), and either way its link no longer works.
    Other invitations to the same address close when that address joins (apps.invites.receivers)."""

    class Status(models.IntegerChoices):
        PENDING = 0, "pending"
        USED = 1, "used"
        REVOKED = 2, "revoked"

    email = models.EmailField(max_length=254)
    # Whether the Notification Bot tells its creator when the invitation is accepted.
    notify_referrer_on_join = models.BooleanField(default=True)
    status = models.PositiveSmallIntegerField(choices=Status.choices, default=Status.PENDING)
    # The account made with it, once used.
    created_user = models.ForeignKey(User, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    # When its email was last sent (a resend too): the reminder queued then is the one that counts.
    last_sent = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "email invitation"
        indexes = [
            # GET /invites and the daily count: an organization's pending invitations, by creator.
            models.Index(fields=["realm", "referred_by"], condition=models.Q(status=0), name="invites_email_pending"),
        ]

    def __str__(self) -> str:
        return f"invitation of {self.email} to {self.realm} as {self.get_invited_as_display()}"

    @property
    def is_usable(self) -> bool:
        return self.status == self.Status.PENDING and not self.is_expired()


class WelcomeBot(models.Model):
    """The organization's Welcome Bot (Zulip's welcome-bot, here one per organization): a system
    bot, owned by nobody, that greets each new person with a direct message. Created with the
    organization; for organizations older than it, by the migration invites 0003."""

    FULL_NAME = "Welcome Bot"
    EMAIL_LOCAL_PART = "welcome-bot"

    realm = models.OneToOneField(Realm, on_delete=models.CASCADE, related_name="+")
    bot = models.OneToOneField(User, on_delete=models.PROTECT, related_name="+")

    def __str__(self) -> str:
        return f"{self.FULL_NAME} of {self.realm}"
