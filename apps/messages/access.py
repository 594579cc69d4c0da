"""Who may read a channel's messages, and who hears of a change to them, as Zulip's
has_message_access and event_recipient_ids_for_action_on_messages: anyone but a guest may read a
public channel's messages; otherwise it takes content access to the channel (a subscription, or a
group setting that grants it), and, where its history is protected, the message's own row too. A
message of an archived channel may be read, but not changed (edited, moved, deleted, reacted to).

A user keeps the rows of the messages they received in a channel they leave: GET /messages still
lists those (as Zulip's does), but the requests on one message answer "Invalid message(s)", and
changes to them are no longer told to them.
"""

from collections.abc import Iterable

from apps.messages.errors import InvalidMessageError
from apps.messages.models import UserMessage
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import (
    Membership,
    can_administer,
    has_content_access,
    has_realm_setting,
    is_subscribed,
    subscriber_ids_by_stream,
)
from apps.users.models import Role, User


def check_channel_message_access(user: User, stream: Stream, *, changing: bool) -> None:
    """Refuses ("Invalid message(s)") a message of this channel the user may not read now, or, when
    `changing` it, one of an archived channel. (Protected history: access_message asks for the
    user's own row first.)"""
    if changing and stream.deactivated:
        raise InvalidMessageError()
    if stream.is_public and not user.is_guest:
        return
    if not has_content_access(Membership(user), stream, is_subscribed=is_subscribed(user, stream)):
        raise InvalidMessageError()


def users_told_of(stream: Stream | None, message_ids: Iterable[int]) -> set[int]:
    """Who hears of a change to these messages (all of one conversation): a direct message's people;
    a channel's subscribers, with, for a public channel, whoever else has rows of the messages (but
    guests), and, where history is protected, only subscribers who have rows of them."""
    rows = UserMessage.objects.filter(message_id__in=list(message_ids))
    if stream is None:
        return set(rows.values_list("user_id", flat=True))
    subscribers = subscriber_ids_by_stream([stream.id])[stream.id]
    if not stream.history_public_to_subscribers:
        return subscribers & set(rows.values_list("user_id", flat=True))
    if not stream.is_public:
        return subscribers
    return subscribers | set(rows.exclude(user__role=Role.GUEST).values_list("user_id", flat=True))


# --- who may move messages ------------------------------------------------------------------------


def can_move_messages_out_of_channel(user: User, stream: Stream) -> bool:
    """Zulip's can_move_messages_out_of_channel, for a channel the user can read: administrators,
    the organization's can_move_messages_between_channels_group, the channel's administrators and
    its can_move_messages_out_of_channel_group."""
    membership = Membership(user)
    return (
        user.is_admin
        or has_realm_setting(membership, "can_move_messages_between_channels_group")
        or can_administer(membership, stream)
        or membership.holds(stream, "can_move_messages_out_of_channel_group")
    )


def can_move_messages_to_another_topic(user: User, old: Stream, new: Stream) -> bool:
    """Zulip's can_edit_topic: the organization's can_move_messages_between_topics_group, or, in the
    channel the messages leave or the one they go to, its administrators (organization administrators
    included) and its can_move_messages_within_channel_group."""
    membership = Membership(user)
    if has_realm_setting(membership, "can_move_messages_between_topics_group"):
        return True
    channels = [old] if old.id == new.id else [old, new]
    return any(
        can_administer(membership, stream) or membership.holds(stream, "can_move_messages_within_channel_group")
        for stream in channels
    )
