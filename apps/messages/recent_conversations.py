"""POST /register's `recent_private_conversations` (Zulip's): the direct-message conversations
among the user's most recent direct messages, latest first, each with its latest message id and
the other people in it (none for a conversation with oneself)."""

from collections import defaultdict
from typing import Any

from django.db.models import F

from apps.messages.models import DirectMessageGroup, Recipient, UserMessage
from apps.users.models import User

# Zulip's RECENT_CONVERSATIONS_LIMIT: how many of the latest direct messages are looked at.
RECENT_MESSAGES_LIMIT = 1000


def recent_private_conversations(user: User) -> list[dict[str, Any]]:
    """Three queries, whatever the number of conversations (the last finds nothing without groups)."""
    # The newest rows are found first, by the partial index of direct messages (migration 0010),
    # and only they are joined to their messages: joined at once, PostgreSQL guesses a third of a
    # user's rows are direct messages and walks every message of the organization, newest first.
    newest = (
        UserMessage.objects.alias(private=F("flags").bitand(UserMessage.IS_PRIVATE))
        .filter(user=user, private__gt=0)
        .order_by("-message_id")
        .values("id")[:RECENT_MESSAGES_LIMIT]
    )
    rows = list(
        UserMessage.objects.filter(id__in=newest)
        .order_by("-message_id")
        .values_list("message_id", "message__recipient_id", "message__sender_id")
    )
    recipient_rows = Recipient.objects.filter(id__in={row[1] for row in rows}).values_list("id", "type", "type_id")
    recipients = {r_id: (r_type, type_id) for r_id, r_type, type_id in recipient_rows}
    group_ids = [type_id for r_type, type_id in recipients.values() if r_type == Recipient.Type.DIRECT_MESSAGE_GROUP]
    groups = dict(DirectMessageGroup.objects.filter(id__in=group_ids).values_list("id", "user_ids"))
    latest: dict[frozenset[int], int] = {}  # the other people -> the conversation's latest message
    for message_id, recipient_id, sender_id in rows:
        r_type, type_id = recipients[recipient_id]
        # A one-to-one message's recipient is its receiver: the two people are it and the sender.
        people = {type_id, sender_id} if r_type == Recipient.Type.PERSONAL else set(groups[type_id])
        latest.setdefault(frozenset(people - {user.id}), message_id)
    return [{"max_message_id": message_id, "user_ids": sorted(others)} for others, message_id in latest.items()]


def direct_message_partner_ids(user_ids: list[int]) -> dict[int, set[int]]:
    """For each of `user_ids`, the people they have a direct message conversation with (one that
    still has a message). Two queries (the second only when there are group conversations)."""
    rows = (
        UserMessage.objects.alias(private=F("flags").bitand(UserMessage.IS_PRIVATE))
        .filter(user_id__in=user_ids, private__gt=0)
        .values_list("user_id", "message__sender_id", "message__recipient__type", "message__recipient__type_id")
        .distinct()
    )
    partners: dict[int, set[int]] = defaultdict(set)
    in_groups: dict[int, set[int]] = defaultdict(set)  # group id -> the users of `user_ids` in it
    for user_id, sender_id, r_type, type_id in rows:
        if r_type == Recipient.Type.PERSONAL:
            partners[user_id] |= {sender_id, type_id}
        else:
            in_groups[type_id].add(user_id)
    for group_id, members in DirectMessageGroup.objects.filter(id__in=in_groups).values_list("id", "user_ids"):
        for user_id in in_groups[group_id]:
            partners[user_id] |= set(members)
    return partners
