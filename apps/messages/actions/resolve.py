"""The Notification Bot's notice that a topic was marked resolved or unresolved, as Zulip sends it
(zerver/actions/message_edit.py: maybe_send_resolve_topic_notifications).

A rename that only adds or removes the "✔ " prefix (no content or channel change) posts
"@_**Name|id** has marked this topic as resolved." (or "unresolved.") into the renamed topic,
whatever send_notification_to_new_thread says (that one only governs the "moved here" notice, which
a resolve never sends). Undoing within RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS deletes the previous
notice instead of posting another. The notice arrives read for the resolver and for everyone whose
resolved_topic_notice_auto_read_policy says so (Zulip's default: all but those following the topic).
"""

import re
from datetime import timedelta

from django.utils import timezone

from apps.messages.actions.delete_topic import do_delete_messages
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.send import do_send_message
from apps.messages.models import Message
from apps.messages.rendering import silent_mention
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.topics import RESOLVED_TOPIC_PREFIX, same_topic
from apps.users.models import User
from apps.users.settings_values import ResolvedTopicNoticeAutoRead

# Zulip's RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS.
RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS = 60
RESOLVED_NOTICE = "{user} has marked this topic as resolved."
UNRESOLVED_NOTICE = "{user} has marked this topic as unresolved."
# What the bot's previous resolve notice looks like (Zulip marks it with a message type of its own).
_NOTICE_RE = re.compile(r"@_\*\*[^\n]*\|\d+\*\* has marked this topic as (?:un)?resolved\.")


def resolve_change(old_topic: str, new_topic: str) -> str | None:
    """ "resolved" when `new_topic` is the unresolved `old_topic` marked resolved, "unresolved" when
    the reverse, else None: any other rename (even of a resolved topic, or one more mark on it) is
    no resolve, needs the permission to rename and sends no notice. As Zulip's
    build_message_edit_request, marks are counted as its `lstrip` does ("✔ ✔ x" is "x" resolved)."""
    prefix = RESOLVED_TOPIC_PREFIX
    if not old_topic.startswith(prefix) and new_topic.startswith(prefix) and new_topic.lstrip(prefix) == old_topic:
        return "resolved"
    if old_topic.startswith(prefix) and not new_topic.startswith(prefix) and old_topic.lstrip(prefix) == new_topic:
        return "unresolved"
    return None


def send_resolve_notice(stream: Stream, new_topic: str, change: str, *, acting_user: User) -> Message | None:
    """The notice of a rename that marked `stream`'s topic resolved or unresolved (`change`, see
    resolve_change), in the new topic; None when it undid a resolve notice sent within the grace
    period (deleted instead), or when the Notification Bot is deactivated.

    Emits: message (do_send_message); or delete_message (do_delete_messages) for an undo.
    """
    bot = do_create_notification_bot(acting_user.realm)
    if _undo_previous_notice(bot, stream, new_topic, acting_user) or not bot.is_active:
        return None
    text = (RESOLVED_NOTICE if change == "resolved" else UNRESOLVED_NOTICE).format(user=silent_mention(acting_user))
    unread = _unread_user_ids(stream, new_topic)
    readers = set(Subscription.objects.filter(stream=stream, active=True).values_list("user_id", flat=True))
    return do_send_message(
        bot,
        stream=stream,
        topic=new_topic,
        content=text,
        client="Internal",
        read_by=(readers - unread) | {acting_user.id},
        acting_user=None,
    )


def _undo_previous_notice(bot: User, stream: Stream, topic: str, acting_user: User) -> bool:
    """Zulip's maybe_delete_previous_resolve_topic_notification: when the topic's last message is a
    resolve notice sent less than the grace period ago, it is deleted (the rename undid it)."""
    last = Message.objects.filter(same_topic("topic", topic), stream=stream).order_by("-id").first()
    if last is None or last.sender_id != bot.id or not _NOTICE_RE.fullmatch(last.content):
        return False
    if timezone.now() - last.date_sent > timedelta(seconds=RESOLVE_TOPIC_UNDO_GRACE_PERIOD_SECONDS):
        return False
    do_delete_messages(stream, last.topic, [last.id], acting_user=acting_user)
    return True


def _unread_user_ids(stream: Stream, topic: str) -> set[int]:
    """Zulip's get_unread_user_ids_for_resolved_topic_notifications: the channel's active human
    subscribers whose resolved_topic_notice_auto_read_policy is "never", or "except_followed" and
    they follow the topic (read after the topic's policies moved with it)."""
    subscribers = User.objects.filter(
        id__in=Subscription.objects.filter(stream=stream, active=True).values("user_id"),
        is_active=True,
        bot_type__isnull=True,
    )
    policies = dict(subscribers.values_list("id", "resolved_topic_notice_auto_read_policy"))
    following = set(
        UserTopic.objects.filter(
            same_topic("topic_name", topic), stream=stream, visibility_policy=UserTopic.VisibilityPolicy.FOLLOWED
        ).values_list("user_id", flat=True)
    )
    return {
        user_id
        for user_id, policy in policies.items()
        if policy == ResolvedTopicNoticeAutoRead.NEVER
        or (policy == ResolvedTopicNoticeAutoRead.EXCEPT_FOLLOWED and user_id in following)
    }
