"""Email notifications of messages, as Zulip's missed-message emails: someone who is offline (no
presence ping saying they were active in the last OFFLINE_THRESHOLD_SECS) is emailed about these
messages, if they have not read them:
- a direct message, a personal or group mention: when `enable_offline_email_notifications` is on;
- a wildcard mention (@**all**, @**topic**): the same, and `wildcard_mentions_notify` (the
  channel's setting, else theirs), unless the conversation is muted for them (or they follow it);
- any message of a topic they follow: `enable_followed_topic_email_notifications`;
- any other message of a channel: the subscription's `email_notifications` (else their
  `enable_stream_email_notifications`, off by default), unless the conversation is muted for them.
The server's EMAIL_NOTIFICATIONS setting turns them all off.

How: the message's transaction queues one task, when someone but its sender has it unread and it is
a direct message or mentions them, and is a person who wants these emails, or follows its topic or
channel and wants those (a query or two, on indexes; sending stays cheap); the task worker
works out who is emailed (who_to_email) and records an EmailNotification for each, due after their
`email_notifications_batching_period_seconds`. Every EMAIL_CHECK_SECONDS the worker's job emails
each person whose first notification is due: one email per conversation, with every pending message
of theirs still unread (those read meanwhile are dropped unsent), `message_content_in_email_
notifications` deciding whether their content is in it. A mail server that is down keeps them
pending for the next run (a person's emails are sent in one transaction: if the server fails after
the first of several, that one is sent again).
"""

import logging
import smtplib
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.core.mail import templated_email
from apps.core.tasks import periodic, retried_task
from apps.email_notifications.models import EmailNotification
from apps.messages.actions.edit import DELETED_CONTENT
from apps.messages.hooks import mentions_added, message_sent
from apps.messages.models import Message, UserMessage
from apps.messages.recipients import direct_message_people
from apps.messages.rendering import channel_narrow
from apps.messages.selectors import muted_conversation_checker
from apps.presence.selectors import is_active_now
from apps.subscriptions.models import Subscription, UserTopic
from apps.subscriptions.topics import same_topic
from apps.users.models import User
from apps.users.settings_values import AutomaticAlwaysNever

logger = logging.getLogger("apps.email_notifications")

EMAIL_CHECK_SECONDS = 30
# A run of the job sends for this long at most; the rest waits for the next.
SEND_TIME_BUDGET_SECONDS = 20
MAX_ATTEMPTS = 6

DIRECT_MESSAGE, MENTION, WILDCARD_MENTION, FOLLOWED_TOPIC, CHANNEL = (
    "direct_message",
    "mention",
    "wildcard_mention",
    "followed_topic",
    "channel",
)


# --- in the request (the hook of apps.messages) -----------------------------------------------------


@message_sent.register
def queue_email_notifications(message: Message, flags: dict[int, int], *, external_notifications: bool) -> None:
    if not settings.EMAIL_NOTIFICATIONS or not external_notifications:
        return
    # Those who have it unread: of a direct message, all; of a channel's, those mentioned (looked at
    # first: a few of a big channel's people).
    mentions = 0 if message.stream_id is None else UserMessage.MENTION_BITS
    addressed = [
        uid
        for uid, bits in flags.items()
        if (not mentions or bits & mentions) and not bits & UserMessage.READ and uid != message.sender_id
    ]
    if (addressed and _people(addressed, enable_offline_email_notifications=True).exists()) or (
        message.stream_id is not None and _watchers(message).exists()
    ):
        schedule_email_notifications.enqueue(message.id)


@mentions_added.register
def queue_mention_emails(message: Message, user_ids: list[int]) -> None:
    if settings.EMAIL_NOTIFICATIONS and _people(user_ids, enable_offline_email_notifications=True).exists():
        schedule_email_notifications.enqueue(message.id, newly_mentioned=user_ids)


def _watchers(message: Message) -> QuerySet:
    """The ids of those but the sender who follow the message's topic or want an email about every
    message of its channel (what they muted is the worker's to see): one query, on indexes."""
    parts = [query.exclude(user_id=message.sender_id).values("user_id") for query in _channel_watchers(message)]
    return parts[0].union(*parts[1:])


def _people(user_ids: Iterable[int], **settings: bool) -> QuerySet[User]:
    """Those of these users who are active people (not bots) with these settings."""
    return User.objects.filter(id__in=user_ids, is_active=True, bot_type__isnull=True, **settings)


def _followers(message: Message) -> QuerySet[UserTopic]:
    """Who follows the message's topic and wants emails about it (active people)."""
    return UserTopic.objects.filter(
        same_topic("topic_name", message.topic),
        stream_id=message.stream_id,
        visibility_policy=UserTopic.VisibilityPolicy.FOLLOWED,
        user__is_active=True,
        user__bot_type__isnull=True,
        user__enable_followed_topic_email_notifications=True,
    )


def _channel_watchers(message: Message) -> tuple[QuerySet, ...]:
    """Those who follow the message's topic (_followers), and the active people subscribed to its
    channel who want an email about every message: the subscription says so, or says nothing and
    the person's `enable_stream_email_notifications` does (few: both are read on partial indexes)."""
    subscribed = Subscription.objects.filter(
        stream_id=message.stream_id, active=True, user__is_active=True, user__bot_type__isnull=True
    )
    wanting = User.objects.filter(realm_id=message.realm_id, enable_stream_email_notifications=True)
    return (
        _followers(message),
        subscribed.filter(email_notifications=True),
        subscribed.filter(email_notifications__isnull=True, user_id__in=wanting.values("id")),
    )


# --- in the task worker -----------------------------------------------------------------------------


@retried_task(max_attempts=MAX_ATTEMPTS)
def schedule_email_notifications(message_id: int, newly_mentioned: list[int] | None = None) -> dict[str, Any]:
    """Records who is to be emailed about the message (of those an edit `newly_mentioned`, if
    given), each due after their batching period.

    The message's row is locked meanwhile, as a deletion locks it first: a deletion under way is
    waited for (then the message is gone), one that comes later deletes these rows with it (the
    leaseqa QA pass: a direct message deleted right after it was sent failed the task, its rows
    naming a message no longer there)."""
    with transaction.atomic():
        message = Message.objects.select_for_update(no_key=True).filter(id=message_id).first()
        if message is None:
            return {"scheduled": 0}  # deleted meanwhile
        now = timezone.now()
        rows = [
            EmailNotification(
                user=user,
                message=message,
                trigger=trigger,
                scheduled_at=now + timedelta(seconds=user.email_notifications_batching_period_seconds),
            )
            for user, trigger in who_to_email(message, newly_mentioned)
        ]
        EmailNotification.objects.bulk_create(rows, ignore_conflicts=True)
    return {"scheduled": len(rows)}


def who_to_email(message: Message, newly_mentioned: list[int] | None = None) -> list[tuple[User, str]]:
    """(user, why they are emailed) of those to email about the message (see the module's docstring):
    of those who have it unread, the people it is addressed to (a direct message's, those it
    mentions), those who follow its topic and those who want every message of its channel (not
    everyone who has it: a channel may be large). With `newly_mentioned` (an edit's), only those of
    them whom the message did not concern without its mentions (not its topic's followers, nor
    those who want every message of its channel: they were emailed when it was sent)."""
    rows = (
        UserMessage.objects.filter(message=message).exclude(user_id=message.sender_id).values_list("user_id", "flags")
    )
    unread = {uid: bits for uid, bits in rows if not bits & UserMessage.READ}
    wanted = {uid for uid, bits in unread.items() if message.stream_id is None or bits & UserMessage.MENTION_BITS}
    followers, channel_emails = set(), set()
    if message.stream_id is not None:
        follows, *wants_channel = (query.values_list("user_id", flat=True) for query in _channel_watchers(message))
        followers = set(follows) & unread.keys()
        channel_emails = {uid for query in wants_channel for uid in query} & unread.keys()
    if newly_mentioned is not None:
        wanted = (wanted & set(newly_mentioned)) - followers - channel_emails
        followers, channel_emails = set(), set()
    if not wanted | followers | channel_emails:
        return []
    subscriptions = {}
    if message.stream_id is not None:
        subs = Subscription.objects.filter(stream_id=message.stream_id, user_id__in=wanted, active=True)
        subscriptions = {sub.user_id: sub for sub in subs}
    found = []
    for user in _people(wanted | followers | channel_emails).order_by("id"):
        trigger = _trigger(
            user, message, unread[user.id], subscriptions.get(user.id), user.id in followers, user.id in channel_emails
        )
        if trigger is not None and not is_active_now(user):
            found.append((user, trigger))
    return found


def _trigger(
    user: User, message: Message, bits: int, sub: Subscription | None, followed: bool, channel_email: bool
) -> str | None:
    offline_email = user.enable_offline_email_notifications
    if message.stream_id is None:
        return DIRECT_MESSAGE if offline_email else None
    if bits & UserMessage.MENTIONED:
        return MENTION if offline_email else None
    muted = None
    if bits & UserMessage.MENTION_BITS and offline_email:
        notify = sub.wildcard_mentions_notify if sub and sub.wildcard_mentions_notify is not None else None
        if notify is None:
            notify = user.wildcard_mentions_notify
        muted = muted_conversation_checker(user)(message.stream_id, message.topic)
        if (followed and user.enable_followed_topic_wildcard_mentions_notify) or (notify and not muted):
            return WILDCARD_MENTION
    if followed:
        return FOLLOWED_TOPIC
    if channel_email:
        if muted is None:
            muted = muted_conversation_checker(user)(message.stream_id, message.topic)
        return None if muted else CHANNEL
    return None


@periodic(EMAIL_CHECK_SECONDS)
def send_due_email_notifications() -> int:
    """Emails everyone whose first pending notification is due; returns how many emails were sent."""
    deadline = time.monotonic() + SEND_TIME_BUDGET_SECONDS
    due = EmailNotification.objects.filter(scheduled_at__lte=timezone.now())
    sent = 0
    for user_id in due.order_by("user_id").values_list("user_id", flat=True).distinct():
        try:
            sent += _email_user(user_id)
        except (smtplib.SMTPException, OSError) as exc:
            logger.warning("email notifications wait for the next run: the mail server failed (%r)", exc)
            break
        if time.monotonic() >= deadline:
            break
    return sent


@transaction.atomic
def _email_user(user_id: int) -> int:
    """Sends the user one email per conversation of their pending notifications still unread, and
    forgets them all; the rows stay locked meanwhile (another worker's run skips them). Returns how
    many emails were sent. An email that cannot be sent undoes the whole, for the next run."""
    rows = list(EmailNotification.objects.select_for_update(skip_locked=True).filter(user_id=user_id).order_by("id"))
    if not rows:
        return 0
    EmailNotification.objects.filter(id__in=[row.id for row in rows]).delete()
    user = User.objects.select_related("realm").filter(id=user_id, is_active=True).first()
    unread = UserMessage.objects.filter(user_id=user_id, message_id__in=[row.message_id for row in rows])
    unread_ids = {mid for mid, bits in unread.values_list("message_id", "flags") if not bits & UserMessage.READ}
    # As Zulip's handle_missedmessage_emails: none once the setting is off (even if they were
    # pending), and none of a message edited away ("(deleted)").
    if user is None or not unread_ids or user.realm.deactivated or not user.enable_offline_email_notifications:
        return 0
    messages = (
        Message.objects.filter(id__in=unread_ids)
        .exclude(content=DELETED_CONTENT)
        .select_related("sender", "stream", "recipient")
        .order_by("id")
    )
    conversations: dict[tuple, list[Message]] = defaultdict(list)
    for message in messages:
        conversations[_conversation(message)].append(message)
    triggers = {row.message_id: row.trigger for row in rows}
    for conversation in conversations.values():
        _send(user, conversation, {triggers[message.id] for message in conversation})
    return len(conversations)


def _realm_name_in_subject(user: User) -> bool:
    """The user's realm_name_in_email_notifications_policy: automatic, when their address has
    accounts in other organizations too (Zulip's include_realm_name_in_missedmessage_emails_subject)."""
    policy = user.realm_name_in_email_notifications_policy
    if policy != AutomaticAlwaysNever.AUTOMATIC:
        return policy == AutomaticAlwaysNever.ALWAYS
    others = User.objects.filter(delivery_email__iexact=user.delivery_email, is_active=True).exclude(id=user.id)
    return others.exists()


def _conversation(message: Message) -> tuple:
    if message.stream_id is not None:
        return ("channel", message.stream_id, message.topic.lower())
    # A person's one-to-one messages from different people share its recipient: its people tell.
    return ("direct", frozenset(direct_message_people(message)))


def _send(user: User, messages: list[Message], triggers: set[str]) -> None:
    first = messages[0]
    realm = user.realm
    if first.stream_id is not None:
        link = f"{realm.url}/{channel_narrow(first.stream_id, first.stream.name, first.topic)}"
        where = f"#{first.stream.name} > {first.topic}"
    else:
        others = sorted(direct_message_people(first) - {user.id})
        link = f"{realm.url}/#narrow/dm/{','.join(map(str, others))}-{'dm' if len(others) == 1 else 'group'}"
        names = sorted(User.objects.filter(id__in=others).values_list("full_name", flat=True))
        where = f"{'DMs' if len(others) == 1 else 'Group DMs'} with {', '.join(names)}"
    context = {
        "user": user,
        "realm": realm,
        "where": where,
        "link": link,
        "messages": messages,
        "show_content": user.message_content_in_email_notifications,
        "realm_in_subject": _realm_name_in_subject(user),
        "mentioned": bool(triggers & {MENTION, WILDCARD_MENTION}),
        "followed": triggers == {FOLLOWED_TOPIC},
        "channel": triggers <= {FOLLOWED_TOPIC, CHANNEL} and CHANNEL in triggers,
        "settings_link": f"{realm.url}/#settings/notifications",
    }
    try:
        templated_email("email_notifications/messages", context, user.delivery_email).send()
    except smtplib.SMTPRecipientsRefused as exc:  # this address, for good or for now: not retried
        logger.warning("the mail server refused the notification email to %s: %s", user.delivery_email, exc)
