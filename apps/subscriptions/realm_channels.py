"""Organization settings whose value is a channel (Zulip's moderation_request_channel; its
new_stream_announcements_stream and the like when Parley has them): which channels they may be."""

from apps.core.errors import JsonableError
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import access_stream_by_id
from apps.users.models import User

MODERATION_CHANNEL_MUST_BE_PRIVATE = "Moderation request channel must be private."


def access_moderation_request_channel(user: User, channel_id: int) -> Stream | None:
    """PATCH /realm's moderation_request_channel_id: -1 for none, else a private channel of the
    organization the (administrator) user can see, as Zulip checks it."""
    if channel_id == -1:
        return None
    stream, _ = access_stream_by_id(user, channel_id, require_content_access=False)
    if not stream.invite_only:
        raise JsonableError(MODERATION_CHANNEL_MUST_BE_PRIVATE)
    return stream
