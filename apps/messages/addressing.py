"""Where a message may go, checked as it is sent, scheduled or moved (and where one is typed or
drafted): the channel and whether its sender may post there or start the topic, the people of a
direct message and whether the organization lets them be written to (Zulip's
access_stream_for_send_message, check_for_can_create_topic_group_violation and
check_can_send_direct_message)."""

from collections.abc import Sequence
from typing import Any

from django.db.models import Q

from apps.core.errors import JsonableError
from apps.groups.models import SystemGroups, UserGroup
from apps.groups.selectors import is_user_in_group, member_ids_by_group
from apps.messages.models import Message, Recipient
from apps.messages.recipients import find_group_recipient
from apps.subscriptions.errors import StreamDoesNotExistError, StreamWithIdDoesNotExistError
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import Membership, has_content_access, has_metadata_access, is_subscribed
from apps.subscriptions.topics import same_topic
from apps.users.access import access_user_by_email, inaccessible_user_ids
from apps.users.models import User
from apps.users.selectors import api_email


def access_stream_for_sending(sender: User, to: Any) -> Stream:
    """The channel `to` names (id, name, or a one-item list of either), if the sender may post; none
    named (None, "" or []), the sender's default_sending_stream (a bot's, as in Zulip)."""
    if to is None or to in ("", []):
        if sender.default_sending_stream_id is None:
            raise JsonableError("Missing channel")
        to = sender.default_sending_stream_id
    if isinstance(to, list):
        if len(to) != 1:
            raise JsonableError("Expected exactly one channel")
        to = to[0]
    # With the group that may start topics: check_can_create_topic needs no query while it is everyone.
    streams = Stream.objects.filter(realm_id=sender.realm_id).select_related("can_create_topic_group")
    if isinstance(to, int) and not isinstance(to, bool):
        stream = streams.filter(id=to).first()
        missing: JsonableError = StreamWithIdDoesNotExistError(to)
    elif isinstance(to, str):
        stream = streams.filter(name__iexact=to.strip()).first()
        missing = StreamDoesNotExistError(to.strip())
    else:
        raise JsonableError("Invalid data type for channel")
    membership = Membership(sender)
    subscribed = stream is not None and is_subscribed(sender, stream)
    if stream is not None and not subscribed and sender.is_bot and sender.bot_owner_id is not None:
        # A bot may send wherever its owner is subscribed, as in Zulip.
        subscribed = is_subscribed(sender.bot_owner_id, stream)
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


def check_can_create_topic(user: User, stream: Stream, topic: str) -> None:
    """Whether `user` may send (or move messages) to `topic` of `stream` (Zulip's
    check_for_can_create_topic_group_violation): a topic the channel has no message in yet is
    started only by the channel's can_create_topic_group (a bot by its owner's permission too); the
    server's own bots are never refused."""
    group = stream.can_create_topic_group
    if user.is_system_bot or (group.is_system_group and group.name == SystemGroups.EVERYONE):
        return
    if Message.objects.filter(same_topic("topic", topic), stream=stream).exists():
        return
    if Membership(user).holds(stream, "can_create_topic_group"):
        return
    if (
        user.is_bot
        and user.bot_owner is not None
        and Membership(user.bot_owner).holds(stream, "can_create_topic_group")
    ):
        return
    raise JsonableError("You do not have permission to create new topics in this channel.")


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
    if len({type(item) for item in items}) > 1:  # Zulip's words (the faults QA pass: both were taken)
        raise JsonableError("Recipient lists may contain emails or user IDs, but not both.")
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
                user = access_user_by_email(
                    sender, item, allow_deactivated=True, allow_bots=True, allow_inaccessible=True
                )
            except JsonableError:
                raise JsonableError(f"Invalid email '{item}'") from None
        if not user.is_active:  # named by their email, however the sender named them (as in Zulip)
            raise JsonableError(f"'{api_email(user)}' is no longer using Parley.")
        users[user.id] = user
    return list(users.values())


def check_can_send_direct_message(sender: User, people: Sequence[User]) -> None:
    """Whether the organization lets `sender` send a direct message to `people` (Zulip's
    check_can_send_direct_message): one of its people (the sender included) must hold
    direct_message_permission_group, and a conversation that has no message yet may be started only
    by a holder of direct_message_initiator_group. Bots, and messages to oneself or to bots only,
    are never refused by these; a guest is refused people they may not see (apps/users/access.py)."""
    if inaccessible_user_ids(sender, [person.id for person in people]):
        # A guest who may see only some people (the organization's can_access_all_users_group).
        raise JsonableError("You do not have permission to access some of the recipients.")
    if sender.is_bot or all(person.is_bot or person.id == sender.id for person in people):
        return
    realm = sender.realm
    authorizers, initiators = realm.direct_message_permission_group_id, realm.direct_message_initiator_group_id
    holders = member_ids_by_group({authorizers, initiators}, among={sender.id, *(person.id for person in people)})
    if not holders[authorizers]:
        if UserGroup.objects.filter(id=authorizers, is_system_group=True, name=SystemGroups.NOBODY).exists():
            raise JsonableError("Direct messages are disabled in this organization.")
        raise JsonableError("This conversation does not include any users who can authorize it.")
    if sender.id in holders[initiators] or _direct_messages_exist(sender, people):
        return
    raise JsonableError("You are not allowed to start direct message conversations.")


def _direct_messages_exist(sender: User, people: Sequence[User]) -> bool:
    """Whether the conversation of `sender` and `people` has a message (in either direction)."""
    others = {person.id for person in people} - {sender.id}
    if len(others) == 1:
        (other,) = others
        return Message.objects.filter(
            Q(sender=sender, recipient__type=Recipient.Type.PERSONAL, recipient__type_id=other)
            | Q(sender_id=other, recipient__type=Recipient.Type.PERSONAL, recipient__type_id=sender.id),
            realm=sender.realm,
        ).exists()
    recipient = find_group_recipient(sender.realm, sorted({*others, sender.id}))
    return recipient is not None and Message.objects.filter(realm=sender.realm, recipient=recipient).exists()
