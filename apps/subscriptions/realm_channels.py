"""Organization settings whose value is a channel (Zulip's moderation_request_channel and its
announcement channels), and the organization's default channels (those people join when they join
it): which channels they may be."""

from apps.core.errors import JsonableError
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import access_stream_by_id
from apps.users.models import User

MODERATION_CHANNEL_MUST_BE_PRIVATE = "Moderation request channel must be private."
DEFAULT_CHANNEL_MUST_BE_PUBLIC = "A default channel cannot be private."


def access_moderation_request_channel(user: User, channel_id: int) -> Stream | None:
    """PATCH /realm's moderation_request_channel_id: -1 for none, else a private channel of the
    organization the (administrator) user can see, as Zulip checks it."""
    if channel_id == -1:
        return None
    stream, _ = access_stream_by_id(user, channel_id, require_content_access=False)
    if not stream.invite_only:
        raise JsonableError(MODERATION_CHANNEL_MUST_BE_PRIVATE)
    return stream


def access_announcement_channel(user: User, channel_id: int) -> Stream | None:
    """PATCH /realm's new_stream_announcements_stream_id, signup_announcements_stream_id and
    zulip_update_announcements_stream_id: -1 for none, else a channel of the organization the
    (administrator) user may read, as Zulip checks them ("Invalid channel ID")."""
    if channel_id == -1:
        return None
    stream, _ = access_stream_by_id(user, channel_id)
    return stream


def default_channels(realm_id: int) -> list[Stream]:
    """The organization's default channels (never archived, never private), by id."""
    return list(Stream.objects.filter(realm_id=realm_id, is_default=True, deactivated=False).order_by("id"))


def access_channel_to_make_default(user: User, channel_id: int) -> Stream:
    """POST /default_streams' channel: one the (administrator) user can read, and public ("Private
    channels cannot be made default.", as Zulip says it)."""
    stream, _ = access_stream_by_id(user, channel_id)
    if stream.invite_only:
        raise JsonableError("Private channels cannot be made default.")
    return stream
