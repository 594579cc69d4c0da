"""Sending messages: what is sent is checked, rendered and its recipients' flags worked out first;
then one transaction stores the message and a row for each recipient, and announces it."""

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.errors import JsonableError, MissingArgumentError
from apps.events.publish import send_event_on_commit
from apps.events.serializers import MAX_QUEUE_LIFESPAN_SECS
from apps.linkifiers.patterns import LinkifierRules
from apps.linkifiers.selectors import linkifier_rules
from apps.messages.actions.acting import check_acting_for
from apps.messages.actions.notification_bot import do_create_notification_bot
from apps.messages.actions.submessages import add_widget
from apps.messages.addressing import (
    access_dm_recipients,
    access_stream_for_sending,
    check_can_create_topic,
    check_can_send_direct_message,
)
from apps.messages.alert_words import alerted_user_ids
from apps.messages.group_mentions import (
    check_group_mentions_allowed,
    group_mention_targets,
    mentioned_group_member_ids,
)
from apps.messages.hooks import message_content_saved, message_sent
from apps.messages.models import Message, PublicChannelListener, Recipient, SubMessage, UserMessage
from apps.messages.newest import newest_changed_on_commit
from apps.messages.recipients import direct_message_recipient, get_recipient
from apps.messages.rendering import Rendered, render_message, with_local_links_relative
from apps.messages.selectors import (
    alert_word_users,
    channel_link_targets,
    custom_emoji_targets,
    mention_targets,
    muting_user_ids,
)
from apps.messages.serializers import message_to_dict
from apps.messages.wildcard_mentions import check_wildcard_mentions, wildcard_topic_participants
from apps.realms.limits import MAX_MESSAGE_LENGTH, MAX_STREAM_NAME_LENGTH
from apps.realms.models import Realm
from apps.subscriptions.actions.access import send_stream_update
from apps.subscriptions.actions.channels import unprintable_position
from apps.subscriptions.errors import StreamDoesNotExistError, StreamWithIdDoesNotExistError
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import subscriber_ids_by_stream
from apps.subscriptions.topics import check_topics_policy, topic_to_send_to, truncate_topic
from apps.users.access import (
    announce_conversation,
    as_from_unknown_sender,
    guests_without_access,
    inaccessible_user_ids,
)
from apps.users.models import Role, User
from apps.users.selectors import avatar_url_for_client

TRUNCATED = "\n[message truncated]"


# --- the Notification Bot, and what it tells a bot's owner ---------------------------------------


# A bot's owner is told at most this often that the bot sent nowhere (Zulip's waiting period).
BOT_OWNER_ALERT_INTERVAL = timedelta(minutes=1)


def _alert_bot_owner_of_missing_channel(sender: User, missing: JsonableError) -> None:
    """Not when the channel exists but is hidden from the bot, nor for a name no channel may have."""
    if not (sender.is_bot and sender.bot_owner_id):
        return
    channels = Stream.objects.filter(realm_id=sender.realm_id)
    stream_id, name = missing.data.get("stream_id"), missing.data.get("stream", "")
    if stream_id is not None:
        nothing_to_say = channels.filter(id=stream_id).exists()
        text = f"tried to send a message to channel ID {stream_id}, but there is no channel with that ID."
    else:
        possible = 0 < len(name) <= MAX_STREAM_NAME_LENGTH and unprintable_position(name) is None
        nothing_to_say = not possible or channels.filter(name__iexact=name).exists()
        text = (
            f"tried to send a message to channel #**{name}**, but that channel does not exist. "
            "Click [here](#channels/new) to create it."
        )
    if not nothing_to_say:
        _alert_bot_owner(sender, text)


def _alert_bot_owner(sender: User, what_it_did: str) -> None:
    """A direct message from the Notification Bot to the owner of `sender` (a bot, else nothing)
    saying what the bot tried (Zulip's send_pm_if_empty_stream); once a minute per bot at most,
    across processes (its last_reminder is claimed in one UPDATE). check_send_message opens no
    transaction, so the notice stays when the bot's request then fails."""
    if not (sender.is_bot and sender.bot_owner_id):
        return
    now = timezone.now()
    stale = Q(last_reminder__isnull=True) | Q(last_reminder__lt=now - BOT_OWNER_ALERT_INTERVAL)
    if not User.objects.filter(stale, id=sender.id).update(last_reminder=now):
        return
    owner = User.objects.filter(id=sender.bot_owner_id, is_active=True).first()
    notifier = do_create_notification_bot(sender.realm)
    if owner is not None and notifier.is_active:
        text = f"Your bot `{sender.delivery_email}` {what_it_did}"
        do_send_message(notifier, dm_with=[owner], content=text, acting_user=None)


# --- checking what is sent ------------------------------------------------------------------------


def normalize_content(content: str) -> str:
    """The content as stored: without trailing whitespace or leading blank lines (spaces that indent
    its first line stay: Zulip's normalize_body), cut at MAX_MESSAGE_LENGTH. NUL is refused, as Zulip
    does (clients' parameters cannot hold it; a bot's service's answer could: the fuzzing QA pass)."""
    content = content.rstrip().lstrip("\n")
    if not content.strip():
        raise JsonableError("Message must not be empty")
    if "\x00" in content:
        raise JsonableError("Message must not contain null bytes")
    if len(content) > MAX_MESSAGE_LENGTH:
        content = content[: MAX_MESSAGE_LENGTH - len(TRUNCATED)] + TRUNCATED
    return content


def normalize_topic(topic: str | None, stream: Stream, realm: Realm) -> str:
    """The topic as stored, if the channel (of `realm`) takes messages to it."""
    topic = truncate_topic(topic_to_send_to(topic))
    position = unprintable_position(topic)
    if position is not None:
        raise JsonableError(f"Invalid character in topic, at position {position}!")
    check_topics_policy(topic, stream, realm)
    return topic


def render_content(
    author: User, content: str, linkifiers: LinkifierRules, *, preview: bool = False, links_as: User | None = None
) -> Rendered:
    """The content as HTML, with the organization's users its mentions name (one query if any),
    the channels its links name (if any, those the author, or `links_as`, knows of), the custom emoji it names (if
    it names any emoji), the groups it mentions (if any: the author must be allowed to mention
    them, unless this is a `preview` that sends nothing; their members are mentioned) and its
    linkifiers."""
    by_name, user_ids = mention_targets(author.realm_id, content)
    if unknown := inaccessible_user_ids(author, user_ids):  # a guest names only people they see (Zulip's)
        by_name = {
            name: kept
            for name, found in by_name.items()
            if (kept := [(uid, n) for uid, n in found if uid not in unknown])
        }
        user_ids -= unknown
    channels = channel_link_targets(author.realm_id, links_as or author, content)
    emoji = custom_emoji_targets(author.realm_id, content)
    groups = group_mention_targets(author.realm_id, content)
    rendered = render_message(content, by_name, user_ids, linkifiers, channels, emoji, groups)
    rendered.html = with_local_links_relative(rendered.html, author.realm.url)
    if rendered.mentioned_group_ids:
        if not (preview or author.is_system_bot):  # the Welcome Bot says what the administrators wrote
            check_group_mentions_allowed(author, rendered.mentioned_group_ids)
        rendered.mentioned_user_ids |= mentioned_group_member_ids(rendered.mentioned_group_ids)
    return rendered


def preview_content(author: User, content: str) -> str:
    """POST /messages/render: the HTML `content` would be sent as (cut as sending cuts it), as
    Zulip's preview. Nothing is sent, so no permission is checked (a group's can_mention_group)."""
    content = content.rstrip()
    if len(content) > MAX_MESSAGE_LENGTH:
        content = normalize_content(content)
    return render_content(author, content, linkifier_rules(author.realm_id), preview=True).html


# Clients a person types into: what they send is read for its sender. Messages sent through the API
# by anything else (an integration using its owner's key, a script) arrive unread for the sender too,
# so that they are noticed (Zulip's Client.default_read_by_sender).
UI_CLIENTS = {"zulipandroid", "zulipios", "zulipdesktop", "zulipmobile", "zulipelectron", "zulipterminal",
              "snipe", "website", "ios", "android"}  # fmt: skip


def default_read_by_sender(client: str) -> bool:
    name = client.lower()
    return name in UI_CLIENTS or "desktop app" in name or "test suite" in name


# --- sending --------------------------------------------------------------------------------------


def check_send_message(
    sender: User,
    *,
    kind: str,
    to: Any,
    topic: str | None,
    content: str,
    client: str = "API",
    read_by_sender: bool | None = None,
    local_id: tuple[str, str] | None = None,
    links_as: User | None = None,
    acting_user: User | None,
) -> Message:
    """POST /messages: checked (the content, where it goes and whether the sender may post there),
    then sent by do_send_message. `to` as SendMessageParams reads it: an id, a name, a list, or the
    raw text. Nothing is written, and no transaction opened, for a message that is refused."""
    check_acting_for(sender, acting_user)
    content = normalize_content(content)
    if kind in ("stream", "channel"):
        if topic is None:
            raise JsonableError("Missing topic")
        try:
            stream = access_stream_for_sending(sender, to)
        except (StreamDoesNotExistError, StreamWithIdDoesNotExistError) as missing:
            _alert_bot_owner_of_missing_channel(sender, missing)
            raise
        topic = normalize_topic(topic, stream, sender.realm)
        check_can_create_topic(sender, stream, topic)
        return do_send_message(
            sender, stream=stream, topic=topic, content=content, client=client,
            read_by_sender=read_by_sender, local_id=local_id, acting_user=acting_user,
        )  # fmt: skip
    if to is None:
        raise MissingArgumentError("to")
    others = [u for u in access_dm_recipients(sender, to) if u.id != sender.id]
    check_can_send_direct_message(sender, others)
    return do_send_message(
        sender, dm_with=others, content=content, client=client, read_by_sender=read_by_sender, local_id=local_id,
        acting_user=acting_user,
    )  # fmt: skip


def do_send_message(
    sender: User,
    *,
    content: str,
    stream: Stream | None = None,
    topic: str = "",
    dm_with: Sequence[User] = (),
    client: str = "API",
    read_by_sender: bool | None = None,
    read_by: Collection[int] = (),
    local_id: tuple[str, str] | None = None,
    links_as: User | None = None,
    external_notifications: bool = True,
    acting_user: User | None,
) -> Message:
    """Send a message whose content, channel and topic are checked (check_send_message checks a
    client's): a Message and a UserMessage row for each recipient (in bulk), with their flags.
    `external_notifications` False: no email or phone notification of it (Zulip's
    disable_external_notifications, for the Welcome Bot's messages).

    Channel messages go to the channel's active subscribers (and the sender); direct messages to
    their people. Mentions set `mentioned` (or a wildcard flag); a recipient's alert word in the
    content sets `has_alert_word` (never for the sender); messages from a user the recipient muted
    arrive read (with their flags, as in Zulip); the sender's copy is read. The rendering and the
    reads come first; the transaction (_store_message) holds the writes.

    Emits: message {message, flags} to each recipient (one event per set of flags; with `local_id`,
    (queue id, local id) of the sending client, the sender's own event echoes the local id to that
    queue), and stream/update first_message_id for a channel's first message. A system bot's notice
    about what someone did links the channels that person knows of (`links_as`, Zulip's acting_user).
    """
    check_acting_for(sender, acting_user)
    linkifiers = linkifier_rules(sender.realm_id)
    rendered = render_content(sender, content, linkifiers, links_as=links_as)
    topic_participants = wildcard_topic_participants(sender, stream, topic, rendered)
    if stream is not None:
        people = None
        receivers = subscriber_ids_by_stream([stream.id])[stream.id]
        if not receivers:
            _alert_bot_owner(
                sender,
                f"tried to send a message to channel #**{stream.name}**. "
                "The channel exists but does not have any subscribers.",
            )
        check_wildcard_mentions(sender, rendered, len(receivers), topic_participants)
        # A service bot mentioned in a channel it is not subscribed to gets no row of the message (as
        # in Zulip: it would go on reading it, edits too, in a channel it may not read); its
        # outgoing webhook is triggered all the same (apps.webhooks).
    else:
        people = sorted({sender, *dm_with}, key=lambda user: user.id)
        receivers = {user.id for user in people}
    receivers.add(sender.id)
    if read_by_sender is None:
        read_by_sender = default_read_by_sender(client)
    flags = _initial_flags(sender, stream, receivers, rendered, read_by_sender, topic_participants)
    for uid in receivers.intersection(read_by):  # recipients for whom the server marks it read
        flags[uid] |= UserMessage.READ
    others = receivers - {sender.id}
    for uid in alerted_user_ids(content, alert_word_users(sender.realm_id, others) if others else {}):
        flags[uid] |= UserMessage.HAS_ALERT_WORD
    return _store_message(
        Message(
            realm=sender.realm,
            sender=sender,
            stream=stream,
            topic=topic if stream is not None else "",
            content=content,
            rendered_content=rendered.html,
            sending_client=client,
            has_link=rendered.has_link,
            has_image=rendered.has_image,
        ),
        flags,
        people=people,
        listeners=_public_channel_listeners(stream, receivers),
        local_id=local_id,
        topic_links=linkifiers.topic_links(topic) if stream is not None else None,
        external_notifications=external_notifications,
    )


@transaction.atomic
def _store_message(
    message: Message,
    flags: dict[int, int],
    *,
    people: list[User] | None,
    listeners: list[int],
    local_id: tuple[str, str] | None,
    topic_links: list[dict[str, str]] | None,
    external_notifications: bool,
) -> Message:
    """Store the (unsaved) message with its recipient and the recipients' rows (and its widget, for
    a poll or a to-do list), and announce it (with its topic's links)."""
    stream = message.stream
    if stream is not None:
        message.recipient = get_recipient(Recipient.Type.STREAM, stream.id)
    else:
        message.recipient = direct_message_recipient(message.realm, message.sender_id, [user.id for user in people])
        announce_conversation([message.sender, *people])  # (to guests who may not see them all yet)
    message.save(force_insert=True)
    _files_linked(message)
    _insert_user_messages(message, flags)
    # Announced only if this message did become the first (a concurrent send may have been first).
    if (
        stream is not None
        and stream.first_message_id is None
        and Stream.objects.filter(id=stream.id, first_message_id__isnull=True).update(first_message_id=message.id)
    ):
        stream.first_message_id = message.id
        send_stream_update(stream, "first_message_id", message.id)
    submessages = add_widget(message)
    _send_message_events(message, flags, local_id, people, listeners, topic_links, submessages)
    message_sent.call(message, flags, external_notifications=external_notifications)
    return message


def _insert_user_messages(message: Message, flags: dict[int, int]) -> None:
    """The recipients' rows. On PostgreSQL one INSERT of two arrays (a big channel's ten thousand
    rows cost the database, not Python: no model instances, no per-row parameters); elsewhere in
    bulk through the ORM."""
    newest_changed_on_commit(message.realm_id)
    if connection.vendor != "postgresql":
        UserMessage.objects.bulk_create(
            [UserMessage(user_id=uid, message=message, flags=bits) for uid, bits in flags.items()], batch_size=5000
        )
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {connection.ops.quote_name(UserMessage._meta.db_table)} (user_id, message_id, flags) "  # noqa: S608
            "SELECT user_id, %s, flags FROM unnest(%s::bigint[], %s::bigint[]) AS recipient(user_id, flags)",
            # Array literals: the client-side binding would quote each element in Python.
            [message.id, _int_array(flags), _int_array(flags.values())],
        )


def _int_array(values: Iterable[int]) -> str:
    return "{" + ",".join(map(str, map(int, values))) + "}"


def _files_linked(message: Message) -> None:
    """The uploaded files the new message links (message_content_saved): its has_attachment and
    has_image (an image file shows as one) fields, and its HTML with the images' previews."""
    found = message_content_saved.call_merged(message)
    has_attachment = bool(found.get("has_attachment"))
    has_image = message.has_image or bool(found.get("has_image"))
    rendered = found.get("rendered_content", message.rendered_content)
    if (has_attachment, has_image, rendered) != (message.has_attachment, message.has_image, message.rendered_content):
        message.has_attachment, message.has_image, message.rendered_content = has_attachment, has_image, rendered
        message.save(update_fields=["has_attachment", "has_image", "rendered_content"])


def _initial_flags(
    sender: User,
    stream: Stream | None,
    receivers: set[int],
    rendered: Rendered,
    read_by_sender: bool,
    topic_participants: set[int],
) -> dict[int, int]:
    flags = mention_flags(receivers, rendered, topic_participants)
    if stream is None:
        for uid in receivers:
            flags[uid] |= UserMessage.IS_PRIVATE
    for uid in muting_user_ids(sender, receivers) | ({sender.id} if read_by_sender else set()):
        flags[uid] |= UserMessage.READ
    return flags


def mention_flags(receivers: set[int], rendered: Rendered, topic_participants: set[int]) -> dict[int, int]:
    """Each receiver's mention bits (UserMessage.MENTION_BITS) for the rendered content; `topic_participants`
    from wildcard_topic_participants. The bits everyone gets are given at once, then those of the few
    mentioned (a big channel's ten thousand receivers cost no Python of their own)."""
    # As Zulip, a wildcard mention is flagged for everyone it mentions, those who turned such
    # mentions off for the channel too (`wildcard_mentions_notify` decides notifications only).
    flags = dict.fromkeys(receivers, UserMessage.STREAM_WILDCARD_MENTIONED if rendered.stream_wildcard else 0)
    for uid in receivers.intersection(rendered.mentioned_user_ids):
        flags[uid] |= UserMessage.MENTIONED
    if rendered.topic_wildcard:
        for uid in receivers.intersection(topic_participants):
            flags[uid] |= UserMessage.TOPIC_WILDCARD_MENTIONED
    return flags


def do_listen_to_public_channels(user: User, *, acting_user: User | None) -> None:
    """The user registered an event queue with `all_public_streams`: for as long as such a queue
    can live, every public channel's messages are sent to them too (_public_channel_listeners)."""
    check_acting_for(user, acting_user)
    PublicChannelListener.objects.update_or_create(
        user=user, defaults={"realm_id": user.realm_id, "last_registered": timezone.now()}
    )


def _public_channel_listeners(stream: Stream | None, receivers: set[int]) -> list[int]:
    """Users (not guests) with a recent `all_public_streams` queue who do not receive this public
    channel message: their queues get it too."""
    if stream is None or stream.invite_only:
        return []
    since = timezone.now() - timedelta(seconds=MAX_QUEUE_LIFESPAN_SECS)
    listeners = PublicChannelListener.objects.filter(
        realm_id=stream.realm_id, last_registered__gte=since, user__is_active=True
    ).exclude(user__role=Role.GUEST)
    return sorted(set(listeners.values_list("user_id", flat=True)) - receivers)


def _send_message_events(
    message: Message,
    flags: dict[int, int],
    local_id: tuple[str, str] | None,
    people: list[User] | None,
    listeners: list[int],
    topic_links: list[dict[str, str]] | None,
    submessages: list[SubMessage],
) -> None:
    """Emits: message {message, flags}; recipients with the same flags share one event. The
    message is rendered for clients that want HTML and for those that want Markdown alike (the
    queue's options pick, see events.py)."""
    shape = message_to_dict(
        message,
        flags=None,
        dm_users=people,  # the direct message's people, known to the caller: no query
        apply_markdown=True,
        client_gravatar=False,
        allow_empty_topic_name=True,
        topic_links=topic_links,
        submessages=submessages,
    )
    # For events.py: the Markdown (for clients without apply_markdown) and whether clients that
    # compute Gravatar URLs themselves get a null avatar_url.
    shape["raw_content"] = message.content
    shape["gravatar"] = avatar_url_for_client(message.sender, client_gravatar=True) is None
    # Guests who may not see the sender (one who wrote to the channel from outside it) get the
    # message from an unknown user (apps/users/access.py).
    unknown_to = set(guests_without_access(message.sender)) if message.stream_id is not None else set()
    by_flags: dict[tuple[int, bool], list[int]] = defaultdict(list)
    for uid, bits in flags.items():
        if uid != message.sender_id or local_id is None:
            by_flags[bits, uid in unknown_to].append(uid)
    masked = {**as_from_unknown_sender(message.realm, shape), "gravatar": False} if unknown_to else shape
    for (bits, unknown), user_ids in by_flags.items():
        event = {"type": "message", "message": masked if unknown else shape, "flags": UserMessage.flag_names(bits)}
        send_event_on_commit(message.realm_id, event, user_ids)
    if listeners:
        event = {"type": "message", "message": shape, "flags": [], "all_public_streams": True}
        send_event_on_commit(message.realm_id, event, listeners)
    if local_id is not None:
        event = {"type": "message", "message": shape, "flags": UserMessage.flag_names(flags[message.sender_id])}
        echo = {"sender_queue_id": local_id[0], "local_message_id": local_id[1]}
        send_event_on_commit(message.realm_id, {**event, **echo}, [message.sender_id])
