"""A user's flags on messages (read, starred, collapsed), one by one or all that are unread."""

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.messages.actions.acting import check_acting_for
from apps.messages.errors import InvalidMessageError
from apps.messages.hooks import messages_read
from apps.messages.models import Message, UserMessage
from apps.messages.narrow import with_flag_columns
from apps.messages.newest import newest_changed_on_commit
from apps.messages.selectors import dm_users_by_recipient, muted_conversation_checker, visible_message_flags
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import subscribed_stream_ids
from apps.subscriptions.topics import same_topic, topic_from_narrow
from apps.users.models import User


def check_flag(flag: str) -> int:
    """The bit of a flag the user may change."""
    if flag not in UserMessage.FLAG_NAMES:
        raise JsonableError(f"Invalid flag: '{flag}'")
    if flag not in UserMessage.EDITABLE_FLAGS:
        raise JsonableError(f"Flag not editable: '{flag}'")
    return UserMessage.FLAG_NAMES[flag]


class FlagsChange(NamedTuple):
    changed: list[int]  # the ids whose flag changed
    ignored_channel_ids: list[int]  # channels whose messages were not marked unread (not subscribed)


def check_update_message_flags(
    user: User, *, op: str, flag: str, message_ids: Sequence[int], acting_user: User | None
) -> FlagsChange:
    """POST /messages/flags: add or remove an editable flag on messages the user may see ("Invalid
    message(s)" if any is not), checked before do_update_message_flags changes them. Marking
    unread skips channel messages of channels the user is not subscribed to (Zulip's invariant,
    which unread_msgs relies on), and says which channels (Zulip's
    ignored_because_not_subscribed_channels)."""
    check_acting_for(user, acting_user)
    check_flag(flag)
    ids = list(dict.fromkeys(message_ids))
    if len(visible_message_flags(user, ids)) != len(ids):
        raise InvalidMessageError()
    skipped: dict[int, int] = {}
    if op == "remove" and flag == "read":
        skipped = dict(
            Message.objects.filter(id__in=ids, stream__isnull=False)
            .exclude(stream_id__in=subscribed_stream_ids(user))
            .values_list("id", "stream_id")
        )
        ids = [mid for mid in ids if mid not in skipped]
    changed = do_update_message_flags(user, op=op, flag=flag, message_ids=ids, acting_user=acting_user)
    return FlagsChange(changed, sorted(set(skipped.values())))


@transaction.atomic
def do_update_message_flags(
    user: User, *, op: str, flag: str, message_ids: Sequence[int], acting_user: User | None
) -> list[int]:
    """Add or remove an editable flag on these messages, which the user may see (as
    check_update_message_flags checks); returns the ids whose flag changed. A message the user
    never received (a channel's history) gets a row, marked historical, when a flag is added;
    "Invalid message(s)" if it was deleted meanwhile.

    Emits: update_message_flags {op, flag, messages: the changed ids} to the user.
    """
    check_acting_for(user, acting_user)
    bit = check_flag(flag)
    message_ids = list(dict.fromkeys(message_ids))
    rows = set(UserMessage.objects.filter(user=user, message_id__in=message_ids).values_list("message_id", flat=True))
    historical = [mid for mid in message_ids if mid not in rows]
    changed = _change_flag(user, op, bit, [mid for mid in message_ids if mid in rows])
    if op == "add" and historical and bit != UserMessage.READ:
        # Locked, so a topic being deleted meanwhile either waits for this or has removed them
        # (then they are invalid now, rather than rows of messages that no longer exist).
        still_there = set(Message.objects.select_for_update().filter(id__in=historical).values_list("id", flat=True))
        if len(still_there) != len(historical):
            raise InvalidMessageError()
        newest_changed_on_commit(user.realm_id)
        UserMessage.objects.bulk_create(
            [UserMessage(user=user, message_id=mid, flags=UserMessage.READ | UserMessage.HISTORICAL | bit)
             for mid in historical],
            ignore_conflicts=True,
        )  # fmt: skip
        changed = sorted([*changed, *historical])
    _send_flags_event(user, op, flag, changed)
    if bit == UserMessage.READ and op == "add" and changed:
        messages_read.call(user, changed)
    return changed


def _change_flag(user: User, op: str, bit: int, message_ids: Sequence[int]) -> list[int]:
    """The ids whose flag this changes (call in a transaction). Their rows are locked, in id order:
    the same change at the same moment waits, then finds them changed (and announces nothing)."""
    rows = with_flag_columns(UserMessage.objects.filter(user=user, message_id__in=message_ids)).alias(
        this_flag=F("flags").bitand(bit)
    )
    rows = rows.filter(this_flag=0) if op == "add" else rows.filter(this_flag__gt=0)
    changed = list(rows.select_for_update().order_by("message_id").values_list("message_id", flat=True))
    if changed:
        target = UserMessage.objects.filter(user=user, message_id__in=changed)
        if op == "add":
            target.update(flags=F("flags").bitor(bit))
        else:
            target.update(flags=F("flags").bitand(~bit))
    return changed


def _send_flags_event(user: User, op: str, flag: str, message_ids: list[int], *, everything: bool = False) -> None:
    """Emits: update_message_flags {op, operation (its old name), flag, messages, all}."""
    if not message_ids and not everything:
        return
    event = {"type": "update_message_flags", "op": op, "operation": op, "flag": flag, "messages": message_ids,
             "all": everything}  # fmt: skip
    if op == "remove" and flag == "read":
        event["message_details"] = _message_details(user, message_ids)
    send_event_on_commit(user.realm_id, event, [user.id])


def _message_details(user: User, message_ids: list[int]) -> dict[str, dict[str, Any]]:
    """What a client needs to count messages marked unread again (Zulip's message_details)."""
    details = {}
    messages = list(Message.objects.filter(id__in=message_ids))
    people = dm_users_by_recipient([m for m in messages if m.stream_id is None])
    flags = dict(UserMessage.objects.filter(user=user, message_id__in=message_ids).values_list("message_id", "flags"))
    is_muted = muted_conversation_checker(user)
    wildcard_bits = UserMessage.STREAM_WILDCARD_MENTIONED | UserMessage.TOPIC_WILDCARD_MENTIONED
    for m in messages:
        muted = False
        if m.stream_id is not None:
            muted = is_muted(m.stream_id, m.topic)
            entry: dict[str, Any] = {"type": "stream", "stream_id": m.stream_id, "topic": m.topic}
            entry["unmuted_stream_msg"] = not muted
        else:
            others = [u.id for u in people[(m.recipient_id, m.sender_id)] if u.id != user.id]
            entry = {"type": "private", "user_ids": others}
        # As in unread_msgs: a wildcard mention in a muted conversation is not a mention.
        bits = flags.get(m.id, 0)
        if bits & UserMessage.MENTIONED or (bits & wildcard_bits and not muted):
            entry["mentioned"] = True
        details[str(m.id)] = entry
    return details


def do_mark_messages_read(
    user: User,
    *,
    stream: Stream | None = None,
    topic_name: str | None = None,
    sender: User | None = None,
    acting_user: User | None,
) -> int:
    """Mark the user's unread messages read: all of them, or those of a channel (of a topic of it,
    "general chat" naming the empty one), or from a sender; returns how many. All of them: one
    UPDATE whatever their number (no list of ids in it); the others: those listed, ID_BATCH at a time.

    Emits: update_message_flags {op: add, flag: read, messages, all}: for "all of them", as in
    Zulip, `all: true` and no ids (there may be hundreds of thousands); else the ids.
    """
    check_acting_for(user, acting_user)
    rows = with_flag_columns(UserMessage.objects.filter(user=user)).filter(**{f"flag_{UserMessage.READ}": 0})
    if stream is not None:
        rows = rows.filter(message__stream_id=stream.id)
    if topic_name is not None:
        rows = rows.filter(
            same_topic("message__topic", topic_from_narrow(topic_name)), message__stream_id__isnull=False
        )
    if sender is not None:
        rows = rows.filter(message__sender_id=sender.id)
    return _mark_read(user, rows, everything=stream is None and topic_name is None and sender is None)


def check_mark_topic_as_read(user: User, stream: Stream, topic_name: str, *, acting_user: User | None) -> int:
    """POST /mark_topic_as_read: "No such topic 'x'" when the user has no message in the channel's
    topic (a topic named "" is not looked for), as in Zulip; else do_mark_messages_read."""
    if topic_name:
        topic = same_topic("message__topic", topic_from_narrow(topic_name))
        if not UserMessage.objects.filter(topic, user=user, message__stream_id=stream.id).exists():
            raise JsonableError(f"No such topic '{topic_name}'")
    return do_mark_messages_read(user, stream=stream, topic_name=topic_name, acting_user=acting_user)


def check_mark_all_as_read(user: User, *, acting_user: User | None) -> bool:
    """POST /mark_all_as_read, as Zulip does it: the notifications on the user's phones come off
    first, then their unread messages are marked read in batches of MARK_READ_BATCH_SIZE, each its
    own transaction, until none is left or MARK_READ_TIME_BUDGET_SECONDS pass; returns whether it
    finished (`complete`: the client asks again if not, and what was marked stays marked).

    Emits: update_message_flags {op: add, flag: read, messages: [], all: true} once all are read.
    """
    check_acting_for(user, acting_user)
    with transaction.atomic():
        messages_read.call(user, None)
    deadline = time.monotonic() + settings.MARK_READ_TIME_BUDGET_SECONDS
    batch = settings.MARK_READ_BATCH_SIZE
    marked, after, done = 0, 0, False
    while not done:
        if time.monotonic() >= deadline:
            return False
        count, after, done = _mark_read_batch(user, batch, after)
        marked += count
    if marked:
        _send_flags_event(user, "add", "read", [], everything=True)
    return True


@transaction.atomic
def _mark_read_batch(user: User, size: int, after: int) -> tuple[int, int, bool]:
    """Mark read the user's next `size` unread messages after message id `after`, in id order;
    returns how many were marked, the id the batch ended at and whether none is left after it.
    Each batch starts where the one before ended (both queries walk the partial unread index from
    there), rather than past the rows the batches before it marked."""
    unread = with_flag_columns(UserMessage.objects.filter(user=user, message_id__gt=after)).filter(
        **{f"flag_{UserMessage.READ}": 0}
    )
    last = unread.order_by("message_id").values_list("message_id", flat=True)[size - 1 : size].first()
    if last is not None:
        unread = unread.filter(message_id__lte=last)
    return unread.update(flags=F("flags").bitor(UserMessage.READ)), last or after, last is None


# Ids in one statement at most (SQLite takes 32,766 parameters).
ID_BATCH = 10_000


@transaction.atomic(savepoint=False)
def _mark_read(user: User, rows: QuerySet, *, everything: bool) -> int:
    """Mark `rows` read. Their ids, when listed, are read with the rows locked in id order (as
    _change_flag locks them): the same marking at the same moment waits, then finds them read and
    announces nothing."""
    marked = F("flags").bitor(UserMessage.READ)
    if everything:
        ids = []
        count = UserMessage.objects.filter(pk__in=rows.values("pk")).update(flags=marked)
    else:
        # Those listed, not `rows` again: a message that arrived since is in `rows` now, and would be
        # marked read unannounced (the race QA pass: a client showed it unread until it registered).
        ids = list(rows.select_for_update(of=("self",)).order_by("message_id").values_list("message_id", flat=True))
        count = sum(
            UserMessage.objects.filter(user=user, message_id__in=ids[start : start + ID_BATCH]).update(flags=marked)
            for start in range(0, len(ids), ID_BATCH)
        )
    if count:
        _send_flags_event(user, "add", "read", ids, everything=everything)
        messages_read.call(user, None if everything else ids)
    return count
