from django.db import models
from django.db.models import Q

from apps.messages.models import Message
from apps.realms.limits import MAX_TOPIC_LENGTH
from apps.realms.models import Realm
from apps.subscriptions.models import Stream
from apps.users.models import User


class ScheduledMessage(models.Model):
    """A message its sender asked the server to send later (Zulip's ScheduledMessage).

    Of the "send later" kind: to a channel's topic, or to people (`dm_user_ids`: the others, or the
    sender alone for a message to themselves). The task worker sends it at `scheduled_timestamp`,
    with the checks of sending then; one it could not send is `failed`, with why, until its sender
    edits or deletes it.

    A reminder (Zulip's "remind" kind) is a direct message to its sender alone, about the message
    `reminder_target_message_id`: the Notification Bot sends it to them when it is due (with the
    target message as it is then, when they may still read it). Reminders are kept apart from the
    other kind: /reminders lists and deletes them, /scheduled_messages never shows them.

    Sent ones are kept, with the message they became."""

    class DeliveryType(models.IntegerChoices):
        SEND_LATER = 1, "Send later"
        REMIND = 2, "Reminder"

    # The most unsent scheduled messages (and, apart, reminders) a user may have: the lists answer
    # them all.
    MAX_PER_USER = 1000

    realm = models.ForeignKey(Realm, on_delete=models.CASCADE, related_name="+")
    sender = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+", db_index=False)
    stream = models.ForeignKey(Stream, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    dm_user_ids = models.JSONField(default=list, blank=True)  # sorted; empty for a channel message
    topic = models.CharField(max_length=MAX_TOPIC_LENGTH, blank=True, default="")
    content = models.TextField()
    rendered_content = models.TextField()
    scheduled_timestamp = models.DateTimeField()
    read_by_sender = models.BooleanField(null=True, blank=True)  # None: as the sending client decides
    sending_client = models.CharField(max_length=128, default="API")
    delivered = models.BooleanField(default=False)
    delivered_message = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    failed = models.BooleanField(default=False)
    failure_message = models.TextField(blank=True, default="")
    delivery_type = models.PositiveSmallIntegerField(
        choices=DeliveryType.choices, default=DeliveryType.SEND_LATER, db_default=DeliveryType.SEND_LATER
    )
    # Reminders only: the message it is about (its id: the message may be deleted meanwhile), and
    # the note its sender added.
    reminder_target_message_id = models.BigIntegerField(null=True, blank=True)
    reminder_note = models.TextField(blank=True, default="", db_default="")

    class Meta:
        indexes = [
            # A user's scheduled messages, soonest first (GET /scheduled_messages, /register).
            models.Index(fields=["sender", "scheduled_timestamp"], name="scheduled_by_sender"),
            # What the worker has to send: those due, not sent and not failed.
            models.Index(
                fields=["scheduled_timestamp"], condition=Q(delivered=False, failed=False), name="scheduled_due"
            ),
        ]

    def __str__(self) -> str:
        return f"scheduled message {self.id} of {self.sender_id}"
