"""Message retention, as Zulip's retention policy: a channel whose message_retention_days is a
number of days (set by an owner) loses its messages older than that. The task worker runs it every
hour: oldest first, RETENTION_BATCH_SIZE messages per transaction, for at most
RETENTION_TIME_BUDGET_SECONDS a run (the next run carries on). "unlimited" (-1) and the
organization's default (None: Parley's organizations keep messages forever) keep everything.

Zulip moves expired messages to an archive that is vacuumed 30 days later and tells no client;
Parley deletes them as a topic deletion does (their attachments released, delete_message events to
who had them, the channel's first_message_id moved on), so clients showing them drop them at once.
"""

import logging
import time
from collections import defaultdict
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.core.tasks import periodic
from apps.messages.actions.delete_topic import do_delete_messages
from apps.messages.models import Message, Recipient
from apps.subscriptions.models import Stream

logger = logging.getLogger(__name__)

RETENTION_BATCH_SIZE = 1000
RETENTION_TIME_BUDGET_SECONDS = 60


@periodic(3600)
def enforce_message_retention() -> int:
    """Delete the expired messages of every channel with a retention period; returns how many."""
    deadline = time.monotonic() + RETENTION_TIME_BUDGET_SECONDS
    deleted = 0
    for stream in Stream.objects.filter(message_retention_days__gt=0).order_by("id"):
        cutoff = timezone.now() - timedelta(days=stream.message_retention_days)
        while batch := _delete_expired_batch(stream, cutoff):
            deleted += batch
            if time.monotonic() >= deadline:
                logger.info("message retention: %d expired message(s) deleted; the rest next run", deleted)
                return deleted
    if deleted:
        logger.info("message retention: %d expired message(s) deleted", deleted)
    return deleted


@transaction.atomic
def _delete_expired_batch(stream: Stream, cutoff) -> int:
    """The channel's oldest RETENTION_BATCH_SIZE messages sent before `cutoff`, deleted (locked
    oldest first: concurrent runs wait for each other); returns how many."""
    recipient = Recipient.objects.filter(type=Recipient.Type.STREAM, type_id=stream.id).first()
    if recipient is None:
        return 0
    expired = Message.objects.filter(recipient=recipient, date_sent__lt=cutoff).select_for_update().order_by("id")
    rows = list(expired.values_list("id", "topic")[:RETENTION_BATCH_SIZE])
    by_topic: dict[str, list[int]] = defaultdict(list)
    for message_id, topic in rows:
        by_topic[topic].append(message_id)
    for topic, message_ids in by_topic.items():
        do_delete_messages(stream, topic, message_ids, acting_user=None)
    return len(rows)
