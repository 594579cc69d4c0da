from django.db import models
from django.utils import timezone

from apps.realms.limits import MAX_MESSAGE_LENGTH
from apps.users.models import User


class SavedSnippet(models.Model):
    """Text a user keeps to insert into messages they write (Zulip's SavedSnippet)."""

    MAX_TITLE_LENGTH = 60  # Zulip's
    MAX_CONTENT_LENGTH = MAX_MESSAGE_LENGTH
    # Parley's cap (Zulip has none): every client receives them all in POST /register.
    MAX_PER_USER = 1000

    # Found by the index below (its first column), which needs no other.
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    title = models.CharField(max_length=MAX_TITLE_LENGTH)
    content = models.TextField()
    date_created = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["user", "id"], name="snippets_by_user")]

    def __str__(self) -> str:
        return f"{self.title} ({self.user_id})"
