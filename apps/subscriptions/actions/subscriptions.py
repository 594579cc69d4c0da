"""Subscribing and unsubscribing, with the peer events that keep everyone's subscriber lists in
step (a user's settings for a channel: subscription_settings.py).

Subscription changes lock the channels' rows first, so concurrent subscribes and unsubscribes of
the same channel run one after the other and each sees the other's result. Zulip's SUBSCRIPTION_*
audit log entries are not written (Parley's log records organization changes).
"""

import functools
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from django.db import transaction

from apps.core.errors import JsonableError
from apps.events.backends import Everyone
from apps.events.publish import send_event_on_commit
from apps.realms.limits import MAX_BULK_NEW_SUBSCRIPTION_MESSAGES
from apps.realms.models import Realm
from apps.subscriptions.actions.access import (
    send_stream_access_changes,
    send_stream_creation,
    send_subscription_adds,
    send_subscription_lists,
)
from apps.subscriptions.actions.channels import (
    ChannelNameTakenError,
    NewChannel,
    NewChannelOptions,
    announce_streams,
    check_create_streams,
    check_new_channel_options,
    check_stream_name,
    lock_streams,
    recount_subscribers,
)
from apps.subscriptions.errors import ChannelExistsError
from apps.subscriptions.hooks import subscribed_by_someone
from apps.subscriptions.models import Stream, Subscription
from apps.subscriptions.principals import controls
from apps.subscriptions.realm_channels import default_channels
from apps.subscriptions.selectors import (
    Membership,
    active_subscriptions_of_users,
    can_administer,
    channels_closed_to_adding_subscribers,
    guests_not_subscribed,
    has_content_access,
    metadata_access_user_ids,
    streams_by_name,
    subscribed_pairs,
    subscribed_stream_ids,
    subscribed_stream_ids_of_users,
    subscriber_ids_by_stream,
    subscription_rows,
    used_colors_by_user,
)
from apps.subscriptions.serializers import (
    STREAM_ASSIGNMENT_COLORS,
)
from apps.users.access import access_changes_announced
from apps.users.models import Role, User

# --- subscribing and unsubscribing ----------------------------------------------------------------


def _pick_color(used: set[str]) -> str:
    for color in STREAM_ASSIGNMENT_COLORS:
        if color not in used:
            return color
    return STREAM_ASSIGNMENT_COLORS[len(used) % len(STREAM_ASSIGNMENT_COLORS)]


@dataclass(frozen=True)
class SubscriptionChange:
    user: User
    stream: Stream


@transaction.atomic
def bulk_add_subscriptions(
    realm: Realm,
    streams: Sequence[Stream],
    users: Sequence[User],
    *,
    color_map: dict[str, str] | None = None,
    created: Collection[Stream] = (),
    just_created: bool = False,
    acting_user: User | None,
) -> tuple[list[SubscriptionChange], list[SubscriptionChange]]:
    """Subscribe every user to every channel; returns (subscribed, already subscribed).

    A fixed number of queries, however many users (a rejoin reactivates the old row, keeping its
    settings). `created` channels are announced to everyone who can see them. Emits, in this order:
    stream/create (new channels; existing ones to new subscribers who could not see them: private
    channels' and guests'),
    subscription/add to each new subscriber, subscription/peer_add to the channels' other viewers,
    realm_user/add to guests who now see someone they could not (apps/users/access.py). Users
    `just_created` (in this transaction) have no event queue: nothing is sent to them, and the
    subscribers of public channels are not read.
    """
    with access_changes_announced(realm, lambda: _guests_concerned(users, streams)) as announce_access:
        return _subscribe(
            realm,
            streams,
            users,
            color_map=color_map,
            created=created,
            before_peers=announce_access,
            just_created=just_created,
        )


def _subscribe(
    realm: Realm,
    streams: Sequence[Stream],
    users: Sequence[User],
    *,
    color_map: dict[str, str] | None,
    created: Collection[Stream],
    before_peers: Callable[[], None],
    just_created: bool = False,
) -> tuple[list[SubscriptionChange], list[SubscriptionChange]]:
    color_map = {name.lower(): color for name, color in (color_map or {}).items()}
    counts = lock_streams(streams)
    user_ids = [u.id for u in users]
    rows = subscription_rows(user_ids, [s.id for s in streams])
    # Read once, under the lock: the subscribers of the channels whose lists the new subscribers are
    # sent (not to users `just_created`: they have no event queue yet) or which decide who sees the
    # channel (a private one), and who sees those private ones. A public channel is seen by everyone
    # but the guests not subscribed to it: its peer_add goes to everyone but them, and its people are
    # not read (a person created into default channels of 10,000 people read them three times).
    read = [s for s in streams if not (just_created and s.is_public)]
    subscribers = subscriber_ids_by_stream([s.id for s in read])
    private_viewers = metadata_access_user_ids(realm, [s for s in read if not s.is_public], subscribers=subscribers)
    used_colors = used_colors_by_user(user_ids)

    subscribed, already, new_rows, reactivated = [], [], [], []
    for user in users:
        for stream in streams:
            sub = rows.get((user.id, stream.id))
            if sub is not None and sub.active:
                already.append(SubscriptionChange(user, stream))
                continue
            subscribed.append(SubscriptionChange(user, stream))
            if sub is not None:
                sub.active = True
                reactivated.append(sub)
            else:
                color = color_map.get(stream.name.lower()) or _pick_color(used_colors[user.id])
                used_colors[user.id].add(color)
                sub = Subscription(user=user, stream=stream, color=color)
                new_rows.append(sub)
            rows[(user.id, stream.id)] = sub
    Subscription.objects.bulk_create(new_rows)
    if reactivated:
        Subscription.objects.filter(id__in=[sub.id for sub in reactivated]).update(active=True)
    # Subscribers are active users (as the database has them: the count must not drift); whoever
    # now subscribes can see the channel, and nobody else's view of it changes.
    active = set(User.objects.filter(id__in=user_ids, is_active=True).values_list("id", flat=True))
    # Who could not see a channel before: of a private one, who was not among its viewers; of a
    # public one, a guest (who was not subscribed).
    newly_visible = [
        change
        for change in subscribed
        if change.stream not in created
        and (
            change.user.role == Role.GUEST
            if change.stream.is_public
            else change.user.id not in private_viewers[change.stream.id]
        )
    ]
    for change in subscribed:
        if change.user.id in active:
            counts[change.stream.id] += 1
            for known in (subscribers, private_viewers):
                if change.stream.id in known:
                    known[change.stream.id].add(change.user.id)
    # Counted afresh where the subscribers were read; elsewhere the count as locked, plus those added.
    counts.update((stream_id, len(ids)) for stream_id, ids in subscribers.items())
    recount_subscribers({change.stream for change in subscribed}, counts=counts)
    if not subscribed and not created:
        return subscribed, already

    # As Zulip's, new channels are announced as they were made, without subscribers: the
    # peer_add events that follow count them in for clients keeping subscriber_count.
    send_stream_creation(realm, list(created), subscriber_ids={stream.id: set() for stream in created})
    if not just_created:
        for stream in {c.stream for c in newly_visible}:
            told = {c.user.id for c in newly_visible if c.stream == stream and c.user.id in active}
            send_stream_creation(realm, [stream], subscriber_ids=subscribers, viewers={stream.id: told})
        subs = [rows[(change.user.id, change.stream.id)] for change in subscribed]
        send_subscription_adds(realm, streams, subs, subscribers=subscribers)
    before_peers()  # the people guests now see are told before they are named subscribers (as Zulip)
    public = [s.id for s in streams if s.is_public]
    unseen_by = guests_not_subscribed(realm.id, public) if public else {}
    audience = {**{sid: Everyone(tuple(guests)) for sid, guests in unseen_by.items()}, **private_viewers}
    _send_peer_events(realm, "peer_add", subscribed, audience)
    return subscribed, already


def _send_peer_events(
    realm: Realm, op: str, changes: list[SubscriptionChange], audience: dict[int, set[int] | Everyone] | None = None
) -> None:
    """Emits: subscription/peer_add or peer_remove {stream_ids, user_ids} to those who can see the
    channels (`audience`, when the caller has read it already: ids, or Everyone but those who do not
    see it), but not to the users concerned (they have their own event): one event per set of
    channels with the same users and the same audience."""
    if not changes:
        return
    users_by_stream: dict[int, set[int]] = defaultdict(set)
    streams = {}
    for change in changes:
        users_by_stream[change.stream.id].add(change.user.id)
        streams[change.stream.id] = change.stream
    if audience is None:
        audience = metadata_access_user_ids(realm, list(streams.values()))
    grouped: dict[tuple[frozenset[int], frozenset[int] | Everyone], list[int]] = defaultdict(list)
    for stream_id, user_ids in users_by_stream.items():
        seers = audience[stream_id]
        if isinstance(seers, Everyone):
            recipients: frozenset[int] | Everyone = Everyone(tuple(sorted({*seers.except_ids, *user_ids})))
        elif not (recipients := frozenset(seers - user_ids)):
            continue
        grouped[(frozenset(user_ids), recipients)].append(stream_id)
    for (user_ids, recipients), stream_ids in grouped.items():
        event = {"type": "subscription", "op": op, "stream_ids": sorted(stream_ids), "user_ids": sorted(user_ids)}
        send_event_on_commit(realm, event, recipients)


def send_peer_events_for_activation(realm: Realm | int, users: Sequence[User], *, op: str) -> None:
    """Subscriber lists hold active users only: a deactivated user leaves those of their channels, a
    reactivated one comes back (Zulip's peer_remove at deactivation, peer_add at reactivation).
    Emits: subscription/peer_remove or peer_add to those who see the channels (see _send_peer_events)."""
    by_id = {user.id: user for user in users}
    stream_ids = subscribed_stream_ids_of_users(by_id)
    # Locked before they are counted, as subscribing locks them (the directory QA pass: a deactivation
    # deadlocked with people being created into the same channels).
    lock_streams(stream_ids)
    recount_subscribers(stream_ids)
    rows = active_subscriptions_of_users(by_id)
    _send_peer_events(realm, op, [SubscriptionChange(by_id[row.user_id], row.stream) for row in rows])


@transaction.atomic
def bulk_remove_subscriptions(
    realm: Realm, users: Sequence[User], streams: Sequence[Stream], *, acting_user: User | None
) -> tuple[list[SubscriptionChange], list[SubscriptionChange]]:
    """Unsubscribe every user from every channel; returns (removed, not subscribed).

    The rows stay, inactive, with their settings. Emits: subscription/remove {subscriptions:
    [{stream_id, name}]} to each user who left, then subscription/peer_remove to the channels'
    other viewers (read before the change, so a private channel's viewers still hear of it), then
    stream/delete to those who can no longer see a channel at all (a guest leaving a public one, a
    member leaving a private one), as Zulip's bulk_remove_subscriptions; then realm_user/remove to
    guests who no longer see someone (apps/users/access.py).
    """
    with access_changes_announced(realm, lambda: _guests_concerned(users, streams)):
        return _unsubscribe(realm, users, streams)


def _unsubscribe(
    realm: Realm, users: Sequence[User], streams: Sequence[Stream]
) -> tuple[list[SubscriptionChange], list[SubscriptionChange]]:
    lock_streams(streams)
    active = subscribed_pairs([u.id for u in users], [s.id for s in streams])
    removed, not_subscribed = [], []
    for user in users:
        for stream in streams:
            target = removed if (user.id, stream.id) in active else not_subscribed
            target.append(SubscriptionChange(user, stream))
    if not removed:
        return removed, not_subscribed
    left_ids = {change.stream.id for change in removed}
    left = [stream for stream in streams if stream.id in left_ids]
    could_see = metadata_access_user_ids(realm, left)  # the audience as it was
    _send_peer_events(realm, "peer_remove", removed, could_see)
    Subscription.objects.filter(stream__in=streams, user__in=users, active=True).update(active=False)
    recount_subscribers(left)
    by_user: dict[int, list[dict]] = defaultdict(list)
    for change in removed:
        by_user[change.user.id].append({"stream_id": change.stream.id, "name": change.stream.name})
    send_subscription_lists(realm, "remove", by_user)
    send_stream_access_changes(realm, left, could_see)
    return removed, not_subscribed


def _guests_concerned(users: Sequence[User], streams: Sequence[Stream]) -> list[int]:
    """Whose view of people a change of these subscriptions may change (apps/users/access.py): the
    users, and the guests subscribed to the channels."""
    subscribed_guests = Subscription.objects.filter(stream__in=streams, active=True, user__role=Role.GUEST)
    return [*(user.id for user in users), *subscribed_guests.values_list("user_id", flat=True)]


def join_new_person_channels(user: User, *, join_default: bool, channel_ids: Sequence[int]) -> None:
    """A person who joined the organization joins the channels their invitation names (those not
    archived meanwhile) and, unless it says otherwise, its default channels, as Zulip's
    set_up_streams_for_new_human_user; in the transaction creating them (person_created). Emits: see
    bulk_add_subscriptions (nothing to the person, who has no event queue yet)."""
    streams = {stream.id: stream for stream in default_channels(user.realm_id)} if join_default else {}
    for stream in Stream.objects.filter(realm_id=user.realm_id, id__in=channel_ids, deactivated=False):
        streams.setdefault(stream.id, stream)
    if streams:
        ordered = [streams[sid] for sid in sorted(streams)]
        bulk_add_subscriptions(user.realm, ordered, [user], just_created=True, acting_user=None)


def _names_by_user(changes: list[SubscriptionChange]) -> dict[str, list[str]]:
    result: dict[str, list[str]] = defaultdict(list)
    for change in changes:
        result[str(change.user.id)].append(change.stream.name)
    return dict(result)


P = ParamSpec("P")
R = TypeVar("R")


def _again_if_a_name_was_taken(function: Callable[P, R]) -> Callable[P, R]:
    """`function` once more when another request created one of the channels it was creating
    (between its lookup and its insert): the channel exists then, and the second run subscribes to
    it as to any other, after the same checks (it may be one the user cannot see)."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except ChannelNameTakenError:
            return function(*args, **kwargs)

    return run


@_again_if_a_name_was_taken
@transaction.atomic
def check_add_subscriptions(
    channels: Sequence[NewChannel],
    *,
    users: Sequence[User],
    authorization_errors_fatal: bool = True,
    options: NewChannelOptions | None = None,
    send_new_subscription_messages: bool = False,
    acting_user: User,
) -> dict[str, Any]:
    """POST /users/me/subscriptions: subscribe `users` (access_principals) to these channels,
    creating those that do not exist with these options (default: Zulip's; `acting_user` their
    creator).
    Everything is checked before anything changes; returns the endpoint's `subscribed`,
    `already_subscribed` (and, unless authorization errors are fatal, `unauthorized`; with
    `send_new_subscription_messages`, `new_subscription_messages_sent`: whether the people subscribed
    were few enough to be told, see tell_new_subscribers).

    Emits: see bulk_add_subscriptions. Audit: STREAM_CREATED for each channel created."""
    realm = acting_user.realm
    wanted: dict[str, NewChannel] = {}
    for channel in channels:
        name = check_stream_name(channel.name)
        wanted.setdefault(name.lower(), NewChannel(name, channel.description, channel.color))
    options = options or NewChannelOptions()
    folder = check_new_channel_options(acting_user, options)

    existing = streams_by_name(realm, [channel.name for channel in wanted.values()])
    membership = Membership(acting_user)
    subscribed_to = set(subscribed_stream_ids(acting_user, existing.values()))
    authorized, unauthorized = [], []
    for stream in existing.values():
        allowed = not stream.deactivated and has_content_access(
            membership, stream, is_subscribed=stream.id in subscribed_to
        )
        (authorized if allowed else unauthorized).append(stream)
    if unauthorized and authorization_errors_fatal:
        raise JsonableError(f"Unable to access channel ({unauthorized[0].name}).")
    # Subscribing others to existing channels takes a permission (to new ones, their creator may).
    if any(user.id != acting_user.id for user in users) and channels_closed_to_adding_subscribers(
        membership, authorized
    ):
        raise JsonableError("Insufficient permission")

    missing = [channel for key, channel in wanted.items() if key not in existing]
    created = check_create_streams(membership, missing, options, folder=folder)
    streams = [*authorized, *created]
    colors = {channel.name: channel.color for channel in wanted.values() if channel.color is not None}
    subscribed, already = bulk_add_subscriptions(
        realm, streams, users, color_map=colors, created=created, acting_user=acting_user
    )
    result: dict[str, Any] = {"subscribed": _names_by_user(subscribed), "already_subscribed": _names_by_user(already)}
    if send_new_subscription_messages:
        result["new_subscription_messages_sent"] = tell_new_subscribers(subscribed, created, acting_user=acting_user)
    announce_streams(created, options, acting_user=acting_user)
    if not authorization_errors_fatal:
        result["unauthorized"] = [stream.name for stream in unauthorized]
    return result


def tell_new_subscribers(
    subscribed: list[SubscriptionChange], created: Collection[Stream], *, acting_user: User
) -> bool:
    """Zulip's direct message from Notification Bot to each person `acting_user` subscribed to
    existing channels (not to themself, not to bots, not about the channels just created), when the
    request subscribed at most MAX_BULK_NEW_SUBSCRIPTION_MESSAGES people; whether it did."""
    if len({change.user.id for change in subscribed}) > MAX_BULK_NEW_SUBSCRIPTION_MESSAGES:
        return False
    streams_by_user: dict[User, list[Stream]] = defaultdict(list)
    for change in subscribed:
        if change.user.id != acting_user.id and not change.user.is_bot and change.stream not in created:
            streams_by_user[change.user].append(change.stream)
    if streams_by_user:
        subscribed_by_someone.call(acting_user, dict(streams_by_user))
    return True


@transaction.atomic
def check_create_channel(
    channel: NewChannel, *, subscribers: Sequence[User], options: NewChannelOptions, acting_user: User
) -> Stream:
    """POST /channels/create (Zulip 11): create the channel with these options and subscribe
    `subscribers` (none: nobody, not even its creator) to it. A channel of that name, archived or
    not, seen or not, is Zulip's 409 "Channel '...' already exists" (CHANNEL_ALREADY_EXISTS), as is
    one another request creates meanwhile. Otherwise the checks of check_add_subscriptions.

    Emits: see bulk_add_subscriptions. Audit: STREAM_CREATED."""
    name = check_stream_name(channel.name)
    folder = check_new_channel_options(acting_user, options)
    if streams_by_name(acting_user.realm_id, [name]):
        raise ChannelExistsError(name)
    try:
        [stream] = check_create_streams(
            Membership(acting_user), [NewChannel(name, channel.description)], options, folder=folder
        )
    except ChannelNameTakenError:
        raise ChannelExistsError(name) from None
    bulk_add_subscriptions(acting_user.realm, [stream], subscribers, created=[stream], acting_user=acting_user)
    announce_streams([stream], options, acting_user=acting_user)
    return stream


@transaction.atomic
def check_remove_subscriptions(
    streams: Sequence[Stream], *, users: Sequence[User], acting_user: User
) -> dict[str, list[str]]:
    """DELETE /users/me/subscriptions, for channels the user can see (access_streams_by_names).
    A user may always unsubscribe themself and their bots; others only as an administrator, a
    member of the channel's can_administer_channel_group or of its can_remove_subscribers_group
    ("Insufficient permission"). Returns the endpoint's `removed` and `not_removed`.

    Emits: see bulk_remove_subscriptions."""
    if any(not controls(acting_user, target) for target in users):
        membership = Membership(acting_user)
        for stream in streams:
            if not (can_administer(membership, stream) or membership.holds(stream, "can_remove_subscribers_group")):
                raise JsonableError("Insufficient permission")
    removed, not_subscribed = bulk_remove_subscriptions(acting_user.realm, users, streams, acting_user=acting_user)
    return {
        "removed": [change.stream.name for change in removed],
        "not_removed": [change.stream.name for change in not_subscribed],
    }
