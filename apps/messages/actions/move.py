"""What moving messages brings along, as in Zulip (zerver/actions/message_edit.py): the checks of a
move to another channel, the per-user rows of the people who gain or lose the messages, the events
of a move between channels, the channels' first_message_id, the users' topic policies following a
whole topic, and the Notification Bot's notices in the old and new topics.

apps.messages.actions.edit decides what moves and calls these, inside its transaction.
"""

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Min
from django.utils import timezone

from apps.core.errors import JsonableError
from apps.events.publish import send_event_on_commit
from apps.groups.selectors import is_user_in_group
from apps.messages.access import can_move_messages_out_of_channel
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.send import do_send_message
from apps.messages.hooks import messages_withdrawn
from apps.messages.models import Message, UserMessage
from apps.messages.newest import newest_changed_on_commit
from apps.messages.rendering import channel_narrow, silent_mention
from apps.realms.models import Realm
from apps.subscriptions.actions.access import send_stream_update
from apps.subscriptions.actions.user_topics import do_set_user_topic_visibility_policy
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.selectors import access_stream_by_id, subscriber_ids_by_stream
from apps.subscriptions.topics import check_topics_policy, same_topic, topic_key
from apps.users.models import Role, User

# Zulip's grace past the time limits (clients let people start an edit just before one).
EDIT_LIMIT_BUFFER_SECONDS = 20
INHERIT = UserTopic.VisibilityPolicy.INHERIT
# Ids per UPDATE ... WHERE id IN (...) (SQLite allows 32,766 parameters), and the distinct edit
# histories of a move written one UPDATE each.
ID_BATCH = 10_000
MAX_HISTORY_GROUPS = 20


def past_limit(message: Message, limit_seconds: int | None, *, grace: bool = True) -> bool:
    """Whether `message` was sent longer ago than `limit_seconds` (None: no limit), with the grace
    unless `grace` is False."""
    if limit_seconds is None:
        return False
    buffer = EDIT_LIMIT_BUFFER_SECONDS if grace else 0
    return timezone.now() - message.date_sent > timedelta(seconds=limit_seconds + buffer)


def past_move_limit(user: User, message: Message, limit_seconds: int | None) -> bool:
    """Whether moving `message` is past the organization's limit `limit_seconds` for `user`: never
    for administrators and moderators (Zulip: "The time limit will never apply to administrators
    and moderators")."""
    return not exempt_from_move_limits(user) and past_limit(message, limit_seconds)


def exempt_from_move_limits(user: User) -> bool:
    return user.is_admin or user.is_moderator


def access_destination_channel(user: User, stream_id: int) -> Stream:
    """The channel messages are to move to: "Invalid channel ID" when it does not exist, is another
    organization's, is archived, or the user may not read it."""
    stream, _ = access_stream_by_id(user, stream_id)
    return stream


def check_channel_move(user: User, message: Message, destination: Stream, topic: str) -> None:
    """Whether `user` may move `message` to `destination` (as `topic`): Zulip's checks, in its order
    (the organization's policy, or the channel's can_move_messages_out_of_channel_group)."""
    if not can_move_messages_out_of_channel(user, message.stream):
        raise JsonableError("You don't have permission to move this message")
    if not is_user_in_group(destination.can_send_message_group_id, user):
        raise JsonableError("You do not have permission to post in this channel.")
    if past_move_limit(user, message, user.realm.move_messages_between_streams_limit_seconds):
        raise JsonableError("The time limit for editing this message's channel has passed")
    check_topics_policy(topic, destination, user.realm)


def move_deadline_seconds(user: User, *, topic_changed: bool, channel_changed: bool) -> int | None:
    """The limit a whole-topic move checks every message against: the stricter of those that apply
    (None: none does, as for administrators and moderators)."""
    realm = user.realm
    limits = []
    if exempt_from_move_limits(user):
        return None
    if topic_changed and realm.move_messages_within_stream_limit_seconds is not None:
        limits.append(realm.move_messages_within_stream_limit_seconds)
    if channel_changed and realm.move_messages_between_streams_limit_seconds is not None:
        limits.append(realm.move_messages_between_streams_limit_seconds)
    return min(limits, default=None)


def save_moved_messages(message: Message, moved: list[Message]) -> None:
    """Store the move of the messages other than the edited one (saved by the caller), which all
    went where it went. Not Django's bulk_update: its CASE over every id in each column costs the
    database time in the square of the messages (minutes for a 10,000-message topic). One UPDATE
    for each distinct edit history (messages that moved together before share theirs), with the
    place and time; past MAX_HISTORY_GROUPS of them, one for the place and time, then bulk_update
    of the histories in small batches.
    """
    others = [each for each in moved if each.id != message.id]
    if not others:
        return
    place = {"topic": message.topic, "stream": message.stream, "recipient": message.recipient,
             "last_moved_time": message.last_moved_time}  # fmt: skip
    by_history: dict[str, list[int]] = defaultdict(list)
    for each in others:
        by_history[json.dumps(each.edit_history, sort_keys=True)].append(each.id)
    if len(by_history) > MAX_HISTORY_GROUPS:
        _update_in_batches([each.id for each in others], place)
        Message.objects.bulk_update(others, ["edit_history"], batch_size=100)
        return
    for history, ids in by_history.items():
        _update_in_batches(ids, {**place, "edit_history": json.loads(history)})


def _update_in_batches(ids: list[int], changes: dict) -> None:
    for start in range(0, len(ids), ID_BATCH):
        Message.objects.filter(id__in=ids[start : start + ID_BATCH]).update(**changes)


# --- a move to another channel ------------------------------------------------------------------


@dataclass(frozen=True)
class ChannelChange:
    """Who the messages' move from `old` to `new` changes things for (read before anything moves)."""

    old: Stream
    new: Stream
    # Subscribers of the old channel (even former) who are not of the new one, and anyone else
    # with rows of the messages (a star on a public channel's message) who may not read the new one.
    losing_rows: set[int]
    losing_access: set[int]  # of those, who may not read the new channel: its guests; all, if private
    gaining_rows: set[int]  # the new channel's subscribers, when its history is not public to them


def channel_change(old: Stream, new: Stream, message_ids: list[int]) -> ChannelChange:
    old_all = set(Subscription.objects.filter(stream=old).values_list("user_id", flat=True))
    new_current = set(Subscription.objects.filter(stream=new, active=True).values_list("user_id", flat=True))
    losing_rows = old_all - new_current
    # Rows of people who never subscribed to the old channel: those it made when they starred (or
    # otherwise flagged) one of its messages, its history being public. Zulip leaves them, and with
    # them the moved messages, their new channel and every later edit, readable by someone who may
    # not read that channel; they go here when the new channel is closed to their holders.
    holders = UserMessage.objects.filter(message_id__in=message_ids).values_list("user_id", flat=True).distinct()
    others = set(holders.exclude(user_id__in=Subscription.objects.filter(stream=old).values("user_id"))) - new_current
    if new.is_public:
        closed = set(User.objects.filter(id__in=losing_rows | others, role=Role.GUEST).values_list("id", flat=True))
        losing_access = closed
        losing_rows |= others & closed
    else:
        losing_rows |= others
        losing_access = losing_rows
    gaining_rows = set() if new.history_public_to_subscribers else new_current
    return ChannelChange(old, new, losing_rows, losing_access, gaining_rows)


def move_rows(change: ChannelChange, message_ids: list[int]) -> None:
    """Rows removed for those losing the messages; added, read, for the new channel's subscribers
    who had none (only they may read a channel whose history is protected). The mention flags of
    a row are the original rendering's, as in Zulip: the content is not rendered again."""
    if change.losing_rows or change.gaining_rows:
        newest_changed_on_commit(change.old.realm_id)
    if change.losing_rows:
        messages_withdrawn.call(sorted(change.losing_rows), message_ids)
        UserMessage.objects.filter(user_id__in=change.losing_rows, message_id__in=message_ids).delete()
    if not change.gaining_rows:
        return
    # Most of them have every row already (they were subscribed when the messages were sent): one
    # count tells who lacks some, and only their missing rows are written.
    counts = (
        UserMessage.objects.filter(user_id__in=change.gaining_rows, message_id__in=message_ids)
        .values("user_id")
        .annotate(rows=Count("id"))
        .values_list("user_id", "rows")
    )
    complete = {user_id for user_id, rows in counts if rows == len(message_ids)}
    for user_id in sorted(change.gaining_rows - complete):
        has = set(
            UserMessage.objects.filter(user_id=user_id, message_id__in=message_ids).values_list("message_id", flat=True)
        )
        rows = [UserMessage(user_id=user_id, message_id=m, flags=UserMessage.READ) for m in message_ids if m not in has]
        UserMessage.objects.bulk_create(rows, batch_size=5000, ignore_conflicts=True)


def send_channel_move_events(
    change: ChannelChange, event: dict, holders: dict[int, int], orig_topic: str, message_ids: list[int]
) -> None:
    """update_message to those who keep the messages (`holders`: who had rows before, with their
    flags for the edited message) and, when the old channel's history is public, to both channels'
    subscribers (read); delete_message to those who lose access, as Zulip sends them. Zulip leaves
    out a guest subscribed to the new channel only (their clients would not know the topic)."""
    recipients = {user_id: flags for user_id, flags in holders.items() if user_id not in change.losing_rows}
    if change.old.history_public_to_subscribers:
        subscribers = subscriber_ids_by_stream([change.old.id, change.new.id])
        old_all = set(Subscription.objects.filter(stream=change.old, active=True).values_list("user_id", flat=True))
        only_new = subscribers[change.new.id] - old_all
        new_guests = set(User.objects.filter(id__in=only_new, role=Role.GUEST).values_list("id", flat=True))
        for user_id in (subscribers[change.old.id] | subscribers[change.new.id]) - change.losing_access - new_guests:
            recipients.setdefault(user_id, UserMessage.READ)
    by_flags: dict[int, list[int]] = defaultdict(list)
    for user_id, flags in recipients.items():
        by_flags[flags].append(user_id)
    for bits, user_ids in by_flags.items():
        send_event_on_commit(change.old.realm_id, {**event, "flags": UserMessage.flag_names(bits)}, sorted(user_ids))
    if change.losing_access:
        deleted = {"type": "delete_message", "message_type": "stream", "stream_id": change.old.id,
                   "topic": orig_topic, "message_ids": message_ids}  # fmt: skip
        send_event_on_commit(change.old.realm_id, deleted, sorted(change.losing_access))


def update_first_message_ids(change: ChannelChange, message_ids: list[int]) -> None:
    """Each channel's first_message_id after the move (the messages already moved): the new one's
    may now be a moved message, the old one's the first message it kept.

    Emits: stream/update first_message_id for each channel whose first message changed.
    """
    locked = dict(
        Stream.objects.select_for_update()
        .filter(id__in=[change.old.id, change.new.id])
        .order_by("id")
        .values_list("id", "first_message_id")
    )
    first_moved = min(message_ids)
    new_first = locked[change.new.id]
    if new_first is None or first_moved < new_first:
        _set_first_message_id(change.new, first_moved)
    if locked[change.old.id] is not None and locked[change.old.id] >= first_moved:
        first = Message.objects.filter(stream=change.old).aggregate(first=Min("id"))["first"]
        if first != locked[change.old.id]:
            _set_first_message_id(change.old, first)


def _set_first_message_id(stream: Stream, first: int | None) -> None:
    Stream.objects.filter(id=stream.id).update(first_message_id=first)
    stream.first_message_id = first
    send_stream_update(stream, "first_message_id", first)


# --- what follows a moved topic ------------------------------------------------------------------


def moved_all_visible_messages(user: User, stream: Stream, topic: str, propagate_mode: str) -> bool:
    """Whether the move took the whole topic, as far as `user` can see it (what they cannot see is
    not revealed by a notice). Read after the messages moved."""
    if propagate_mode == "change_all":
        return True
    left = Message.objects.filter(same_topic("topic", topic), stream=stream)
    if not stream.history_public_to_subscribers:
        left = left.filter(id__in=UserMessage.objects.filter(user=user).values("message_id"))
    return not left.exists()


def _merged_policy(orig: int, target: int) -> int:
    """Zulip's get_visibility_policy_after_merge: the more visible policy wins."""
    policies = {orig, target}
    for policy in (UserTopic.VisibilityPolicy.FOLLOWED, UserTopic.VisibilityPolicy.UNMUTED, INHERIT):
        if policy in policies:
            return policy
    return UserTopic.VisibilityPolicy.MUTED


def move_user_topics(
    old: Stream, old_topic: str, new: Stream, new_topic: str, *, losing_access: set[int], target_had_messages: bool
) -> None:
    """The users' policies for a topic that moved whole go with it (Zulip's rules): removed for those
    who may not read the new channel; merged with the destination's (the more visible wins) when it
    had messages; else the old topic's, in place of whatever the destination had.

    Emits: user_topic (and muted_topics) to each user whose policies changed.
    """
    if old.id == new.id and topic_key(old_topic) == topic_key(new_topic):
        return
    rows = UserTopic.objects.select_related("user").order_by("id")
    orig = {row.user_id: row for row in rows.filter(same_topic("topic_name", old_topic), stream=old)}
    target = {row.user_id: row for row in rows.filter(same_topic("topic_name", new_topic), stream=new)}
    for user_id in sorted(set(orig) | set(target)):
        row = orig.get(user_id) or target[user_id]
        orig_policy = orig[user_id].visibility_policy if user_id in orig else INHERIT
        target_policy = target[user_id].visibility_policy if user_id in target else INHERIT
        if user_id in orig:
            do_set_user_topic_visibility_policy(
                row.user, old, orig[user_id].topic_name, visibility_policy=INHERIT, acting_user=None
            )
        if user_id in losing_access:
            continue
        policy = _merged_policy(orig_policy, target_policy) if target_had_messages else orig_policy
        if policy != target_policy:
            do_set_user_topic_visibility_policy(row.user, new, new_topic, visibility_policy=policy, acting_user=None)


# --- the Notification Bot's notices --------------------------------------------------------------


def message_link(realm: Realm, stream: Stream, topic: str, message_id: int) -> str:
    """Zulip's link to a message in its conversation (`#narrow/channel/.../topic/.../near/id`)."""
    return f"{realm.url}/{channel_narrow(stream.id, stream.name, topic)}/near/{message_id}"


@dataclass(frozen=True)
class Move:
    """A move that happened, for its notices."""

    message: Message  # the edited message, where it is now
    old: Stream
    old_topic: str
    new: Stream
    new_topic: str
    message_ids: list[int]
    moved_all: bool  # the whole topic, as the mover sees it
    resolving: bool  # only marks the topic (un)resolved


def send_move_notices(move: Move, *, to_old_thread: bool, to_new_thread: bool, acting_user: User) -> None:
    """Zulip's notices of a move, from the Notification Bot, with its texts: in the new topic (unless
    the move only resolves the topic), then in the old one. None when the bot is deactivated.

    Emits: message (do_send_message) for each notice.
    """
    channel_changed = move.old.id != move.new.id
    to_new_thread = to_new_thread and (channel_changed or not move.resolving)
    if not (to_old_thread or to_new_thread):
        return
    bot = do_create_notification_bot(acting_user.realm)
    if not bot.is_active:
        return
    user = silent_mention(acting_user)
    old_location = f"#**{move.old.name}>{move.old_topic}**"
    new_location = f"#**{move.new.name}>{move.new_topic}**"
    count = len(move.message_ids)
    if to_new_thread:
        preexisting = Message.objects.filter(same_topic("topic", move.new_topic), stream=move.new).exclude(
            id__in=move.message_ids
        )
        if not move.new.history_public_to_subscribers:
            preexisting = preexisting.filter(id__in=UserMessage.objects.filter(user=acting_user).values("message_id"))
        if move.moved_all and not preexisting.exists():
            text = f"This topic was moved here from {old_location} by {user}."
        elif count == 1:
            link = message_link(acting_user.realm, move.new, move.new_topic, move.message.id)
            text = f"[A message]({link}) was moved here from {old_location} by {user}."
        else:
            text = f"{count} messages were moved here from {old_location} by {user}."
        _notice(bot, move.new, move.new_topic, text, acting_user)
    if to_old_thread:
        if move.moved_all:
            text = f"This topic was moved to {new_location} by {user}."
        elif count == 1:
            text = f"A message was moved from this topic to {new_location} by {user}."
        else:
            text = f"{count} messages were moved from this topic to {new_location} by {user}."
        _notice(bot, move.old, move.old_topic, text, acting_user)


def _notice(bot: User, stream: Stream, topic: str, text: str, mover: User) -> None:
    """A notice, read already for whoever moved the messages (as Zulip: they know), its channel
    links those the mover knows of."""
    do_send_message(
        bot,
        stream=stream,
        topic=topic,
        content=text,
        client="Internal",
        read_by={mover.id},
        links_as=mover,
        acting_user=None,
    )
