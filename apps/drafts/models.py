from django.db import models

from apps.messages.models import Recipient
from apps.realms.limits import MAX_TOPIC_LENGTH
from apps.users.models import User


class Draft(models.Model):
    """A message a user has not sent yet, kept on the server so that their other devices have it
    (Zulip's Draft). Addressed as a message is: a channel, one user or a group of users (the
    recipient), or nobody yet (no recipient)."""

    # Found by the index below (its first column), which needs no other.
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    recipient = models.ForeignKey(Recipient, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    topic = models.CharField(max_length=MAX_TOPIC_LENGTH, blank=True, default="")  # channel drafts only
    content = models.TextField()
    last_edit_time = models.DateTimeField()

    class Meta:
        indexes = [
            # A user's drafts, most recently edited first (GET /drafts, /register).
            models.Index(fields=["user", "-last_edit_time", "-id"], name="drafts_by_user"),
        ]

    def __str__(self) -> str:
        return f"draft {self.id} of {self.user_id}"
