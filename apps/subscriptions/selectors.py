"""Reads of channels, subscriptions and topic policies, and who may see, join and administer a
channel (Zulip's rules, zerver/lib/streams.py).

- Metadata access (name, description, subscribers): public channels for everyone but guests;
  private channels for their subscribers, administrators and members of the channel's
  can_administer_channel_group, can_add_subscribers_group or can_subscribe_group. Without it a
  channel does not exist for the user: the errors are those of an unknown channel.
- Content access (joining, reading): public channels for everyone but guests; private ones for
  subscribers and members of can_subscribe_group or can_add_subscribers_group.
- Guests see only the channels they are subscribed to (and web-public ones).
- Creating channels: the organization's can_create_public_channel_group or
  can_create_private_channel_group (never guests).
"""

from collections.abc import Collection, Iterable
from functools import cached_property

from django.db.models import Q, QuerySet, Value
from django.db.models.functions import Upper

from apps.core.errors import JsonableError
from apps.groups.models import REALM_SETTINGS
from apps.groups.selectors import (
    member_ids_by_group,
    recursive_membership_group_ids,
    recursive_supergroup_ids,
    user_has_permission,
)
from apps.realms.models import Realm
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.users.models import Role, User

# Settings whose members see a private channel's metadata (and so receive its events).
METADATA_SETTINGS = ("can_administer_channel_group", "can_add_subscribers_group", "can_subscribe_group")
CONTENT_SETTINGS = ("can_add_subscribers_group", "can_subscribe_group")


class Membership:
    """The groups a user is in, read once (one query) and only if a rule needs them."""

    def __init__(self, user: User) -> None:
        self.user = user

    @cached_property
    def group_ids(self) -> set[int]:
        return recursive_membership_group_ids(self.user)

    def holds(self, stream: Stream, setting: str) -> bool:
        return user_has_permission(
            self.user, getattr(stream, f"{setting}_id"), Stream.SETTINGS[setting], self.group_ids
        )


def has_content_access(membership: Membership, stream: Stream, *, is_subscribed: bool) -> bool:
    user = membership.user
    if stream.is_web_public or is_subscribed:
        return True
    if user.is_guest:
        return False
    if stream.is_public:
        return True
    return any(membership.holds(stream, setting) for setting in CONTENT_SETTINGS)


def has_metadata_access(membership: Membership, stream: Stream, *, is_subscribed: bool) -> bool:
    user = membership.user
    if stream.is_web_public or is_subscribed:
        return True
    if user.is_guest:
        return False
    if stream.is_public or user.is_admin:
        return True
    return any(membership.holds(stream, setting) for setting in METADATA_SETTINGS)


def can_create_channels(membership: Membership, *, invite_only: bool) -> bool:
    """Whether the user may create private (`invite_only`) or public channels: Zulip's
    can_create_private_streams / can_create_public_streams, by the organization's settings."""
    name = "can_create_private_channel_group" if invite_only else "can_create_public_channel_group"
    user = membership.user
    return user_has_permission(user, getattr(user.realm, f"{name}_id"), REALM_SETTINGS[name], membership.group_ids)


def can_administer(membership: Membership, stream: Stream) -> bool:
    """Whether the user may change the channel's settings (the caller checked they can see it)."""
    return membership.user.is_admin or membership.holds(stream, "can_administer_channel_group")


def active_subscription(user: User, stream: Stream) -> Subscription | None:
    return Subscription.objects.filter(user=user, stream=stream, active=True).first()


def _access(
    user: User, stream: Stream | None, error: str, *, require_content_access: bool, allow_archived: bool
) -> tuple[Stream, Subscription | None]:
    if stream is None or (stream.deactivated and not allow_archived):
        raise JsonableError(error)
    sub = active_subscription(user, stream)
    membership = Membership(user)
    allowed = (
        has_content_access(membership, stream, is_subscribed=sub is not None)
        if require_content_access
        else has_metadata_access(membership, stream, is_subscribed=sub is not None)
    )
    if not allowed:
        raise JsonableError(error)
    return stream, sub


def access_stream_by_id(
    user: User, stream_id: int, *, require_content_access: bool = True, allow_archived: bool = False
) -> tuple[Stream, Subscription | None]:
    """The channel and the user's active subscription to it; "Invalid channel ID" for channels that
    do not exist, are another organization's, or that the user may not see."""
    stream = Stream.objects.filter(realm_id=user.realm_id, id=stream_id).first()
    return _access(
        user,
        stream,
        "Invalid channel ID",
        require_content_access=require_content_access,
        allow_archived=allow_archived,
    )


def access_stream_by_name(
    user: User, name: str, *, require_content_access: bool = True
) -> tuple[Stream, Subscription | None]:
    stream = get_stream_by_name(user.realm, name)
    return _access(
        user,
        stream,
        f"Invalid channel name '{name}'",
        require_content_access=require_content_access,
        allow_archived=False,
    )


def get_stream_by_name(realm: Realm, name: str) -> Stream | None:
    return Stream.objects.filter(realm=realm, name__iexact=name.strip()).first()


def streams_by_name(realm: Realm, names: Iterable[str]) -> dict[str, Stream]:
    """{lower-cased name: channel} for the channels of these names (archived ones too), in one query."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    # Both sides upper-cased by the database, as the unique constraint does: Python's case mapping
    # differs from the database's beyond ASCII ("équipe" on SQLite, "ß" on PostgreSQL).
    streams = Stream.objects.filter(realm=realm).annotate(upper_name=Upper("name"))
    return {s.name.lower(): s for s in streams.filter(upper_name__in=[Upper(Value(name)) for name in wanted])}


def subscriber_ids_by_stream(stream_ids: Collection[int]) -> dict[int, set[int]]:
    """{channel id: ids of its active subscribers who are active users}, one query."""
    result: dict[int, set[int]] = {stream_id: set() for stream_id in stream_ids}
    rows = Subscription.objects.filter(stream_id__in=stream_ids, active=True, user__is_active=True).values_list(
        "stream_id", "user_id"
    )
    for stream_id, user_id in rows:
        result[stream_id].add(user_id)
    return result


def metadata_access_user_ids(realm: Realm | int, streams: Collection[Stream]) -> dict[int, set[int]]:
    """{channel id: the active users who can see it}: who hears of its changes. A fixed number of
    queries, however many channels."""
    streams = list(streams)
    if not streams:
        return {}
    realm_id = realm if isinstance(realm, int) else realm.id
    users = list(User.objects.filter(realm_id=realm_id, is_active=True).values_list("id", "role"))
    non_guests = {uid for uid, role in users if role != Role.GUEST}
    admins = {uid for uid, role in users if role in (Role.OWNER, Role.ADMINISTRATOR)}
    subscribers = subscriber_ids_by_stream([s.id for s in streams])
    private = [s for s in streams if not s.is_public]
    group_ids = {getattr(s, f"{name}_id") for s in private for name in METADATA_SETTINGS}
    group_members = member_ids_by_group(group_ids) if group_ids else {}
    result: dict[int, set[int]] = {}
    for stream in streams:
        if stream.is_public:
            result[stream.id] = non_guests | subscribers[stream.id]
        else:
            via_groups = set().union(*(group_members[getattr(stream, f"{name}_id")] for name in METADATA_SETTINGS))
            result[stream.id] = subscribers[stream.id] | admins | (via_groups & non_guests)
    return result


def private_streams_seen_through_groups(realm_id: int, group_ids: Collection[int]) -> list[Stream]:
    """The active private channels whose metadata the members of these groups (or of any group
    containing them) may see through the channel's settings: who sees them changes with the groups'
    members. Two queries."""
    groups = recursive_supergroup_ids(group_ids)
    if not groups:
        return []
    through = Q()
    for name in METADATA_SETTINGS:
        through |= Q(**{f"{name}_id__in": groups})
    return list(Stream.objects.filter(through, realm_id=realm_id, invite_only=True, deactivated=False).order_by("id"))


def subscriptions_of_user(user: User) -> list[Subscription]:
    """All the user's subscription rows (active and not), with their channels, one query."""
    return list(Subscription.objects.filter(user=user).select_related("stream").order_by("stream__name", "stream_id"))


def visible_streams(user: User, *, include_archived: bool = False) -> list[Stream]:
    """Every channel of the organization the user has metadata access to, sorted by name."""
    streams = Stream.objects.filter(realm_id=user.realm_id)
    if not include_archived:
        streams = streams.filter(deactivated=False)
    streams = list(streams.order_by("name"))
    subscribed = set(
        Subscription.objects.filter(user=user, active=True, stream__in=streams).values_list("stream_id", flat=True)
    )
    membership = Membership(user)
    return [s for s in streams if has_metadata_access(membership, s, is_subscribed=s.id in subscribed)]


def user_topics_of_user(user: User) -> list[UserTopic]:
    """The user's topic policies in channels they can still see exist (one query)."""
    return list(UserTopic.objects.filter(user=user, stream__deactivated=False).select_related("stream").order_by("id"))


def is_subscribed(user: User | int, stream: Stream | int) -> bool:
    """Whether the user (a user or their id) is an active subscriber of the channel, one query."""
    return Subscription.objects.filter(user=user, stream=stream, active=True).exists()


def subscribed_stream_ids(user: User, *, active: bool = True, muted: bool | None = None) -> QuerySet:
    """The ids of the channels the user is subscribed to (`active=False`: those they left; `muted`:
    only the muted, or only the unmuted, ones), as a query: a subquery of another, or one query."""
    rows = Subscription.objects.filter(user=user, active=active)
    if muted is not None:
        rows = rows.filter(is_muted=muted)
    return rows.values_list("stream_id", flat=True)
