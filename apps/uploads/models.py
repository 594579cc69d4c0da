from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.messages.models import Message
from apps.realms.models import Realm
from apps.users.models import User


class Attachment(models.Model):
    """An uploaded file (POST /user_uploads), stored at `path_id` in the uploads storage
    (apps.uploads.storage) and served at /user_uploads/{path_id}. `messages` are the messages whose
    content links it (claimed when sent or edited by someone who may see the file)."""

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    # "{realm id}/{24 random characters}/{sanitized file name}"
    path_id = models.TextField(unique=True)
    file_name = models.TextField()  # as the client named it (without NUL)
    content_type = models.CharField(max_length=255, blank=True, default="")
    size = models.PositiveBigIntegerField()
    create_time = models.DateTimeField(default=timezone.now, db_index=True)
    messages = models.ManyToManyField(Message, related_name="+", blank=True)
    # An image we thumbnail (apps.uploads.thumbnails): its size as shown, its frames, and the names of
    # the thumbnail formats stored for it; None and [] for other files.
    image_width = models.PositiveIntegerField(null=True, blank=True)
    image_height = models.PositiveIntegerField(null=True, blank=True)
    image_frames = models.PositiveIntegerField(null=True, blank=True)
    thumbnails = models.JSONField(default=list, blank=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "id"], name="uploads_attachments_by_owner")]

    def __str__(self) -> str:
        return self.path_id


class RealmEmoji(models.Model):
    """A custom emoji of an organization. Deactivated emoji stay (messages' reactions name them);
    at most one active emoji has a given name."""

    MAX_NAME_LENGTH = 60

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    name = models.CharField(max_length=MAX_NAME_LENGTH)
    # In the uploads storage under emoji/{realm id}/; set once the image is stored.
    file_name = models.CharField(max_length=40, blank=True, default="")
    is_animated = models.BooleanField(default=False)
    deactivated = models.BooleanField(default=False)
    date_created = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "custom emoji"
        verbose_name_plural = "custom emoji"
        constraints = [
            models.UniqueConstraint(
                fields=["realm", "name"], condition=Q(deactivated=False), name="uploads_one_active_emoji_per_name"
            )
        ]

    def __str__(self) -> str:
        return f":{self.name}:"
