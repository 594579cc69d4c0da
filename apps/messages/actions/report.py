"""Reporting a message to the organization's moderators: POST /messages/{id}/report sends the report,
from the Notification Bot, to the organization's moderation request channel (Zulip's
send_message_report, with its texts)."""

import re

from apps.core.errors import JsonableError
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.send import TRUNCATED, do_send_message
from apps.messages.models import DirectMessageGroup, Message, Recipient
from apps.messages.rendering import silent_mention
from apps.messages.selectors import access_message
from apps.realms.limits import MAX_MESSAGE_LENGTH
from apps.subscriptions.topics import truncate_topic
from apps.users.models import User

# What a report may add, and how much of the reported message it quotes (Zulip's
# MAX_REPORT_MESSAGE_EXPLANATION_LENGTH and MAX_REPORT_MESSAGE_SNIPPET_LENGTH: room for the notes
# and 500 characters of the report's own text).
MAX_REPORT_EXPLANATION_LENGTH = 1000
MAX_REPORT_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_EXPLANATION_LENGTH - 500
# The reasons a report gives (`report_type`), with the names clients show (register's
# server_report_message_types, Zulip's feature level 435).
REPORT_TYPE_NAMES = {
    "spam": "Spam",
    "harassment": "Harassment",
    "inappropriate": "Inappropriate content",
    "norms": "Violates community norms",
    "other": "Other reason",
}
REPORT_TYPES = tuple(REPORT_TYPE_NAMES)

_FENCE = re.compile(r"^ {0,3}(`{3,})", re.MULTILINE)


def unused_fence(content: str) -> str:
    """A code fence longer than any in `content` (Zulip's get_unused_fence), so it quotes it whole."""
    return "`" * max([3, *(len(fence) + 1 for fence in _FENCE.findall(content))])


def _header(reporter: User, message: Message) -> str:
    reported = silent_mention(message.sender)
    if message.stream_id is not None:
        link = f"#**{message.stream.name}>{message.topic}@{message.id}**"
        return f"{silent_mention(reporter)} reported {link} sent by {reported}."
    if message.recipient.type == Recipient.Type.DIRECT_MESSAGE_GROUP:
        user_ids = DirectMessageGroup.objects.get(id=message.recipient.type_id).user_ids
        people = [silent_mention(user) for user in User.objects.filter(id__in=user_ids).order_by("id")]
        others, last = ", ".join(people[:-1]), people[-1]
        return f"{silent_mention(reporter)} reported a DM sent by {reported} to {others}, and {last}."
    return f"{silent_mention(reporter)} reported a DM sent by {reported}."


def check_report_message(reporter: User, message_id: int, report_type: str, description: str) -> Message:
    """Report a message the reporter may see: "other" needs an explanation; refused where the
    organization has no moderation request channel (checked in Zulip's order, before the message).
    Returns the report.

    Emits: message (do_send_message) to the channel's subscribers."""
    if report_type == "other" and not description:
        raise JsonableError("An explanation is required.")
    channel = reporter.realm.moderation_request_channel
    if channel is None:
        raise JsonableError("Message reporting is not enabled in this organization.")
    message, _ = access_message(reporter, message_id)
    quoted = message.content
    if len(quoted) > MAX_REPORT_SNIPPET_LENGTH:
        quoted = quoted[: MAX_REPORT_SNIPPET_LENGTH - len(TRUNCATED)] + TRUNCATED
    fence = unused_fence(quoted)
    content = (
        f"{_header(reporter, message)}\n"
        f"- Reason: **{report_type}**\n"
        f"- Notes:\n"
        f"```quote\n{description}\n```\n"
        f"{fence} spoiler **Message sent by {silent_mention(message.sender)}**\n"
        f"{quoted}\n"
        f"{fence}"
    )
    bot = do_create_notification_bot(reporter.realm)
    topic = truncate_topic(f"{message.sender.full_name}'s moderation requests")
    return do_send_message(bot, stream=channel, topic=topic, content=content, client="Internal", acting_user=None)
