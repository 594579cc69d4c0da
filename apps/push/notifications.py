"""Push notifications of messages, sent by the task worker (apps/core/tasks.py).

When a message is sent in an organization where someone has a phone registered, one task is queued
in the message's transaction (queue_message_notifications); the worker works out who is notified
and why (who_to_notify, Zulip's rules below), and queues one task per person, which sends to their
tokens and devices through the push backend and remembers the notification (ActivePushNotification).
When that person reads the message, it is deleted, or moved where they may not read it, a `remove`
notification takes it off their phones. Sending never happens in a request, and a push service that
is down is tried again later.

Who is notified, for a message they have not read (a muted sender's arrives read) and did not send,
when they are a person (not a bot) with a registered token or device:
- a direct message, a personal or group mention: when `enable_offline_push_notifications` is on;
- a wildcard mention (@**all**, @**topic**): the same, and `wildcard_mentions_notify` (the
  channel's setting, else theirs), unless the conversation is muted for them;
- a followed topic: `enable_followed_topic_push_notifications`;
- any other message of a channel: the channel's `push_notifications` (else their
  `enable_stream_push_notifications`), unless the conversation is muted for them.
Someone active (a presence ping saying so in the last OFFLINE_THRESHOLD_SECS) is notified only with
`enable_online_push_notifications` on (on by default, as in Zulip).
"""

import logging
from collections import defaultdict
from typing import Any

from django.db import transaction

from apps.core.tasks import retried_task
from apps.messages.hooks import mentions_added, message_sent, messages_deleting, messages_read, messages_withdrawn
from apps.messages.models import Message, UserMessage
from apps.messages.selectors import muted_conversation_checker
from apps.presence.selectors import is_active_now
from apps.push import payloads
from apps.push.actions import do_remove_refused
from apps.push.backends import push_backend
from apps.push.models import ActivePushNotification, Device, PushDeviceToken
from apps.push.selectors import push_targets, realm_has_push_devices
from apps.subscriptions.models import Subscription, UserTopic
from apps.subscriptions.topics import same_topic
from apps.users.models import User

logger = logging.getLogger("apps.push")

# Attempts of a notification while the push service is down (the waits add up to about 10 minutes:
# a later notification is of little use).
MAX_ATTEMPTS = 6


# --- in the request (the hooks of apps.messages) ---------------------------------------------------


@message_sent.register
def queue_message_notifications(message: Message, flags: dict[int, int], *, external_notifications: bool) -> None:
    if not external_notifications:
        return
    unread_by_others = any(uid != message.sender_id and not bits & UserMessage.READ for uid, bits in flags.items())
    if unread_by_others and realm_has_push_devices(message.realm_id):
        send_message_notifications.enqueue(message.id)


@mentions_added.register
def queue_mention_notifications(message: Message, user_ids: list[int]) -> None:
    if realm_has_push_devices(message.realm_id):
        send_message_notifications.enqueue(message.id, newly_mentioned=user_ids)


@messages_read.register
def queue_removals_of_read(user: User, message_ids: list[int] | None) -> None:
    rows = ActivePushNotification.objects.filter(user=user)
    _queue_removals(rows if message_ids is None else rows.filter(message_id__in=message_ids))


@messages_deleting.register
def queue_removals_of_deleted(message_ids: list[int]) -> None:
    _queue_removals(ActivePushNotification.objects.filter(message_id__in=message_ids))


@messages_withdrawn.register
def queue_removals_of_withdrawn(user_ids: list[int], message_ids: list[int]) -> None:
    _queue_removals(ActivePushNotification.objects.filter(user_id__in=user_ids, message_id__in=message_ids))


def _queue_removals(rows) -> None:
    """These notifications come off their people's phones (one task per person)."""
    by_user: dict[int, list[int]] = defaultdict(list)
    for user_id, message_id in rows.values_list("user_id", "message_id"):
        by_user[user_id].append(message_id)
    if by_user:
        rows.delete()
    for user_id, notified in by_user.items():
        send_removal_notification.enqueue(user_id, notified)


# --- in the task worker -----------------------------------------------------------------------------


@retried_task(max_attempts=MAX_ATTEMPTS)
def send_message_notifications(message_id: int, newly_mentioned: list[int] | None = None) -> dict[str, Any]:
    """Works out who is notified of the message (of those an edit `newly_mentioned`, if given), and
    queues a notification for each."""
    message = Message.objects.select_related("sender", "stream", "realm").filter(id=message_id).first()
    if message is None:
        return {"notified": 0}  # deleted meanwhile
    triggers = who_to_notify(message, newly_mentioned)
    for user_id, trigger in triggers.items():
        send_message_notification.enqueue(user_id, message_id, trigger)
    return {"notified": len(triggers)}


def who_to_notify(message: Message, newly_mentioned: list[int] | None = None) -> dict[int, str]:
    """{user id: why they are notified} (see the module's docstring). With `newly_mentioned` (an
    edit's), only those of them whom the message did not notify without its mentions."""
    with_devices = PushDeviceToken.objects.values("user_id").union(
        Device.objects.filter(push_token_id__isnull=False).values("user_id")
    )
    rows = UserMessage.objects.filter(message=message, user_id__in=with_devices).exclude(user_id=message.sender_id)
    if newly_mentioned is not None:
        rows = rows.filter(user_id__in=newly_mentioned)
    rows = rows.values_list("user_id", "flags")
    flags = {uid: bits for uid, bits in rows if not bits & UserMessage.READ}
    if not flags:
        return {}
    users = {
        u.id: u
        for u in User.objects.filter(id__in=flags, is_active=True, bot_type__isnull=True).select_related("realm")
    }
    subscriptions, policies = {}, {}
    if message.stream_id is not None:
        subs = Subscription.objects.filter(stream_id=message.stream_id, user_id__in=users, active=True)
        subscriptions = {sub.user_id: sub for sub in subs}
        topic_policies = UserTopic.objects.filter(
            same_topic("topic_name", message.topic), stream_id=message.stream_id, user_id__in=users
        )
        policies = dict(topic_policies.values_list("user_id", "visibility_policy"))
    triggers = {}
    for uid, user in users.items():
        trigger = _trigger(user, message, flags[uid], subscriptions.get(uid), policies.get(uid))
        if newly_mentioned is not None and _trigger(
            user, message, flags[uid] & ~UserMessage.MENTION_BITS, subscriptions.get(uid), policies.get(uid)
        ):
            continue  # notified when it was sent (Zulip's stream_push_user_ids)
        if trigger is not None and (user.enable_online_push_notifications or not is_active_now(user)):
            triggers[uid] = trigger
    return triggers


def _trigger(user: User, message: Message, bits: int, sub: Subscription | None, policy: int | None) -> str | None:
    offline_push = user.enable_offline_push_notifications
    if message.stream_id is None:
        return payloads.DIRECT_MESSAGE if offline_push else None
    if bits & UserMessage.MENTIONED:
        return payloads.MENTION if offline_push else None
    muted = muted_conversation_checker(user)(message.stream_id, message.topic)
    followed = policy == UserTopic.VisibilityPolicy.FOLLOWED
    wildcards_notify = sub.wildcard_mentions_notify if sub and sub.wildcard_mentions_notify is not None else None
    if wildcards_notify is None:
        wildcards_notify = user.wildcard_mentions_notify
    # A wildcard mention in a followed topic notifies by its own setting (Zulip's
    # enable_followed_topic_wildcard_mentions_notify), not by following alone.
    followed_wildcards = followed and user.enable_followed_topic_wildcard_mentions_notify
    if offline_push and not muted and (wildcards_notify or followed_wildcards):
        if bits & UserMessage.TOPIC_WILDCARD_MENTIONED:
            return payloads.TOPIC_WILDCARD_MENTION
        if bits & UserMessage.STREAM_WILDCARD_MENTIONED:
            return payloads.STREAM_WILDCARD_MENTION
    if followed and user.enable_followed_topic_push_notifications:
        return payloads.FOLLOWED_TOPIC
    channel_push = sub.push_notifications if sub and sub.push_notifications is not None else None
    if channel_push is None:
        channel_push = user.enable_stream_push_notifications
    if channel_push and sub is not None and not muted:
        return payloads.STREAM_PUSH
    return None


@retried_task(max_attempts=MAX_ATTEMPTS)
def send_message_notification(user_id: int, message_id: int, trigger: str) -> dict[str, Any]:
    """Sends one person the notification of one message, once: not if they read it meanwhile."""
    user = User.objects.select_related("realm").filter(id=user_id, is_active=True).first()
    message = Message.objects.select_related("sender", "stream", "realm").filter(id=message_id).first()
    if user is None or message is None:
        return {"sent": 0}
    tokens, devices = push_targets(user)
    if not (tokens or devices) or not _remember_unread_notification(user_id, message_id):
        return {"sent": 0}
    try:
        result = push_backend().send(user, tokens, devices, payloads.message_notification(user, message, trigger))
    except BaseException:
        ActivePushNotification.objects.filter(user_id=user_id, message_id=message_id).delete()
        raise
    do_remove_refused(result)
    return {"sent": result.sent}


@transaction.atomic
def _remember_unread_notification(user_id: int, message_id: int) -> bool:
    """Whether to send the notification: the message is still unread and was not notified yet (a
    second run of the task, after a worker was killed having sent it, sends nothing); if so, it is
    remembered, before sending (forgotten again if sending fails, so that the retry sends it).
    The user's row of the message is locked meanwhile, so that reading it either happens first (no
    notification) or finds the notification to remove."""
    rows = UserMessage.objects.select_for_update().filter(user_id=user_id, message_id=message_id)
    bits = rows.values_list("flags", flat=True).first()
    if bits is None or bits & UserMessage.READ:
        return False
    _, created = ActivePushNotification.objects.get_or_create(user_id=user_id, message_id=message_id)
    return created


@retried_task(max_attempts=MAX_ATTEMPTS)
def send_removal_notification(user_id: int, message_ids: list[int]) -> dict[str, Any]:
    """Takes the notifications of these messages off the person's phones."""
    user = User.objects.select_related("realm").filter(id=user_id, is_active=True).first()
    if user is None:
        return {"sent": 0}
    tokens, devices = push_targets(user)
    if not (tokens or devices):
        return {"sent": 0}
    result = push_backend().send(user, tokens, devices, payloads.removal_notification(user, message_ids))
    do_remove_refused(result)
    return {"sent": result.sent}
