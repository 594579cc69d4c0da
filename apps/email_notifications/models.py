from django.db import models

from apps.messages.models import Message
from apps.users.models import User


class EmailNotification(models.Model):
    """A message someone is to be emailed about (Zulip's ScheduledMessageNotificationEmail): with
    their other pending ones, once the first is due (`scheduled_at`: when it arrived, plus their
    email_notifications_batching_period_seconds), unless they read it meanwhile. Gone with the
    message or the user."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    trigger = models.CharField(max_length=32, help_text="Why: direct message, mention, wildcard mention.")
    scheduled_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "message"], name="email_notification_once")]

    def __str__(self) -> str:
        return f"message {self.message_id} to {self.user_id} ({self.trigger})"
