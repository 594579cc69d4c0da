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
- Subscribing others: the organization's can_add_subscribers_group, or per channel its
  administrators and can_add_subscribers_group (never guests).
"""

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from functools import cached_property
from typing import Any

from django.db.models import Q, QuerySet, Value
from django.db.models.functions import Upper

from apps.core.errors import JsonableError
from apps.groups.models import REALM_SETTINGS, UserGroup
from apps.groups.selectors import (
    member_ids_by_group,
    recursive_membership_group_ids,
    recursive_supergroup_ids,
    setting_values_for_api,
    user_has_permission,
)
from apps.realms.models import Realm
from apps.subscriptions.errors import CannotAdministerChannelError, StreamDoesNotExistError
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.serializers import stream_to_dict, subscription_to_dict
from apps.users.models import Role, User

# Settings whose members see a private channel's metadata (and so receive its events).
METADATA_SETTINGS = ("can_administer_channel_group", "can_add_subscribers_group", "can_subscribe_group")
CONTENT_SETTINGS = ("can_add_subscribers_group", "can_subscribe_group")


class Membership:
    """The groups a user is in, read once (one query) and only if a rule needs them."""

    def __init__(self, user: User, group_ids: Collection[int] | None = None) -> None:
        self.user = user
        if group_ids is not None:  # read already
            self.__dict__["group_ids"] = set(group_ids)

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
    return has_realm_setting(membership, name)


def can_administer(membership: Membership, stream: Stream) -> bool:
    """Whether the user may change the channel's settings (the caller checked they can see it)."""
    return membership.user.is_admin or membership.holds(stream, "can_administer_channel_group")


def channels_closed_to_adding_subscribers(
    membership: Membership, streams: Iterable[Stream], *, allow_default: bool = False
) -> list[Stream]:
    """Those of these channels (whose content the caller checked the user may access) to which the
    user may not subscribe others, as Zulip's get_streams_to_which_user_cannot_add_subscribers: all
    of them for guests; none for administrators and the organization's can_add_subscribers_group;
    else those the user neither administers nor holds can_add_subscribers_group of (nor, with
    `allow_default`, default channels: an invitation may name those)."""
    user = membership.user
    if user.is_guest:
        return list(streams)
    if user.is_admin or has_realm_setting(membership, "can_add_subscribers_group"):
        return []
    return [
        stream
        for stream in streams
        if not (allow_default and stream.is_default)
        and not can_administer(membership, stream)
        and not membership.holds(stream, "can_add_subscribers_group")
    ]


def has_realm_setting(membership: Membership, name: str) -> bool:
    user = membership.user
    return user_has_permission(user, getattr(user.realm, f"{name}_id"), REALM_SETTINGS[name], membership.group_ids)


# --- whether a user is subscribed ---------------------------------------------------------------


def subscribed_stream_ids(
    user: User | int, streams: Iterable[Stream] | None = None, *, active: bool = True, muted: bool | None = None
) -> QuerySet:
    """The ids of the channels (of `streams`, else any) the user (or user id) is subscribed to:
    actively, or (`active=False`) those they left; with `muted`, only the muted or the unmuted ones.
    A query: evaluate it (one query) or use it in another. The one way to ask "is this user
    subscribed"."""
    subs = Subscription.objects.filter(user=user, active=active)
    if streams is not None:
        subs = subs.filter(stream__in=list(streams))
    if muted is not None:
        subs = subs.filter(is_muted=muted)
    return subs.values_list("stream_id", flat=True)


def subscribed_stream_ids_of_users(user_ids: Collection[int]) -> set[int]:
    """The channels (archived ones too) any of these users is actively subscribed to. One query."""
    return set(Subscription.objects.filter(user_id__in=user_ids, active=True).values_list("stream_id", flat=True))


def is_subscribed(user: User | int, stream: Stream | int) -> bool:
    """Whether the user (or user id) is an active subscriber of the channel (or channel id). One query."""
    return subscribed_stream_ids(user).filter(stream=stream).exists()


def subscribed_pairs(user_ids: Collection[int], stream_ids: Collection[int]) -> set[tuple[int, int]]:
    """(user id, channel id) of each of these users actively subscribed to each of these channels
    (subscribed_stream_ids for many users). One query."""
    subs = Subscription.objects.filter(user_id__in=user_ids, stream_id__in=stream_ids, active=True)
    return set(subs.values_list("user_id", "stream_id"))


def active_subscription(user: User, stream: Stream) -> Subscription | None:
    """The user's active subscription row (their settings for the channel), if any."""
    return Subscription.objects.filter(user=user, stream=stream, active=True).first()


# --- access: a channel the user may not see does not exist for them -------------------------------


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


def access_stream_to_administer(user: User, stream_id: int, *, allow_archived: bool) -> Stream:
    """The channel, if the user may change its settings; "Invalid channel ID" if they cannot see
    it (or, unless `allow_archived`, it is archived: gone for clients), CANNOT_ADMINISTER_CHANNEL if
    they can see it but not administer it."""
    stream = Stream.objects.filter(realm_id=user.realm_id, id=stream_id).select_related("realm").first()
    if stream is None:
        raise JsonableError("Invalid channel ID")
    membership = Membership(user)
    if not can_administer(membership, stream):
        if has_metadata_access(membership, stream, is_subscribed=is_subscribed(user, stream)):
            raise CannotAdministerChannelError()
        raise JsonableError("Invalid channel ID")
    if stream.deactivated and not allow_archived:
        raise JsonableError("Invalid channel ID")
    return stream


def access_streams_by_names(user: User, names: Sequence[str]) -> list[Stream]:
    """The channels of these names (stripped), each once, in the order named; STREAM_DOES_NOT_EXIST
    for the first the user cannot see (as for one that does not exist). A fixed number of queries."""
    names = [name.strip() for name in names]
    found = streams_by_name(user.realm, names)
    membership = Membership(user)
    subscribed = set(subscribed_stream_ids(user, found.values()))
    streams = []
    for name in names:
        stream = found.get(name.lower())
        if stream is None or not has_metadata_access(membership, stream, is_subscribed=stream.id in subscribed):
            raise StreamDoesNotExistError(name)
        streams.append(stream)
    return list(dict.fromkeys(streams))


def access_stream_for_user_topic(user: User, stream_id: int, *, removing: bool) -> Stream:
    """The channel of a topic policy the user sets. Removing a policy needs no access to the
    channel any more, only a policy in it to remove; otherwise (and without one) the channel must
    be one the user could set a policy in (access_stream_by_id's rules)."""
    if removing:
        stream = Stream.objects.filter(realm_id=user.realm_id, id=stream_id).first()
        if stream is not None and UserTopic.objects.filter(user=user, stream=stream).exists():
            return stream
    stream, _ = access_stream_by_id(user, stream_id)
    return stream


# --- channels and their subscribers ---------------------------------------------------------------


def get_stream_by_name(realm: Realm, name: str) -> Stream | None:
    return Stream.objects.filter(realm=realm, name__iexact=name.strip()).first()


def streams_by_name(realm: Realm | int, names: Iterable[str]) -> dict[str, Stream]:
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


def metadata_access_user_ids(
    realm: Realm | int, streams: Collection[Stream], *, subscribers: dict[int, set[int]] | None = None
) -> dict[int, set[int]]:
    """{channel id: the active users who can see it}: who hears of its changes. A fixed number of
    queries, however many channels (one fewer when the caller has read their `subscribers`)."""
    streams = list(streams)
    if not streams:
        return {}
    realm_id = realm if isinstance(realm, int) else realm.id
    users = list(User.objects.filter(realm_id=realm_id, is_active=True).values_list("id", "role"))
    non_guests = {uid for uid, role in users if role != Role.GUEST}
    admins = {uid for uid, role in users if role in (Role.OWNER, Role.ADMINISTRATOR)}
    if subscribers is None:
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


def guests_not_subscribed(realm_id: int, stream_ids: Collection[int]) -> dict[int, set[int]]:
    """{channel id: the organization's active guests not subscribed to it}: those who do not see a
    public channel (everyone else does). Costs the organization's guests, not its people: one query,
    two when it has guests."""
    guests = set(User.objects.filter(realm_id=realm_id, is_active=True, role=Role.GUEST).values_list("id", flat=True))
    result = {stream_id: set(guests) for stream_id in stream_ids}
    if guests:
        rows = Subscription.objects.filter(stream_id__in=stream_ids, active=True, user_id__in=guests)
        for stream_id, user_id in rows.values_list("stream_id", "user_id"):
            result[stream_id].discard(user_id)
    return result


def settings_using_groups(realm_id: int, group_ids: Collection[int]) -> list[tuple[Stream, list[str]]]:
    """(channel, the names of its settings) for each active channel whose group settings are one of
    these groups, by channel id (what stops the groups being deactivated)."""
    result = []
    for stream in Stream.objects.filter(realm_id=realm_id, deactivated=False).order_by("id"):
        names = [name for name in Stream.SETTINGS if getattr(stream, f"{name}_id") in group_ids]
        if names:
            result.append((stream, names))
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


def subscription_rows(user_ids: Collection[int], stream_ids: Collection[int]) -> dict[tuple[int, int], Subscription]:
    """{(user id, channel id): row} of these users' subscriptions to these channels, active or
    not (a rejoin reactivates the row, with its settings). One query."""
    subs = Subscription.objects.filter(user_id__in=user_ids, stream_id__in=stream_ids)
    return {(sub.user_id, sub.stream_id): sub for sub in subs}


def used_colors_by_user(user_ids: Collection[int]) -> defaultdict[int, set[str]]:
    """{user id: the colors of their subscriptions}: a new one takes a color not used yet. One query."""
    result: dict[int, set[str]] = defaultdict(set)
    for user_id, color in Subscription.objects.filter(user_id__in=user_ids).values_list("user_id", "color"):
        result[user_id].add(color)
    return result


def active_subscriptions_of_users(user_ids: Collection[int]) -> list[Subscription]:
    """These users' active subscriptions to channels not archived, with their channels. One query."""
    subs = Subscription.objects.filter(user_id__in=user_ids, active=True, stream__deactivated=False)
    return list(subs.select_related("stream"))


def subscriptions_of_user(user: User) -> list[Subscription]:
    """All the user's subscription rows (active and not), with their channels, one query."""
    return list(Subscription.objects.filter(user=user).select_related("stream").order_by("stream__name", "stream_id"))


def _visible_streams(user: User, *, include_archived: bool) -> tuple[list[Stream], set[int]]:
    """visible_streams, and the ids of those the user is subscribed to."""
    streams = Stream.objects.filter(realm_id=user.realm_id)
    if not include_archived:
        streams = streams.filter(deactivated=False)
    streams = list(streams.order_by("name"))
    subscribed = set(subscribed_stream_ids(user, streams))
    membership = Membership(user)
    visible = [s for s in streams if has_metadata_access(membership, s, is_subscribed=s.id in subscribed)]
    return visible, subscribed


def visible_streams(user: User, *, include_archived: bool = False) -> list[Stream]:
    """Every channel of the organization the user has metadata access to, sorted by name."""
    return _visible_streams(user, include_archived=include_archived)[0]


# --- wire shapes in bulk --------------------------------------------------------------------------


def stream_dicts(streams: Sequence[Stream], *, subscriber_ids: dict[int, set[int]] | None = None) -> dict[int, dict]:
    """{channel id: BasicChannel} for these channels of one organization, a fixed number of queries
    (none for subscribers: their count is the channel's, or that of `subscriber_ids` when the caller
    has read them)."""
    if not streams:
        return {}
    realm_id = streams[0].realm_id
    group_ids = {getattr(s, f"{name}_id") for s in streams for name in Stream.SETTINGS}
    values = setting_values_for_api(realm_id, group_ids)
    names = dict(UserGroup.objects.filter(id__in=group_ids).values_list("id", "name"))
    return {
        s.id: stream_to_dict(
            s,
            values,
            subscriber_count=s.subscriber_count if subscriber_ids is None else len(subscriber_ids[s.id]),
            group_names=names,
        )
        for s in streams
    }


def streams_for_list(
    user: User,
    *,
    include_public: bool,
    include_web_public: bool,
    include_subscribed: bool,
    include_all: bool,
    include_archived: bool,
    include_default: bool,
    include_owner_subscribed: bool = False,
) -> list[dict[str, Any]]:
    """GET /streams: the channels the user can see, as asked (with `include_all`, every one the
    user has metadata access to, Zulip's rule), sorted by name; with `include_default`, each says
    whether it is one of the organization's default channels; with `include_owner_subscribed`, a
    bot's list has its owner's channels too (Zulip's do_get_streams). A fixed number of queries."""
    streams, subscribed = _visible_streams(user, include_archived=include_archived)
    owners: set[int] = set()
    if include_owner_subscribed and user.is_bot and user.bot_owner_id is not None:
        owner_streams, owner_subscribed = _visible_streams(user.bot_owner, include_archived=include_archived)
        known = {stream.id for stream in streams}
        owners = {stream.id for stream in owner_streams if stream.id in owner_subscribed}
        extra = [stream for stream in owner_streams if stream.id in owners and stream.id not in known]
        streams = sorted([*streams, *extra], key=lambda stream: stream.name)

    def wanted(stream: Stream) -> bool:
        if include_all or stream.id in owners:
            return True
        if include_subscribed and stream.id in subscribed:
            return True
        if include_public and stream.is_public and not user.is_guest:
            return True
        return include_web_public and stream.is_web_public

    shown = [s for s in streams if wanted(s)]
    shapes = stream_dicts(shown)
    if include_default:
        for stream in shown:
            shapes[stream.id]["is_default"] = stream.is_default and not stream.deactivated
    return list(shapes.values())


def subscriptions_for_list(user: User, *, include_subscribers: bool) -> list[dict[str, Any]]:
    """GET /users/me/subscriptions: the user's active subscriptions to channels not archived, with
    their subscribers if asked. A fixed number of queries."""
    subs = [s for s in subscriptions_of_user(user) if s.active and not s.stream.deactivated]
    subscribers = subscriber_ids_by_stream([s.stream_id for s in subs]) if include_subscribers else None
    shapes = stream_dicts([s.stream for s in subs], subscriber_ids=subscribers)
    return [
        subscription_to_dict(
            sub, shapes[sub.stream_id], subscribers=None if subscribers is None else sorted(subscribers[sub.stream_id])
        )
        for sub in subs
    ]


def channel_peer_ids(user_ids: list[int]) -> dict[int, set[int]]:
    """For each of `user_ids`, the active people subscribed to a channel they are subscribed to
    (themselves included). One query."""
    peers: dict[int, set[int]] = defaultdict(set)
    rows = (
        Subscription.objects.filter(
            active=True,
            user__is_active=True,
            stream__subscriptions__user_id__in=user_ids,
            stream__subscriptions__active=True,
        )
        .values_list("stream__subscriptions__user_id", "user_id")
        .distinct()
    )
    for user_id, peer_id in rows:
        peers[user_id].add(peer_id)
    return peers
