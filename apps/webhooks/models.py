from django.db import models

from apps.users.models import User


class FailedDelivery(models.Model):
    """A message that did not reach an outgoing-webhook bot's service, or whose answer could not be
    used, for the operator (the Django admin); the conversation was told too. Every delivery,
    failed or not, is also in the log (logger apps.webhooks)."""

    class Outcome(models.TextChoices):
        REFUSED = "refused", "address refused"
        UNAVAILABLE = "unavailable", "unavailable after retries"
        HTTP_STATUS = "status", "non-2xx answer"
        BAD_ANSWER = "answer", "unusable answer"
        ERROR = "error", "error"

    bot = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    message_id = models.BigIntegerField()
    trigger = models.CharField(max_length=20)
    url = models.URLField(max_length=2000)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    detail = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField()
    failed_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ("-failed_at",)
        verbose_name_plural = "failed deliveries"

    def __str__(self) -> str:
        return f"message {self.message_id} to {self.url}: {self.get_outcome_display()}"
