"""Channels' email addresses (Zulip's email gateway, which posts what is mailed to a channel's
address). Parley has no gateway: a channel's address is empty, as a Zulip server without one
(EMAIL_GATEWAY_PATTERN unset) answers; who may ask for it is checked as Zulip checks it."""

from apps.core.errors import JsonableError
from apps.groups.selectors import is_user_in_group
from apps.subscriptions.selectors import access_stream_by_id
from apps.users.models import User


def channel_email_address(user: User, stream_id: int, sender_id: int | None) -> str:
    """GET /streams/{id}/email_address: for those who may post in the channel ("Invalid channel ID"
    for others who cannot read it; "You do not have permission to post in this channel."), with
    `sender_id` the user or a bot they may administer ("No such bot", "Insufficient permission")."""
    stream, _ = access_stream_by_id(user, stream_id)
    if not is_user_in_group(stream.can_send_message_group_id, user):
        raise JsonableError("You do not have permission to post in this channel.")
    if sender_id is not None and sender_id != user.id:
        bot = User.objects.filter(realm_id=user.realm_id, id=sender_id, bot_type__isnull=False).first()
        if bot is None:
            raise JsonableError("No such bot")
        if not (user.is_admin or bot.bot_owner_id == user.id):
            raise JsonableError("Insufficient permission")
    return ""
