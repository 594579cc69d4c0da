from django.db import models
from django.db.models import Q

from apps.messages.models import Message
from apps.users.models import User

# The longest token a client may register (Zulip's limit).
MAX_TOKEN_LENGTH = 4096


class PushDeviceToken(models.Model):
    """A token of a phone's push service (APNs or FCM) its app registered for the user: the legacy
    registration (POST /users/me/apns_device_token, /users/me/android_gcm_reg_id). One row per
    (user, kind, token); APNs tokens are kept in lower case."""

    class Kind(models.IntegerChoices):
        APNS = 1, "APNs"
        FCM = 2, "FCM"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.PositiveSmallIntegerField(choices=Kind.choices)
    token = models.TextField()
    # APNs only: the app the token is for.
    ios_app_id = models.TextField(null=True, blank=True)  # noqa: DJ001
    last_updated = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind", "token"], name="push_token_once_per_user")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} token {self.id} of {self.user_id}"


class Device(models.Model):
    """A logged-in device of the user (Zulip's Device: POST /register_client_device), and what its
    app sent to receive end-to-end encrypted push notifications (POST /mobile_push/register): the
    key to encrypt them with, the push token's id and the registration meant for the push bouncer,
    kept as sent."""

    class TokenKind(models.TextChoices):
        APNS = "apns", "APNs"
        FCM = "fcm", "FCM"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    date_created = models.DateTimeField()
    # 1 byte naming the cryptosystem (0x31: libsodium's crypto_secretbox_easy), then the key.
    push_key = models.BinaryField(null=True, blank=True)
    push_key_id = models.PositiveBigIntegerField(null=True, blank=True)  # an unsigned 32-bit integer
    # Null where nothing was sent, as in Zulip's Device.
    push_token_kind = models.CharField(max_length=4, choices=TokenKind.choices, null=True, blank=True)  # noqa: DJ001
    push_token_id = models.BigIntegerField(null=True, blank=True)
    pending_push_token_id = models.BigIntegerField(null=True, blank=True)
    push_token_last_updated_timestamp = models.DateTimeField(null=True, blank=True)
    push_registration_error_code = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001
    bouncer_public_key = models.TextField(null=True, blank=True)  # noqa: DJ001
    encrypted_push_registration = models.TextField(null=True, blank=True)  # noqa: DJ001

    class Meta:
        indexes = [models.Index(fields=["user", "id"], name="push_devices_by_user")]
        constraints = [models.CheckConstraint(condition=Q(push_key_id__lte=2**32 - 1), name="push_key_id_uint32")]

    def __str__(self) -> str:
        return f"device {self.id} of {self.user_id}"


class ActivePushNotification(models.Model):
    """A message whose notification is on the user's phones (Zulip's active_mobile_push_notification
    flag): reading or deleting the message sends a `remove` notification, and deletes the row."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "message"], name="push_notified_once_per_message")]

    def __str__(self) -> str:
        return f"notification of message {self.message_id} to {self.user_id}"
