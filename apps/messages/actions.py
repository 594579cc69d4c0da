"""Every change to messages and their flags, muted users, and topic deletion, with their events."""

import re
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Min, Q
from django.db.models.functions import Lower
from django.utils import timezone

from apps.core.errors import JsonableError, OrganizationAdministratorRequiredError
from apps.events.publish import send_event_on_commit
from apps.events.serializers import MAX_QUEUE_LIFESPAN_SECS
from apps.groups.selectors import is_user_in_group
from apps.messages.models import (
    Message,
    MutedUser,
    PublicChannelListener,
    Recipient,
    UserMessage,
)
from apps.messages.narrow import NarrowBuilder, Term, with_flag_columns
from apps.messages.recipients import get_recipient, group_recipient
from apps.messages.rendering import MENTION_RE, render_message
from apps.messages.selectors import (
    dm_users_by_recipient,
    muted_conversation_checker,
    muted_users_of,
    visible_message_flags,
)
from apps.messages.serializers import message_to_dict
from apps.realms.limits import EMPTY_TOPIC_DISPLAY_NAME, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH
from apps.subscriptions.actions.access import send_stream_update
from apps.subscriptions.actions.channels import unprintable_position
from apps.subscriptions.actions.user_topics import do_set_user_topic_visibility_policy
from apps.subscriptions.errors import StreamDoesNotExistError, StreamWithIdDoesNotExistError
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.selectors import Membership, access_stream_by_id, has_content_access, has_metadata_access
from apps.users.models import Role, User
from apps.users.selectors import access_user_by_email, access_user_by_id, api_email, avatar_url_for_client

TRUNCATED = "\n[message truncated]"


# --- recipients -----------------------------------------------------------------------------------


# --- checking what is sent ------------------------------------------------------------------------


def normalize_content(content: str) -> str:
    content = content.rstrip()
    if not content.strip():
        raise JsonableError("Message must not be empty")
    if len(content) > MAX_MESSAGE_LENGTH:
        content = content[: MAX_MESSAGE_LENGTH - len(TRUNCATED)] + TRUNCATED
    return content


def normalize_topic(topic: str | None, stream: Stream) -> str:
    topic = (topic or "").strip()
    if topic == EMPTY_TOPIC_DISPLAY_NAME:
        topic = ""
    if len(topic) > MAX_TOPIC_LENGTH:
        topic = topic[: MAX_TOPIC_LENGTH - 3] + "..."
    position = unprintable_position(topic)
    if position is not None:
        raise JsonableError(f"Invalid character in topic, at position {position}!")
    if topic == "" and stream.topics_policy == Stream.TopicsPolicy.DISABLE_EMPTY_TOPIC:
        raise JsonableError(
            f'Sending messages to the "{EMPTY_TOPIC_DISPLAY_NAME}" topic is not allowed in this channel.'
        )
    if topic and stream.topics_policy == Stream.TopicsPolicy.EMPTY_TOPIC_ONLY:
        raise JsonableError(f'Only the "{EMPTY_TOPIC_DISPLAY_NAME}" topic is allowed in this channel.')
    return topic


def access_stream_for_sending(sender: User, to: Any) -> Stream:
    """The channel `to` names (id, name, or a one-item list of either), if the sender may post."""
    if isinstance(to, list):
        if len(to) != 1:
            raise JsonableError("Expected exactly one channel")
        to = to[0]
    streams = Stream.objects.filter(realm_id=sender.realm_id)
    if isinstance(to, int) and not isinstance(to, bool):
        stream = streams.filter(id=to).first()
        missing: JsonableError = StreamWithIdDoesNotExistError(to)
    elif isinstance(to, str):
        stream = streams.filter(name__iexact=to.strip()).first()
        missing = StreamDoesNotExistError(to.strip())
    else:
        raise JsonableError("Invalid data type for channel")
    membership = Membership(sender)
    subscribed = stream is not None and Subscription.objects.filter(user=sender, stream=stream, active=True).exists()
    if stream is not None and not subscribed and sender.is_bot and sender.bot_owner_id is not None:
        # A bot may send wherever its owner is subscribed, as in Zulip.
        subscribed = Subscription.objects.filter(user_id=sender.bot_owner_id, stream=stream, active=True).exists()
    # A channel the sender may not see does not exist for them.
    if stream is None or not has_metadata_access(membership, stream, is_subscribed=subscribed):
        raise missing
    if stream.deactivated or not (subscribed or has_content_access(membership, stream, is_subscribed=False)):
        raise JsonableError(f"Not authorized to send to channel '{stream.name}'")
    if not is_user_in_group(stream.can_send_message_group_id, sender) and not (
        sender.is_bot and sender.bot_owner and is_user_in_group(stream.can_send_message_group_id, sender.bot_owner)
    ):
        raise JsonableError("You do not have permission to post in this channel.")
    return stream


def access_dm_recipients(sender: User, to: Any) -> list[User]:
    """The people `to` names (ids or emails, a list or a comma-separated string): active users of
    the sender's organization."""
    if isinstance(to, int) and not isinstance(to, bool):
        items: list = [to]
    elif isinstance(to, str):
        items = [part.strip() for part in to.split(",") if part.strip()]
    elif isinstance(to, list):
        items = to
    else:
        raise JsonableError("Invalid data type for recipients")
    if not items:
        raise JsonableError("Message must have recipients")
    if any(isinstance(item, bool) or not isinstance(item, int | str) for item in items):
        raise JsonableError("Invalid data type for recipients")
    # Each person once, and those named by id in one query: a long `to` costs no query per entry.
    items = list(dict.fromkeys(items))
    ids = [item for item in items if isinstance(item, int) and 0 < item < 2**63]
    by_id = (
        {user.id: user for user in User.objects.filter(realm=sender.realm, id__in=ids).select_related("realm")}
        if ids
        else {}
    )
    users = {}
    for item in items:
        if isinstance(item, int):
            user = by_id.get(item)
            if user is None:
                raise JsonableError(f"Invalid user ID {item}")
        else:
            try:
                user = access_user_by_email(sender, item, allow_deactivated=True, allow_bots=True)
            except JsonableError:
                raise JsonableError(f"Invalid email '{item}'") from None
        if not user.is_active:  # named by their email, however the sender named them (as in Zulip)
            raise JsonableError(f"'{api_email(user)}' is no longer using Parley.")
        users[user.id] = user
    return list(users.values())


# A product name is an HTTP token (RFC 9110): anything else ends it, whatever a client sends (a
# NUL byte, which PostgreSQL cannot store, reaches here from servers that do not refuse it).
_PRODUCT_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]*")


def client_name(user_agent: str) -> str:
    """Zulip's `client` field: the User-Agent's product name ("ZulipPython/0.9.1 ..." -> "ZulipPython")."""
    name = _PRODUCT_RE.match(user_agent.strip()).group()
    return name[:40] or "API"


# --- sending --------------------------------------------------------------------------------------


@transaction.atomic
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
) -> Message:
    """POST /messages: checked, then sent (see do_send_message). `to` as SendMessageParams reads it:
    an id, a name, a list, or the raw text."""
    content = normalize_content(content)
    if kind in ("stream", "channel"):
        if topic is None:
            raise JsonableError("Missing topic")
        stream = access_stream_for_sending(sender, to)
        return do_send_message(
            sender, stream=stream, topic=normalize_topic(topic, stream), content=content, client=client,
            read_by_sender=read_by_sender, local_id=local_id,
        )  # fmt: skip
    others = [u for u in access_dm_recipients(sender, to) if u.id != sender.id]
    return do_send_message(
        sender, dm_with=others, content=content, client=client, read_by_sender=read_by_sender, local_id=local_id
    )


def _users_by_name(realm_id: int, content: str) -> tuple[dict[str, list[tuple[int, str]]], set[int]]:
    """The active users the content's mentions may name (one query, only when it has mentions)."""
    written = {match.group(2).strip().partition("|")[0] for match in MENTION_RE.finditer(content)}
    names = {name.lower() for name in written}
    by_name: dict[str, list[tuple[int, str]]] = defaultdict(list)
    ids = set()
    if names:
        users = User.objects.filter(realm_id=realm_id, is_active=True).annotate(lower_name=Lower("full_name"))
        # Also the names as written: SQLite lower-cases ASCII letters only ("Émile" stays "Émile").
        matching = users.filter(Q(lower_name__in=names) | Q(full_name__in=written))
        for user_id, full_name in matching.values_list("id", "full_name"):
            by_name[full_name.lower()].append((user_id, full_name))
            ids.add(user_id)
    return by_name, ids


@transaction.atomic
def do_send_message(
    sender: User,
    *,
    content: str,
    stream: Stream | None = None,
    topic: str = "",
    dm_with: Sequence[User] = (),
    client: str = "API",
    read_by_sender: bool | None = None,
    local_id: tuple[str, str] | None = None,
) -> Message:
    """Store the message and a UserMessage row for each recipient (in bulk), with their flags.

    Channel messages go to the channel's active subscribers (and the sender); direct messages to
    their people. Mentions set `mentioned` (or a wildcard flag); messages from a user the recipient
    muted arrive read; the sender's copy is read. Emits: message {message, flags} to each recipient
    (one event per set of flags; with `local_id`, (queue id, local id) of the sending client, the
    sender's own event echoes the local id to that queue), and stream/update first_message_id for a
    channel's first message.
    """
    realm = sender.realm
    by_name, user_ids = _users_by_name(realm.id, content)
    rendered = render_message(content, by_name, user_ids)
    if stream is not None:
        recipient = get_recipient(Recipient.Type.STREAM, stream.id)
        receivers = set(
            Subscription.objects.filter(stream=stream, active=True, user__is_active=True).values_list(
                "user_id", flat=True
            )
        )
    else:
        people = sorted({sender.id, *(u.id for u in dm_with)})
        if len(people) <= 2:
            other = next((uid for uid in people if uid != sender.id), sender.id)
            recipient = get_recipient(Recipient.Type.PERSONAL, other)
        else:
            recipient = group_recipient(realm, people)
        receivers = set(people)
    receivers.add(sender.id)
    message = Message.objects.create(
        realm=realm,
        sender=sender,
        recipient=recipient,
        stream=stream,
        topic=topic if stream is not None else "",
        content=content,
        rendered_content=rendered.html,
        sending_client=client,
        has_link=rendered.has_link,
        has_image=rendered.has_image,
    )
    if read_by_sender is None:
        read_by_sender = default_read_by_sender(client)
    flags = _initial_flags(sender, message, receivers, rendered, read_by_sender)
    UserMessage.objects.bulk_create(
        [UserMessage(user_id=uid, message=message, flags=bits) for uid, bits in flags.items()], batch_size=5000
    )
    # Announced only if this message did become the first (a concurrent send may have been first).
    if (
        stream is not None
        and stream.first_message_id is None
        and Stream.objects.filter(id=stream.id, first_message_id__isnull=True).update(first_message_id=message.id)
    ):
        stream.first_message_id = message.id
        send_stream_update(stream, "first_message_id", message.id)
    people = None if stream is not None else sorted({sender, *dm_with}, key=lambda user: user.id)
    _send_message_events(message, flags, local_id, people)
    return message


# Clients a person types into: what they send is read for its sender. Messages sent through the API
# by anything else (an integration using its owner's key, a script) arrive unread for the sender too,
# so that they are noticed (Zulip's Client.default_read_by_sender).
UI_CLIENTS = {"zulipandroid", "zulipios", "zulipdesktop", "zulipmobile", "zulipelectron", "zulipterminal",
              "snipe", "website", "ios", "android"}  # fmt: skip


def default_read_by_sender(client: str) -> bool:
    name = client.lower()
    return name in UI_CLIENTS or "desktop app" in name or "test suite" in name


def _initial_flags(sender: User, message: Message, receivers: set[int], rendered, read_by_sender) -> dict[int, int]:
    muted_by = set(MutedUser.objects.filter(muted_user=sender, user_id__in=receivers).values_list("user_id", flat=True))
    topic_participants: set[int] = set()
    if rendered.topic_wildcard and message.stream_id is not None:
        topic_participants = set(
            Message.objects.filter(stream_id=message.stream_id, topic__iexact=message.topic).values_list(
                "sender_id", flat=True
            )
        )
    # Subscribers who turned wildcard mentions off for the channel are not mentioned by them.
    wildcards_off: set[int] = set()
    if (rendered.stream_wildcard or rendered.topic_wildcard) and message.stream_id is not None:
        wildcards_off = set(
            Subscription.objects.filter(
                stream_id=message.stream_id, active=True, wildcard_mentions_notify=False
            ).values_list("user_id", flat=True)
        )
    flags = {}
    for uid in receivers:
        bits = 0
        if uid in rendered.mentioned_user_ids:
            bits |= UserMessage.MENTIONED
        if rendered.stream_wildcard and uid not in wildcards_off:
            bits |= UserMessage.STREAM_WILDCARD_MENTIONED
        if rendered.topic_wildcard and uid in topic_participants and uid not in wildcards_off:
            bits |= UserMessage.TOPIC_WILDCARD_MENTIONED
        if uid in muted_by or (uid == sender.id and read_by_sender):
            bits |= UserMessage.READ
        flags[uid] = bits
    return flags


def _send_message_events(
    message: Message, flags: dict[int, int], local_id: tuple[str, str] | None, people: list[User] | None
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
    )
    # For events.py: the Markdown (for clients without apply_markdown) and whether clients that
    # compute Gravatar URLs themselves get a null avatar_url.
    shape["raw_content"] = message.content
    shape["gravatar"] = avatar_url_for_client(message.sender, client_gravatar=True) is None
    by_flags: dict[int, list[int]] = defaultdict(list)
    for uid, bits in flags.items():
        if uid != message.sender_id or local_id is None:
            by_flags[bits].append(uid)
    for bits, user_ids in by_flags.items():
        event = {"type": "message", "message": shape, "flags": UserMessage.flag_names(bits)}
        send_event_on_commit(message.realm_id, event, user_ids)
    listeners = _public_channel_listeners(message, set(flags))
    if listeners:
        event = {"type": "message", "message": shape, "flags": [], "all_public_streams": True}
        send_event_on_commit(message.realm_id, event, listeners)
    if local_id is not None:
        event = {"type": "message", "message": shape, "flags": UserMessage.flag_names(flags[message.sender_id])}
        echo = {"sender_queue_id": local_id[0], "local_message_id": local_id[1]}
        send_event_on_commit(message.realm_id, {**event, **echo}, [message.sender_id])


def _public_channel_listeners(message: Message, receivers: set[int]) -> list[int]:
    """Users (not guests) with a recent `all_public_streams` queue who did not receive this public
    channel message: their queues get it too."""
    if message.stream_id is None or message.stream.invite_only:
        return []
    since = timezone.now() - timedelta(seconds=MAX_QUEUE_LIFESPAN_SECS)
    listeners = PublicChannelListener.objects.filter(
        realm_id=message.realm_id, last_registered__gte=since, user__is_active=True
    ).exclude(user__role=Role.GUEST)
    return sorted(set(listeners.values_list("user_id", flat=True)) - receivers)


# --- flags ----------------------------------------------------------------------------------------


def check_flag(flag: str) -> int:
    if flag not in UserMessage.FLAG_NAMES:
        raise JsonableError(f"Invalid flag: '{flag}'")
    if flag not in UserMessage.EDITABLE_FLAGS:
        raise JsonableError(f"Flag not editable: '{flag}'")
    return UserMessage.FLAG_NAMES[flag]


@transaction.atomic
def do_update_message_flags(user: User, op: str, flag: str, message_ids: Sequence[int]) -> list[int]:
    """Add or remove an editable flag on messages the user may see ("Invalid message(s)" if any is
    not); returns the ids whose flag changed. A message the user never received (a channel's
    history) gets a row, marked historical, when a flag is added.

    Emits: update_message_flags {op, flag, messages: the changed ids} to the user.
    """
    bit = check_flag(flag)
    ids = list(dict.fromkeys(message_ids))
    visible = visible_message_flags(user, ids)
    if len(visible) != len(ids):
        raise JsonableError("Invalid message(s)")
    if op == "remove" and bit == UserMessage.READ:
        # Unread channel messages are only in channels the user is subscribed to (Zulip's
        # invariant, which unread_msgs relies on): marking unread skips the others.
        subscribed = Subscription.objects.filter(user=user, active=True).values("stream_id")
        skipped = set(
            Message.objects.filter(id__in=ids, stream__isnull=False)
            .exclude(stream_id__in=subscribed)
            .values_list("id", flat=True)
        )
        ids = [mid for mid in ids if mid not in skipped]
    rows = set(UserMessage.objects.filter(user=user, message_id__in=ids).values_list("message_id", flat=True))
    historical = [mid for mid in ids if mid not in rows]
    changed = _change_flag(user, op, bit, [mid for mid in ids if mid in rows])
    if op == "add" and historical and bit != UserMessage.READ:
        # Locked, so a topic being deleted meanwhile either waits for this or has removed them
        # (then they are invalid now, rather than a failure of the foreign key at commit).
        still_there = set(Message.objects.select_for_update().filter(id__in=historical).values_list("id", flat=True))
        if len(still_there) != len(historical):
            raise JsonableError("Invalid message(s)")
        UserMessage.objects.bulk_create(
            [UserMessage(user=user, message_id=mid, flags=UserMessage.READ | UserMessage.HISTORICAL | bit)
             for mid in historical],
            ignore_conflicts=True,
        )  # fmt: skip
        changed = sorted([*changed, *historical])
    _send_flags_event(user, op, flag, changed)
    return changed


def _change_flag(user: User, op: str, bit: int, message_ids: Sequence[int]) -> list[int]:
    rows = with_flag_columns(UserMessage.objects.filter(user=user, message_id__in=message_ids)).alias(
        this_flag=F("flags").bitand(bit)
    )
    rows = rows.filter(this_flag=0) if op == "add" else rows.filter(this_flag__gt=0)
    changed = sorted(rows.values_list("message_id", flat=True))
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


@transaction.atomic
def do_mark_messages_read(user: User, terms: list[Term] | None = None, *, everything: bool = False) -> int:
    """Mark the user's unread messages read: all of them, or those of a narrow (a channel, a
    topic, a sender); returns how many. One UPDATE whatever their number (no list of ids in it).

    Emits: update_message_flags {op: add, flag: read, messages, all}: for "all of them", as in
    Zulip, `all: true` and no ids (there may be hundreds of thousands); else the ids.
    """
    rows = with_flag_columns(UserMessage.objects.filter(user=user)).filter(**{f"flag_{UserMessage.READ}": 0})
    if terms:
        rows = NarrowBuilder(user, on_user_messages=True).apply(rows, terms)
    ids = [] if everything else sorted(rows.values_list("message_id", flat=True))
    count = UserMessage.objects.filter(pk__in=rows.values("pk")).update(flags=F("flags").bitor(UserMessage.READ))
    if count:
        _send_flags_event(user, "add", "read", ids, everything=everything)
    return count


# --- muted users ----------------------------------------------------------------------------------


def _send_muted_users(user: User) -> None:
    """Emits: muted_users {muted_users: [{id, timestamp}]} (the whole list) to the user."""
    send_event_on_commit(user.realm_id, {"type": "muted_users", "muted_users": muted_users_of(user)}, [user.id])


@transaction.atomic
def check_mute_user(user: User, muted_user_id: int) -> None:
    """Mute (Zulip's state table): "Cannot mute self", "No such user", "User already muted". The
    muted user's messages the user has not read become read (update_message_flags), then
    muted_users."""
    if muted_user_id == user.id:
        raise JsonableError("Cannot mute self")
    target = access_user_by_id(user, muted_user_id, allow_deactivated=True, allow_bots=True)
    if MutedUser.objects.filter(user=user, muted_user=target).exists():
        raise JsonableError("User already muted")
    try:
        with transaction.atomic():
            MutedUser.objects.create(user=user, muted_user=target)
    except IntegrityError:
        raise JsonableError("User already muted") from None
    do_mark_messages_read(user, [Term("sender", target.id)])
    _send_muted_users(user)


@transaction.atomic
def check_unmute_user(user: User, muted_user_id: int) -> None:
    target = access_user_by_id(user, muted_user_id, allow_deactivated=True, allow_bots=True)
    deleted, _ = MutedUser.objects.filter(user=user, muted_user=target).delete()
    if not deleted:
        raise JsonableError("User is not muted")
    _send_muted_users(user)


# --- deleting a topic ----------------------------------------------------------------------------


def check_delete_topic(user: User, stream_id: int, topic_name: str) -> bool:
    """POST /streams/{stream_id}/delete_topic: administrators only. Deletes the topic's messages
    newest first, in batches of DELETE_TOPIC_BATCH_SIZE, each its own transaction, until done or
    DELETE_TOPIC_TIME_BUDGET_SECONDS pass; returns whether it finished (the client repeats if not).
    Once the topic is empty, users' policies for it are removed."""
    if not user.is_admin:
        raise OrganizationAdministratorRequiredError()
    stream, _ = access_stream_by_id(user, stream_id)
    topic = "" if topic_name.strip() == EMPTY_TOPIC_DISPLAY_NAME else topic_name.strip()
    deadline = time.monotonic() + settings.DELETE_TOPIC_TIME_BUDGET_SECONDS
    # Where history is not public to subscribers, only the messages the administrator received are
    # theirs to delete (as in Zulip): the others they may not even see.
    only_of = None if stream.history_public_to_subscribers else user
    while True:
        if not _delete_topic_batch(stream, topic, settings.DELETE_TOPIC_BATCH_SIZE, only_of=only_of):
            break
        if time.monotonic() >= deadline:
            return False
    with transaction.atomic():
        # In id order: concurrent calls lock the policies in the same order.
        policies = (
            UserTopic.objects.filter(stream=stream, topic_name__iexact=topic).select_related("user").order_by("id")
        )
        for policy in list(policies):
            do_set_user_topic_visibility_policy(
                policy.user,
                stream,
                policy.topic_name,
                visibility_policy=UserTopic.VisibilityPolicy.INHERIT,
                acting_user=user,
            )
    return True


@transaction.atomic
def _delete_topic_batch(stream: Stream, topic: str, size: int, *, only_of: User | None = None) -> int:
    """Delete the newest `size` messages of the topic (of those `only_of` received, if given);
    returns how many. Rows are locked newest first, so concurrent calls wait for each other and
    never deadlock."""
    messages = Message.objects.filter(stream=stream, topic__iexact=topic)
    if only_of is not None:
        messages = messages.filter(id__in=UserMessage.objects.filter(user=only_of).values("message_id"))
    ids = list(messages.select_for_update().order_by("-id").values_list("id", flat=True)[:size])
    if ids:
        do_delete_messages(stream, topic, ids)
    return len(ids)


def do_delete_messages(stream: Stream, topic: str, message_ids: list[int]) -> None:
    """Delete channel messages (in the caller's transaction). Emits: delete_message {message_ids,
    message_type, stream_id, topic} to those who had them or can read the channel's history, and
    stream/update first_message_id when the channel's first message changed."""
    recipients = set(UserMessage.objects.filter(message_id__in=message_ids).values_list("user_id", flat=True))
    if stream.history_public_to_subscribers:
        recipients |= set(
            Subscription.objects.filter(stream=stream, active=True, user__is_active=True).values_list(
                "user_id", flat=True
            )
        )
    UserMessage.objects.filter(message_id__in=message_ids).delete()
    Message.objects.filter(id__in=message_ids).delete()
    event = {"type": "delete_message", "message_type": "stream", "stream_id": stream.id, "topic": topic,
             "message_ids": sorted(message_ids)}  # fmt: skip
    if recipients:
        send_event_on_commit(stream.realm_id, event, recipients)
    # Read afresh (and locked): a concurrent deletion may have moved it since the channel was read.
    stream.first_message_id = (
        Stream.objects.select_for_update().filter(id=stream.id).values_list("first_message_id", flat=True).get()
    )
    if stream.first_message_id in message_ids:
        first = Message.objects.filter(stream=stream).aggregate(first=Min("id"))["first"]
        Stream.objects.filter(id=stream.id).update(first_message_id=first)
        stream.first_message_id = first
        send_stream_update(stream, "first_message_id", first)
