"""Editing messages (PATCH /messages/{id}): their content, by the sender, and their topic and
channel (one message, it and the later ones, or the whole topic), with Zulip's rules, edit history
and update_message events.

The content is rendered again (mentions, alert words and linkifiers re-evaluated: the recipients'
mention and alert-word flags follow the new content); a move changes the topic and channel of the
messages the mover may see, records the move in each one's edit history, and tells everyone who has
them (what a move brings along, and a move between channels: apps.messages.actions.move).
"""

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.core.errors import ConflictingChangeError, ErrorCode, JsonableError
from apps.events.publish import send_event_on_commit
from apps.groups.selectors import has_realm_permission
from apps.linkifiers.selectors import linkifier_rules
from apps.messages.access import can_move_messages_to_another_topic, users_told_of
from apps.messages.actions.move import (
    Move,
    access_destination_channel,
    channel_change,
    check_channel_move,
    move_deadline_seconds,
    move_rows,
    move_user_topics,
    moved_all_visible_messages,
    past_limit,
    past_move_limit,
    save_moved_messages,
    send_channel_move_events,
    send_move_notices,
    update_first_message_ids,
)
from apps.messages.actions.resolve import resolve_change, send_resolve_notice
from apps.messages.actions.send import mention_flags, normalize_content, normalize_topic, render_content
from apps.messages.addressing import check_can_create_topic
from apps.messages.alert_words import alerted_user_ids
from apps.messages.errors import InvalidMessageError
from apps.messages.hooks import mentions_added, message_content_saved
from apps.messages.models import Message, Recipient, SubMessage, UserMessage
from apps.messages.recipients import get_recipient
from apps.messages.selectors import alert_word_users
from apps.messages.wildcard_mentions import check_wildcard_mentions, wildcard_topic_participants
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import Membership, subscriber_ids_by_stream
from apps.subscriptions.topics import RESOLVED_TOPIC_PREFIX, same_topic, topic_from_client
from apps.users.models import User

PROPAGATE_MODES = ("change_one", "change_later", "change_all")


class MessageMoveError(JsonableError):
    """Zulip's MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: only the newer messages of the topic may move."""

    code = ErrorCode.MOVE_MESSAGES_TIME_LIMIT_EXCEEDED

    def __init__(self, first_allowed: int, total: int, allowed: int) -> None:
        super().__init__(
            f"You only have permission to move the {allowed}/{total} most recent messages in this topic.",
            first_message_id_allowed_to_move=first_allowed,
            total_messages_in_topic=total,
            total_messages_allowed_to_move=allowed,
        )


@dataclass(frozen=True)
class MessageEdit:
    """A checked edit: the new content, topic and channel (each None: unchanged)."""

    content: str | None
    topic: str | None
    stream: Stream | None
    propagate_mode: str
    # "resolved" or "unresolved" when the new topic only marks the topic so (the name as sent, before
    # it is cut to the longest a topic may be, as Zulip compares it), else None.
    resolve: str | None = None


DELETED_CONTENT = "(deleted)"


def check_can_edit_content(user: User, message: Message, *, grace: bool = True) -> None:
    """That the user may edit the message's content now (Zulip's validate_user_can_edit_message): the
    organization allows editing, it is theirs, and its time limit has not passed (with Zulip's grace
    unless `grace` is False, as for saying one is editing)."""
    if not user.realm.allow_message_editing:
        raise JsonableError("Your organization has turned off message editing")
    if message.sender_id != user.id:
        raise JsonableError("You don't have permission to edit this message")
    if past_limit(message, user.realm.message_content_edit_limit_seconds, grace=grace):
        raise JsonableError("The time limit for editing this message has passed")


def check_message_edit(
    user: User,
    message: Message,
    *,
    content: str | None,
    topic: str | None,
    stream_id: int | None,
    propagate_mode: str,
    prev_content_sha256: str | None,
) -> MessageEdit:
    """Zulip's checks, in its order: what the request asks, then whether the user may."""
    realm = user.realm
    if topic is not None:
        topic = topic_from_client(topic)
        if topic == message.topic:
            topic = None
    if stream_id is not None and stream_id == message.stream_id:
        stream_id = None
    if content is None and topic is None and stream_id is None:
        raise JsonableError("Nothing to change")
    if message.stream_id is None:
        if stream_id is not None:
            raise JsonableError("Direct messages cannot be moved to channels.")
        if topic is not None:
            raise JsonableError("Direct messages cannot have topics.")
    if propagate_mode != "change_one" and topic is None and stream_id is None:
        raise JsonableError("Invalid propagate_mode without topic edit")
    if topic in (RESOLVED_TOPIC_PREFIX.strip(), RESOLVED_TOPIC_PREFIX + EMPTY_TOPIC_DISPLAY_NAME):
        raise JsonableError("General chat cannot be marked as resolved")
    destination = None
    if stream_id is not None:
        if content is not None:
            raise JsonableError("Cannot change message content while changing channel")
        destination = access_destination_channel(user, stream_id)
    if content is not None:
        if SubMessage.objects.filter(message=message).exists():
            raise JsonableError("Widgets cannot be edited.")
        check_can_edit_content(user, message)
        # Emptied, the message reads "(deleted)", as in Zulip (sending nothing is refused).
        content = normalize_content(content if content.strip() else DELETED_CONTENT)
    # Checked for moves too, as Zulip's (the client saw the content it asks about).
    if prev_content_sha256 is not None and hashlib.sha256(message.content.encode()).hexdigest() != prev_content_sha256:
        raise JsonableError(
            "'prev_content_sha256' value does not match the expected value.", code=ErrorCode.EXPECTATION_MISMATCH
        )
    resolve = None
    if topic is not None:
        resolve = resolve_change(message.topic, topic)
        topic = normalize_topic(topic, destination or message.stream, realm)
        if resolve is not None:
            # The organization's setting, or the channel's of the channel moved from or to (Zulip's can_resolve_topics).
            membership = Membership(user)
            if not (
                has_realm_permission(user, "can_resolve_topics_group", membership.group_ids)
                or any(
                    membership.holds(channel, "can_resolve_topics_group")
                    for channel in {message.stream, destination} - {None}
                )
            ):
                raise JsonableError("You don't have permission to resolve topics in this channel.")
        else:
            if not can_move_messages_to_another_topic(user, message.stream, destination or message.stream):
                raise JsonableError("You don't have permission to edit this message")
            if past_move_limit(user, message, realm.move_messages_within_stream_limit_seconds):
                raise JsonableError("The time limit for editing this message's topic has passed.")
    if destination is not None:
        check_channel_move(user, message, destination, message.topic if topic is None else topic)
    if (topic is not None or destination is not None) and resolve is None:
        check_can_create_topic(user, destination or message.stream, message.topic if topic is None else topic)
    return MessageEdit(content=content, topic=topic, stream=destination, propagate_mode=propagate_mode, resolve=resolve)


def _messages_to_move(user: User, message: Message, edit: MessageEdit) -> list[Message]:
    """The messages a move takes, in id order: the one, or it and the later ones, or the topic's, of
    those the user may see (where history is protected, those they received). Moving a whole topic,
    one held to the organization's limits (not administrators and moderators) may move only messages
    within them (the stricter of the topic's and the channel's when both change)."""
    if edit.propagate_mode == "change_one":
        return [message]
    messages = Message.objects.filter(same_topic("topic", message.topic), stream_id=message.stream_id)
    if not message.stream.history_public_to_subscribers:
        messages = messages.filter(id__in=UserMessage.objects.filter(user=user).values("message_id"))
    if edit.propagate_mode == "change_later":
        messages = messages.filter(id__gte=message.id)
    # The edited message is the caller's object (its content edit, if any, is made on it).
    moved = [message if each.id == message.id else each for each in messages.select_for_update().order_by("id")]
    resolving = edit.resolve is not None
    limit = move_deadline_seconds(user, topic_changed=edit.topic is not None, channel_changed=edit.stream is not None)
    if edit.propagate_mode == "change_all" and not resolving and limit is not None:
        allowed = [m for m in moved if not past_limit(m, limit)]
        if len(allowed) < len(moved):
            raise MessageMoveError(allowed[0].id if allowed else 0, len(moved), len(allowed))
    return moved


def lock_message(message_id: int, *, with_channels: bool, to_channel_id: int | None = None) -> Message:
    """The message, its row locked ("Invalid message(s)" when it is gone). A move or a deletion
    (`with_channels`) first locks the message's channel and the one it goes to (`to_channel_id`, if
    any), in id order, FOR NO KEY UPDATE (sends to them go on): moves and deletions in one topic,
    which lock its messages, and moves between two channels, which update both, are then made one
    after the other instead of deadlocking. The message is read once its row is locked: a
    row read while locked rows were waited for comes back with the joined rows of its old version
    (its channel none, when a move to another channel was waited for)."""
    for _ in range(3):
        channel_id = None
        if with_channels:  # a content edit locks the message alone
            channel_id = Message.objects.filter(id=message_id).values_list("stream_id", flat=True).first()
        if channel_id is not None:
            ids = {channel_id} | ({to_channel_id} if to_channel_id is not None and 0 < to_channel_id < 2**63 else set())
            list(Stream.objects.select_for_update(no_key=True).filter(id__in=ids).order_by("id").values_list("id"))
        if not Message.objects.select_for_update().filter(id=message_id).values_list("id", flat=True).first():
            raise InvalidMessageError()
        message = Message.objects.select_related("stream", "sender", "realm").get(id=message_id)
        if not with_channels or message.stream_id == channel_id:
            return message
    raise ConflictingChangeError()  # moved to another channel between the two reads, each time


@transaction.atomic
def check_update_message(
    message: Message,
    *,
    content: str | None,
    topic: str | None,
    stream_id: int | None,
    propagate_mode: str,
    prev_content_sha256: str | None,
    send_notification_to_old_thread: bool = False,
    send_notification_to_new_thread: bool = True,
    acting_user: User,
) -> list[dict]:
    """PATCH /messages/{id}, on a message `acting_user` can see: the edit checked, then made.
    Returns the edit's `detached_uploads`: the files of the editor that its new content no longer
    links and no other message does (Zulip's, for a client to offer deleting them). The message's
    row is locked first, so that two edits of it are made one after the other (each recorded in its
    history).

    Emits: update_message to everyone who has the messages (users_told_of), each with their flags;
    for a move between channels, see send_channel_move_events; user_topic for the policies that
    follow a whole topic; the Notification Bot's notices (send_move_notices).
    """
    moving = topic is not None or stream_id is not None
    message = lock_message(message.id, with_channels=moving, to_channel_id=stream_id)
    edit = check_message_edit(
        acting_user,
        message,
        content=content,
        topic=topic,
        stream_id=stream_id,
        propagate_mode=propagate_mode,
        prev_content_sha256=prev_content_sha256,
    )
    now = timezone.now()
    entry = {"user_id": acting_user.id, "timestamp": int(now.timestamp())}
    event = {"type": "update_message", "user_id": acting_user.id, "edit_timestamp": entry["timestamp"],
             "message_id": message.id, "rendering_only": False}  # fmt: skip
    if message.stream_id is not None:
        event.update(stream_id=message.stream_id, stream_name=message.stream.name)
    moved = [message]
    old_stream, old_topic = message.stream, message.topic
    detached_uploads: list[dict] = []
    if edit.content is not None:
        changes, detached_uploads = _edit_content(message, edit.content, entry, now)
        event.update(changes)
    is_move = edit.topic is not None or edit.stream is not None
    if is_move:
        moved = _messages_to_move(acting_user, message, edit)
        new_stream = edit.stream or old_stream
        new_topic = old_topic if edit.topic is None else edit.topic
        target_had_messages = Message.objects.filter(same_topic("topic", new_topic), stream=new_stream).exists()
        event.update(_move(moved, message, edit, entry, now))
    else:
        message.edit_history = [entry, *(message.edit_history or [])]
    ids = sorted(m.id for m in moved)
    event["message_ids"] = ids
    change = channel_change(old_stream, edit.stream, ids) if edit.stream is not None else None
    if change is not None:
        holders = _holders(message, ids)
        move_rows(change, ids)
    message.save(update_fields=["content", "rendered_content", "has_link", "has_image", "has_attachment",
                                 "last_edit_time", "topic", "last_moved_time", "edit_history", "stream",
                                 "recipient"])  # fmt: skip
    save_moved_messages(message, moved)
    if change is not None:
        send_channel_move_events(change, event, holders, old_topic, ids)
        update_first_message_ids(change, ids)
    else:
        _send_events(message, moved, event)
    if is_move:
        moved_all = moved_all_visible_messages(acting_user, old_stream, old_topic, edit.propagate_mode)
        if moved_all:
            move_user_topics(
                old_stream,
                old_topic,
                new_stream,
                new_topic,
                losing_access=change.losing_access if change is not None else set(),
                target_had_messages=target_had_messages,
            )
        resolving = edit.resolve is not None
        if resolving and edit.stream is None and edit.content is None:
            send_resolve_notice(old_stream, edit.topic, edit.resolve, acting_user=acting_user)
        send_move_notices(
            Move(message, old_stream, old_topic, new_stream, new_topic, ids, moved_all, resolving),
            to_old_thread=send_notification_to_old_thread,
            to_new_thread=send_notification_to_new_thread,
            acting_user=acting_user,
        )
    return detached_uploads


def _holders(message: Message, message_ids: list[int]) -> dict[int, int]:
    """{user id: their flags for `message` (0 without a row)} for everyone with a row for any of the
    messages."""
    flags = dict(UserMessage.objects.filter(message=message).values_list("user_id", "flags"))
    user_ids = UserMessage.objects.filter(message_id__in=message_ids).values_list("user_id", flat=True).distinct()
    return {user_id: flags.get(user_id, 0) for user_id in user_ids}


def _edit_content(message: Message, content: str, entry: dict, now) -> tuple[dict, list[dict]]:
    """The new content rendered and stored on `message` (unsaved; `entry`, its history entry, gets
    the previous content), the recipients' mention and alert-word flags recomputed; the event's
    content fields, and the uploads the edit detached."""
    linkifiers = linkifier_rules(message.realm_id)
    rendered = render_content(message.sender, content, linkifiers)
    changes = {
        "orig_content": message.content,
        "orig_rendered_content": message.rendered_content,
        "content": content,
        "is_me_message": content.startswith("/me ") and "\n" not in content,
    }
    entry.update(prev_content=message.content, prev_rendered_content=message.rendered_content)
    message.content, message.rendered_content = content, rendered.html
    message.has_link, message.has_image = rendered.has_link, rendered.has_image
    files = message_content_saved.call_merged(message)  # the uploaded files it links now
    message.has_attachment = bool(files.get("has_attachment"))
    message.has_image = message.has_image or bool(files.get("has_image"))
    message.rendered_content = changes["rendered_content"] = files.get("rendered_content", rendered.html)
    message.last_edit_time = now
    rows = list(UserMessage.objects.filter(message=message))
    receivers = {row.user_id for row in rows}
    participants = wildcard_topic_participants(message.sender, message.stream, message.topic, rendered)
    if message.stream is not None and (rendered.stream_wildcard or rendered.topic_wildcard):
        subscriber_count = len(subscriber_ids_by_stream([message.stream_id])[message.stream_id])
        check_wildcard_mentions(message.sender, rendered, subscriber_count, participants)
    mentions = mention_flags(receivers, rendered, participants)
    others = receivers - {message.sender_id}
    alerted = alerted_user_ids(content, alert_word_users(message.realm_id, others) if others else {})
    recomputed = UserMessage.MENTION_BITS | UserMessage.HAS_ALERT_WORD
    changed: dict[int, list[int]] = defaultdict(list)  # {their new mention and alert bits: row ids}
    newly_mentioned = []
    for row in rows:
        bits = mentions[row.user_id] | (UserMessage.HAS_ALERT_WORD if row.user_id in alerted else 0)
        if bits & UserMessage.MENTION_BITS and not row.flags & (UserMessage.MENTION_BITS | UserMessage.READ):
            newly_mentioned.append(row.user_id)
        if bits != row.flags & recomputed:
            changed[bits].append(row.id)
    # Only these bits written, in the database: the others as they are then (the load QA pass: a
    # `read` committed by a concurrent mark-as-read between the read above and a write of the whole
    # value was undone).
    for bits, ids in changed.items():
        for start in range(0, len(ids), 5000):
            rows_changed = UserMessage.objects.filter(id__in=ids[start : start + 5000])
            rows_changed.update(flags=F("flags").bitand(~recomputed).bitor(bits))
    # As Zulip's maybe_enqueue_notifications_for_message_update: not for a direct message (its
    # people were notified of it), nor for whoever a mention already notified.
    newly_mentioned = [user_id for user_id in newly_mentioned if user_id != message.sender_id]
    if message.stream_id is not None and newly_mentioned:
        mentions_added.call(message, newly_mentioned)
    return changes, files.get("detached_uploads", [])


def _move(moved: list[Message], message: Message, edit: MessageEdit, entry: dict, now) -> dict:
    """The messages' new topic and channel (unsaved), each move in its history (Zulip's prev_topic
    and topic, prev_stream and stream); the event's fields of the move."""
    old_topic = message.topic
    recipient = get_recipient(Recipient.Type.STREAM, edit.stream.id) if edit.stream is not None else None
    changes = {"orig_subject": old_topic, "propagate_mode": edit.propagate_mode}
    if edit.topic is not None:
        changes.update(subject=edit.topic, topic_links=linkifier_rules(message.realm_id).topic_links(edit.topic))
    if edit.stream is not None:
        changes["new_stream_id"] = edit.stream.id
    # Marking the topic resolved or unresolved is not a move that clients show (last_moved_timestamp).
    resolving_only = edit.stream is None and edit.resolve is not None
    for each in moved:
        # The edited message's entry also holds its content edit, if any.
        record = entry if each.id == message.id else {"user_id": entry["user_id"], "timestamp": entry["timestamp"]}
        record = dict(record)
        if edit.topic is not None:
            record.update(prev_topic=each.topic, topic=edit.topic)
            each.topic = edit.topic
        if edit.stream is not None:
            record.update(prev_stream=each.stream_id, stream=edit.stream.id)
            each.stream, each.recipient = edit.stream, recipient
        each.edit_history = [record, *(each.edit_history or [])]
        if not resolving_only:
            each.last_moved_time = now
    return changes


def _send_events(message: Message, moved: list[Message], event: dict) -> None:
    """One event to everyone who has the messages; those who have the edited message get their
    flags for it, the others (subscribers who joined later) `read`, as Zulip's subscriber_info."""
    recipients = users_told_of(message.stream, [m.id for m in moved])
    flags = dict(UserMessage.objects.filter(message=message).values_list("user_id", "flags"))
    by_flags: dict[int, list[int]] = defaultdict(list)
    for user_id in recipients:
        by_flags[flags.get(user_id, UserMessage.READ)].append(user_id)
    for bits, user_ids in by_flags.items():
        send_event_on_commit(message.realm_id, {**event, "flags": UserMessage.flag_names(bits)}, user_ids)
