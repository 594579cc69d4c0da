"""What a push notification carries, in the three forms Zulip's mobile apps read (as Zulip's
zerver/lib/push_notifications.py builds them): the FCM data payload and the APNs payload of tokens
registered the legacy way (POST /users/me/{android_gcm_reg_id,apns_device_token}), and the payload of
devices registered for end-to-end encrypted notifications (zulip-flutter's NotifPayload).

A `message` notification tells who wrote what where; a `remove` notification takes the
notifications of messages the user has read off their phones.
"""

from dataclasses import dataclass, field
from typing import Any

import lxml.html
from django.conf import settings

from apps.groups.models import UserGroup
from apps.groups.selectors import member_ids_by_group
from apps.messages.models import Message
from apps.messages.rendering import live_mentions
from apps.messages.selectors import dm_users_by_recipient
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME
from apps.users.access import INACCESSIBLE_USER_NAME, inaccessible_avatar_url, inaccessible_user_ids, unknown_user_email
from apps.users.models import User
from apps.users.selectors import absolute_avatar_url, api_email

# Notification text longer than this is cut, with an ellipsis (Zulip's truncate_content).
MAX_CONTENT_LENGTH = 200
# A removal names at most this many messages, the newest (APNs payloads are limited to 4 kB).
MAX_REMOVED_MESSAGE_IDS = 200

# Why a notification is sent (Zulip's NotificationTriggers), in order of precedence.
DIRECT_MESSAGE = "direct_message"
MENTION = "mentioned"
TOPIC_WILDCARD_MENTION = "topic_wildcard_mentioned"
STREAM_WILDCARD_MENTION = "stream_wildcard_mentioned"
FOLLOWED_TOPIC = "followed_topic_push_notify"
STREAM_PUSH = "stream_push_notify"
WILDCARD_TRIGGERS = (TOPIC_WILDCARD_MENTION, STREAM_WILDCARD_MENTION)


@dataclass
class Notification:
    """One notification for one user, in each form: `fcm` and `apns` for legacy tokens (and
    `fcm_options`), `e2ee` for devices registered for encrypted notifications."""

    fcm: dict[str, Any]
    apns: dict[str, Any]
    e2ee: dict[str, Any]
    fcm_options: dict[str, Any] = field(default_factory=lambda: {"priority": "high"})


def base_payload(user: User) -> dict[str, Any]:
    """What every legacy notification says about whose it is (the app may hold several accounts)."""
    realm = user.realm
    return {
        "server": settings.EXTERNAL_HOST,
        "realm_id": realm.id,
        "realm_uri": realm.url,
        "realm_url": realm.url,
        "realm_name": realm.name,
        "user_id": user.id,
    }


def mobile_push_content(rendered_html: str) -> str:
    """The message as plain text, as Zulip's get_mobile_push_content: emoji as their characters,
    images by their alt text (custom emoji too), quotes marked with "> ", ordered lists numbered, a
    spoiler by its header and "(…)" (its hidden part never shows on a lock screen)."""
    if settings.PUSH_NOTIFICATION_REDACT_CONTENT:
        return "New message"
    if not rendered_html.strip():
        return ""
    root = lxml.html.fragment_fromstring(rendered_html, create_parent=True)
    for spoiler in root.find_class("spoiler-block"):
        headers = spoiler.find_class("spoiler-header")
        header = headers[0].text_content().strip() if headers else ""
        shown = lxml.html.Element("p")
        shown.text = f"{header} (…)" if header else "(…)"
        shown.tail = spoiler.tail
        spoiler.getparent().replace(spoiler, shown)
    for emoji in root.find_class("emoji"):
        codes = [c.removeprefix("emoji-") for c in emoji.classes if c.startswith("emoji-")]
        if emoji.tag == "span" and codes:
            try:
                emoji.text = "".join(chr(int(part, 16)) for part in codes[0].split("-"))
            except (ValueError, OverflowError):
                continue
    for numbered in root.iter("ol"):
        start = int(numbered.get("start", "1")) if numbered.get("start", "1").isdigit() else 1
        for number, item in enumerate(numbered.findall("li"), start=start):
            item.text = f"{number}. " + (item.text or "").lstrip()
    for image in root.iter("img"):
        image.tail = (image.get("alt") or "") + (image.tail or "")
    for quote in root.iter("blockquote"):
        lines = [line for line in quote.text_content().splitlines() if line.strip()]
        quoted = lxml.html.Element("p")
        quoted.text = "".join(f"> {line}\n" for line in lines)
        quoted.tail = quote.tail
        quote.getparent().replace(quote, quoted)
    return root.text_content().strip()


def truncated(content: str) -> tuple[str, bool]:
    if len(content) <= MAX_CONTENT_LENGTH:
        return content, False
    return content[:MAX_CONTENT_LENGTH] + "…", True


def mentioned_group(user: User, message: Message) -> UserGroup | None:
    """The group whose mention notifies the user of the message, as Zulip's
    get_user_group_mentions_data: none if the message mentions them by name, else the smallest
    group it mentions (not silently) that they are in, through subgroups."""
    user_ids, group_ids = live_mentions(message.rendered_content)
    if user.id in user_ids:
        return None
    members = member_ids_by_group(group_ids)
    theirs = [(len(member_ids), group_id) for group_id, member_ids in members.items() if user.id in member_ids]
    return UserGroup.objects.filter(id=min(theirs)[1]).first() if theirs else None


@dataclass(frozen=True)
class Sender:
    """Who wrote the message, as the notified user may know them: "Unknown user" for a guest the
    organization does not let see them, as Zulip's (the push QA pass: the name, address and picture
    of someone GET /users/{id} refused them were in their notifications)."""

    id: int
    full_name: str
    email: str
    avatar_url: str

    @classmethod
    def of(cls, message: Message, user: User) -> "Sender":
        sender = message.sender
        if sender.id in inaccessible_user_ids(user, [sender.id]):
            avatar = inaccessible_avatar_url()
            if not avatar.startswith(("https://", "http://")):  # the server's static file, not a CDN's
                avatar = user.realm.url + avatar
            return cls(sender.id, INACCESSIBLE_USER_NAME, unknown_user_email(user.realm, sender.id), avatar)
        return cls(sender.id, sender.full_name, api_email(sender), absolute_avatar_url(sender))


def message_notification(user: User, message: Message, trigger: str) -> Notification:
    sender = Sender.of(message, user)
    content, was_cut = truncated(mobile_push_content(message.rendered_content))
    common = {**base_payload(user), "sender_id": sender.id, "sender_email": sender.email}
    common["time"] = int(message.date_sent.timestamp())
    group = mentioned_group(user, message) if trigger == MENTION else None
    # In every form, since Zulip's feature level 76.
    group_fields = {"mentioned_user_group_id": group.id, "mentioned_user_group_name": group.name} if group else {}
    common.update(group_fields)
    e2ee: dict[str, Any] = {
        "type": "message",
        "realm_url": user.realm.url,
        "realm_name": user.realm.name,
        "user_id": user.id,
        "sender_id": sender.id,
        "sender_avatar_url": sender.avatar_url,
        "sender_full_name": sender.full_name,
        "message_id": message.id,
        "time": common["time"],
        "content": content,
    }
    e2ee.update(group_fields)
    people: list[User] = []
    if message.stream_id is not None:
        channel = message.stream.name
        topic = message.topic or EMPTY_TOPIC_DISPLAY_NAME  # as Zulip's get_topic_display_name
        common.update(recipient_type="stream", stream=channel, stream_id=message.stream_id, topic=topic)
        # The topic's name as people read it, as the legacy forms (the app titles the notification
        # with it: "#sandbox > null" for the empty topic: the push QA pass).
        e2ee.update(recipient_type="channel", channel_id=message.stream_id, channel_name=channel, topic=topic)
        title = f"#{channel} > {topic}"
    else:
        people = dm_users_by_recipient([message])[(message.recipient_id, message.sender_id)]
        common["recipient_type"] = "private"
        if len(people) > 2:
            common["pm_users"] = ",".join(str(person.id) for person in people)
        e2ee.update(recipient_type="direct", recipient_user_ids=[person.id for person in people])
        title = ", ".join(sorted(p.full_name for p in people)) if len(people) > 2 else sender.full_name
    fcm = {**common, "event": "message", "zulip_message_id": message.id, "content": content}
    fcm.update(content_truncated=was_cut, sender_full_name=sender.full_name, sender_avatar_url=sender.avatar_url)
    apns = {
        "alert": {"title": title, "subtitle": _apns_subtitle(sender, trigger, people, message, group), "body": content},
        "sound": "default",
        "badge": 0,
        "custom": {"zulip": {**common, "message_ids": [message.id]}},
    }
    return Notification(fcm=fcm, apns=apns, e2ee=e2ee)


def _apns_subtitle(sender: Sender, trigger: str, people: list[User], message: Message, group: UserGroup | None) -> str:
    if trigger == MENTION:
        return f"{sender.full_name} mentioned @{group.name}:" if group else f"{sender.full_name} mentioned you:"
    if trigger in WILDCARD_TRIGGERS:
        return f"{sender.full_name} mentioned everyone:"
    if message.stream_id is None and len(people) <= 2:
        return ""
    return f"{sender.full_name}:"


def removal_notification(user: User, message_ids: list[int]) -> Notification:
    """Takes these messages' notifications off the user's phones (the newest 200 of them)."""
    message_ids = sorted(message_ids)[-MAX_REMOVED_MESSAGE_IDS:]
    listed = ",".join(str(mid) for mid in message_ids)
    fcm = {**base_payload(user), "event": "remove", "zulip_message_ids": listed, "zulip_message_id": message_ids[0]}
    apns = {"badge": 0, "custom": {"zulip": {**base_payload(user), "event": "remove", "zulip_message_ids": listed}}}
    e2ee = {"type": "remove", "realm_url": user.realm.url, "realm_name": user.realm.name, "user_id": user.id}
    e2ee["message_ids"] = message_ids
    return Notification(fcm=fcm, apns=apns, e2ee=e2ee, fcm_options={"priority": "normal"})


def test_notification(user: User, now: int) -> Notification:
    """What POST /mobile_push/test_notification and `send_test_push` send (Zulip's `test` event)."""
    payload = {**base_payload(user), "event": "test", "time": now}
    realm = user.realm
    body = f"This is a test notification from {realm.name} ({realm.url})."
    apns = {"alert": {"title": "Test notification", "body": body}, "sound": "default", "custom": {"zulip": payload}}
    e2ee = {"type": "test", "realm_url": realm.url, "realm_name": realm.name, "user_id": user.id, "time": now}
    return Notification(fcm=payload, apns=apns, e2ee=e2ee)
