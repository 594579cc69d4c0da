from django.db import models

from apps.realms.models import Realm
from apps.users.models import User


class UserPresence(models.Model):
    """When a user was last connected (any ping) and last active (an "active" ping), in the
    embedded mode; with Redis, presence lives there instead (apps/presence/backends.py).

    `last_update_id` numbers the changes within the organization (PresenceSequence), so a client
    asks for what changed since the last number it saw (POST /users/me/presence's last_update_id)."""

    user = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="+")
    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+", db_index=False)
    last_connected_time = models.DateTimeField()
    last_active_time = models.DateTimeField(null=True, blank=True)  # null: never active, only idle
    last_update_id = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["realm", "last_update_id"], name="presence_by_realm_update")]

    def __str__(self) -> str:
        return f"presence of {self.user_id}"


class PresenceSequence(models.Model):
    """The last `last_update_id` given out in an organization (embedded mode)."""

    realm = models.OneToOneField(Realm, on_delete=models.CASCADE, primary_key=True, related_name="+")
    last_update_id = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"presence sequence of {self.realm_id}"


class UserStatus(models.Model):
    """What a person says of themselves beside their name (Zulip's UserStatus): a short text, an
    emoji (as reactions name them), and the deprecated "away"."""

    MAX_TEXT_LENGTH = 60  # Zulip's

    user = models.OneToOneField(User, on_delete=models.CASCADE, primary_key=True, related_name="+")
    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    status_text = models.CharField(max_length=MAX_TEXT_LENGTH, blank=True, default="")
    emoji_name = models.CharField(max_length=60, blank=True, default="")
    emoji_code = models.CharField(max_length=60, blank=True, default="")
    reaction_type = models.CharField(max_length=30, default="unicode_emoji")
    away = models.BooleanField(default=False)
    timestamp = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "user statuses"

    def __str__(self) -> str:
        return f"{self.user_id}: {self.status_text}"
