"""Messages' part of the event system: the "message", "update_message_flags", "starred_messages",
"muted_users" and "alert_words" initial state, and how message and typing events adapt to a queue's
options."""

from apps.events.backends import takes_deletions_one_by_one
from apps.events.registry import (
    QueueOptions,
    StateContext,
    event_filter,
    event_transform,
    initial_state,
    on_queue_registered,
)
from apps.messages.actions.report import REPORT_TYPE_NAMES
from apps.messages.actions.send import do_listen_to_public_channels
from apps.messages.emoji import EMOJI_DATA_PATH
from apps.messages.newest import max_message_id
from apps.messages.recent_conversations import recent_private_conversations
from apps.messages.selectors import (
    alert_words_of,
    muted_users_of,
    starred_message_ids,
)
from apps.messages.unread import unread_messages
from apps.subscriptions.topics import is_resolved, topic_for_client, topic_from_narrow, topic_key


@initial_state("message")
def message_state(context: StateContext) -> dict:
    return {"max_message_id": max_message_id(context.user)}


@initial_state("update_message_flags")
def unread_state(context: StateContext) -> dict:
    # As in Zulip, unread counts come when the "message" type is fetched too (clients need both).
    if not context.fetches("message"):
        return {}
    allow_empty_topic_name = context.options.client_capabilities.get("empty_topic_name", False)
    return {"unread_msgs": unread_messages(context.user, allow_empty_topic_name=allow_empty_topic_name)}


@initial_state("realm")
def emoji_data_state(context: StateContext) -> dict:
    """Where clients read the server's emoji names (apps.messages.views.conversation.EmojiDataView),
    and the reasons a message report may give."""
    return {
        "server_emoji_data_url": f"{context.user.realm.url}{EMOJI_DATA_PATH}",
        "server_report_message_types": [{"key": key, "name": name} for key, name in REPORT_TYPE_NAMES.items()],
    }


@initial_state("recent_private_conversations")
def recent_conversations_state(context: StateContext) -> dict:
    return {"recent_private_conversations": recent_private_conversations(context.user)}


@initial_state("starred_messages")
def starred_state(context: StateContext) -> dict:
    return {"starred_messages": starred_message_ids(context.user)}


@initial_state("muted_users")
def muted_users_state(context: StateContext) -> dict:
    return {"muted_users": muted_users_of(context.user)}


@initial_state("alert_words")
def alert_words_state(context: StateContext) -> dict:
    # Always a list, empty for none: the Zulip mobile app requires the key.
    return {"alert_words": alert_words_of(context.user)}


@event_transform("message")
def adapt_message_event(event: dict, options: QueueOptions) -> dict:
    event = {key: value for key, value in event.items() if key != "all_public_streams"}
    message = dict(event["message"])
    raw_content, gravatar = message.pop("raw_content"), message.pop("gravatar")
    if not options.apply_markdown:
        message["content"], message["content_type"] = raw_content, "text/x-markdown"
    if options.client_gravatar and gravatar:
        message["avatar_url"] = None
    if message["type"] == "stream":
        allow_empty_topic_name = options.client_capabilities.get("empty_topic_name", False)
        message["subject"] = topic_for_client(message["subject"], allow_empty_topic_name=allow_empty_topic_name)
    return {**event, "message": message}


@on_queue_registered
def remember_public_channel_listener(user, options: QueueOptions) -> None:
    if options.all_public_streams:
        do_listen_to_public_channels(user, acting_user=user)


@event_filter("message")
def message_matches_queue_narrow(event: dict, options: QueueOptions) -> bool:
    """A queue registered with a narrow shows the messages it matches (the terms POST /register
    accepts: channel, topic, sender, is); a message sent only for `all_public_streams` queues
    shows only there."""
    if event.get("all_public_streams") and not options.all_public_streams:
        return False
    message, flags = event["message"], event["flags"]
    for operator, operand, negated in options.narrow:
        if _term_matches(operator, operand.lower(), message, flags) == negated:
            return False
    return True


def _term_matches(operator: str, operand: str, message: dict, flags: list[str]) -> bool:
    is_channel = message["type"] == "stream"
    if operator in ("stream", "channel"):
        return is_channel and operand in (message["display_recipient"].lower(), str(message["stream_id"]))
    if operator == "topic":
        # The operand is lower-cased: "General Chat" names the empty topic here too.
        return is_channel and topic_key(message["subject"]) in (topic_key(operand), topic_from_narrow(operand))
    if operator == "sender":
        return operand in (message["sender_email"].lower(), str(message["sender_id"]))
    # "is", as Zulip's build_narrow_predicate: an operand it does not filter on matches everything.
    if operand in ("dm", "private"):
        return not is_channel
    if operand in ("mentioned", "alerted"):
        return "mentioned" in flags
    if operand == "starred":
        return "starred" in flags
    if operand == "unread":
        return "read" not in flags
    if operand == "resolved":
        return is_channel and is_resolved(message["subject"])
    return True


@event_transform("delete_message")
def adapt_delete_message_event(event: dict, options: QueueOptions) -> dict | list[dict]:
    """Clients without the `bulk_message_deletion` capability take one event per message, with
    `message_id` (Zulip splits them the same way)."""
    if not takes_deletions_one_by_one(options):
        return event
    single = {key: value for key, value in event.items() if key not in ("message_ids", "span")}
    pieces = [{**single, "message_id": message_id} for message_id in event["message_ids"]]
    if "span" in event:
        # Stored once, as the last of the ids the pieces take (apps.events.backends.deletion_span).
        first = event["id"] - event["span"] + 1
        for offset, piece in enumerate(pieces):
            piece["id"] = first + offset
    return pieces


@event_filter("typing")
def typing_for_queue(event: dict, options: QueueOptions) -> bool:
    """Typing in channels is shown to clients that declared the stream_typing_notifications capability."""
    return event["message_type"] != "stream" or options.client_capabilities.get("stream_typing_notifications", False)


@event_transform("typing")
def adapt_typing_event(event: dict, options: QueueOptions) -> dict:
    if event["message_type"] != "stream":
        return event
    allow_empty_topic_name = options.client_capabilities.get("empty_topic_name", False)
    return {**event, "topic": topic_for_client(event["topic"], allow_empty_topic_name=allow_empty_topic_name)}


@event_transform("typing_edit_message")
def adapt_edit_typing_event(event: dict, options: QueueOptions) -> dict:
    recipient = event["recipient"]
    if recipient["type"] != "channel":
        return event
    allow_empty_topic_name = options.client_capabilities.get("empty_topic_name", False)
    topic = topic_for_client(recipient["topic"], allow_empty_topic_name=allow_empty_topic_name)
    return {**event, "recipient": {**recipient, "topic": topic}}


@event_transform("update_message")
def adapt_update_message_event(event: dict, options: QueueOptions) -> dict:
    """A moved topic named for the client (the empty topic's name for older clients); a move to
    another channel alone has orig_subject and no subject."""
    if "orig_subject" not in event:
        return event
    allow_empty_topic_name = options.client_capabilities.get("empty_topic_name", False)
    names = {key: event[key] for key in ("orig_subject", "subject") if key in event}
    return {**event, **{key: topic_for_client(name, allow_empty_topic_name=allow_empty_topic_name)
                        for key, name in names.items()}}  # fmt: skip
