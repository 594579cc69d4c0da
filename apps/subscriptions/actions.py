"""Every change to channels, subscriptions and topic policies, with the events they emit.

Subscription changes lock the channels' rows first, so concurrent subscribes and unsubscribes of
the same channel run one after the other and each sees the other's result.
"""

import json
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core import ratelimit
from apps.core.errors import (
    ErrorCode,
    InvalidArgumentError,
    JsonableError,
    OrganizationOwnerRequiredError,
    RateLimitedError,
)
from apps.core.markdown import render_markdown
from apps.events.publish import send_event_on_commit
from apps.groups.actions.settings import (
    check_group_setting_change,
    check_group_setting_value,
    delete_unused_setting_group,
    normalize_group_setting_value,
)
from apps.groups.models import GROUP_CREATOR, SystemGroups, UserGroup
from apps.groups.selectors import setting_values_for_api, system_groups
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange, GroupSettingValue
from apps.realms.models import Realm
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.subscriptions.selectors import (
    Membership,
    can_administer,
    can_create_channels,
    has_content_access,
    has_metadata_access,
    metadata_access_user_ids,
    private_streams_seen_through_groups,
    streams_by_name,
    subscriber_ids_by_stream,
    visible_streams,
)
from apps.subscriptions.serializers import (
    STREAM_ASSIGNMENT_COLORS,
    NewSubscription,
    SubscribeParams,
    UpdateStreamParams,
    stream_to_dict,
    subscription_to_dict,
    user_topic_to_dict,
)
from apps.users.models import User
from apps.users.selectors import access_user_by_email

# --- wire shapes in bulk --------------------------------------------------------------------------


def stream_dicts(streams: Sequence[Stream], *, subscriber_ids: dict[int, set[int]] | None = None) -> dict[int, dict]:
    """{channel id: BasicChannel} for these channels of one organization, a fixed number of queries."""
    if not streams:
        return {}
    realm_id = streams[0].realm_id
    group_ids = {getattr(s, f"{name}_id") for s in streams for name in Stream.SETTINGS}
    values = setting_values_for_api(realm_id, group_ids)
    names = dict(UserGroup.objects.filter(id__in=group_ids).values_list("id", "name"))
    if subscriber_ids is None:
        subscriber_ids = subscriber_ids_by_stream([s.id for s in streams])
    return {
        s.id: stream_to_dict(s, values, subscriber_count=len(subscriber_ids[s.id]), group_names=names) for s in streams
    }


# --- creating channels ----------------------------------------------------------------------------


def check_stream_name(name: str) -> str:
    """Zulip's rules (zerver/lib/streams.py); returns the name stripped."""
    name = name.strip()
    if not name:
        raise JsonableError("Channel name can't be empty.")
    if len(name) > Stream.MAX_NAME_LENGTH:
        raise JsonableError(f"Channel name too long (limit: {Stream.MAX_NAME_LENGTH} characters).")
    position = unprintable_position(name)
    if position is not None:
        raise JsonableError(f"Invalid character in channel name, at position {position}.")
    return name


def unprintable_position(text: str) -> int | None:
    """The 1-based position of the first control, surrogate or non-character, as Zulip checks."""
    for position, char in enumerate(text, start=1):
        code = ord(char)
        noncharacter = 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE
        if unicodedata.category(char) in ("Cc", "Cs") or noncharacter:
            return position
    return None


def check_description(description: str) -> str:
    # Descriptions are one line, as in Zulip. (The API's parameters cap the length first; this
    # guards the operator command, whose text would otherwise overflow the column.)
    if len(description) > Stream.MAX_DESCRIPTION_LENGTH:
        raise JsonableError(f"Channel description too long (limit: {Stream.MAX_DESCRIPTION_LENGTH} characters).")
    return description.replace("\n", " ")


@dataclass(frozen=True)
class NewChannel:
    name: str
    description: str = ""


def resolve_channel_settings(
    realm: Realm, given: dict[str, GroupSettingValue], *, creator: User | None
) -> dict[str, UserGroup]:
    """The group of every setting of a new channel: the given values, else Zulip's defaults."""
    groups = system_groups(realm.id)
    nobody = groups[SystemGroups.NOBODY]
    result = {}
    for name, setting in Stream.SETTINGS.items():
        if name in given:
            value = normalize_group_setting_value(given[name], realm.id)
        elif setting.default == GROUP_CREATOR:
            value = AnonymousGroupValue((creator.id,), ()) if creator is not None else nobody.id
        else:
            result[name] = groups[setting.default]
            continue
        result[name] = check_group_setting_value(realm, name, value, setting=setting)
    return result


def create_streams(
    realm: Realm,
    channels: Sequence[NewChannel],
    *,
    invite_only: bool = False,
    history_public_to_subscribers: bool | None = None,
    message_retention_days: int | None = None,
    topics_policy: str = Stream.TopicsPolicy.INHERIT,
    group_settings: dict[str, GroupSettingValue] | None = None,
    acting_user: User | None,
) -> list[Stream]:
    """Create these channels (names checked and free). Sends nothing: the caller announces them
    (send_stream_creation) once their first subscribers are in."""
    if history_public_to_subscribers is None:
        history_public_to_subscribers = not invite_only
    streams = []
    for channel in channels:
        # Each channel gets its own anonymous setting groups.
        settings = resolve_channel_settings(realm, group_settings or {}, creator=acting_user)
        try:
            with transaction.atomic():
                streams.append(
                    Stream.objects.create(
                        realm=realm,
                        name=channel.name,
                        description=channel.description,
                        rendered_description=render_markdown(channel.description),
                        creator=acting_user,
                        invite_only=invite_only,
                        history_public_to_subscribers=history_public_to_subscribers,
                        message_retention_days=message_retention_days,
                        topics_policy=topics_policy,
                        **settings,
                    )
                )
        except IntegrityError:
            raise JsonableError(f"Channel '{channel.name}' already exists") from None
    return streams


def send_stream_creation(realm: Realm, streams: Sequence[Stream], *, only_to: Collection[int] | None = None) -> None:
    """Emits: stream/create {streams} to everyone who can see each channel (or those of `only_to`)."""
    if not streams:
        return
    shapes = stream_dicts(streams)
    audience = metadata_access_user_ids(realm, streams)
    by_recipients: dict[frozenset[int], list[dict]] = defaultdict(list)
    for stream in streams:
        recipients = audience[stream.id] if only_to is None else audience[stream.id] & set(only_to)
        if recipients:
            by_recipients[frozenset(recipients)].append(shapes[stream.id])
    for recipients, shapes_for in by_recipients.items():
        send_event_on_commit(realm, {"type": "stream", "op": "create", "streams": shapes_for}, recipients)


# --- subscribing ----------------------------------------------------------------------------------


def _lock_streams(streams: Iterable[Stream]) -> None:
    ids = sorted({s.id for s in streams})
    list(Stream.objects.select_for_update().filter(id__in=ids).order_by("id").values_list("id", flat=True))


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
    acting_user: User | None,
) -> tuple[list[SubscriptionChange], list[SubscriptionChange]]:
    """Subscribe every user to every channel; returns (subscribed, already subscribed).

    A fixed number of queries, however many users (a rejoin reactivates the old row, keeping its
    settings). `created` channels are announced to everyone who can see them. Emits, in this order:
    stream/create (new channels; existing ones to new subscribers who could not see them: private
    channels' and guests'),
    subscription/add to each new subscriber, subscription/peer_add to the channels' other viewers.
    """
    color_map = {name.lower(): color for name, color in (color_map or {}).items()}
    _lock_streams(streams)
    stream_ids = [s.id for s in streams]
    user_ids = [u.id for u in users]
    rows = {
        (sub.user_id, sub.stream_id): sub
        for sub in Subscription.objects.filter(stream_id__in=stream_ids, user_id__in=user_ids)
    }
    # Who could see the channels before: new subscribers who could not (of a private channel, or a
    # guest joining a public one) are told the channel exists before they join it.
    visible_before = metadata_access_user_ids(realm, [s for s in streams if s not in created])
    used_colors: dict[int, set[str]] = defaultdict(set)
    for user_id, color in Subscription.objects.filter(user_id__in=user_ids).values_list("user_id", "color"):
        used_colors[user_id].add(color)

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
    if not subscribed and not created:
        return subscribed, already

    send_stream_creation(realm, list(created))
    newly_visible = [
        change
        for change in subscribed
        if change.stream.id in visible_before and change.user.id not in visible_before[change.stream.id]
    ]
    for stream in {c.stream for c in newly_visible}:
        send_stream_creation(realm, [stream], only_to=[c.user.id for c in newly_visible if c.stream == stream])
    _send_subscription_adds(realm, streams, subscribed, rows)
    _send_peer_events(realm, "peer_add", subscribed)
    return subscribed, already


def _send_subscription_adds(
    realm: Realm, streams: Sequence[Stream], subscribed: list[SubscriptionChange], rows: dict
) -> None:
    """Emits: subscription/add to each new subscriber; users whose events are the same share one."""
    subscribers = subscriber_ids_by_stream([s.id for s in streams])
    shapes = stream_dicts(streams, subscriber_ids=subscribers)
    per_user: dict[int, list[dict]] = defaultdict(list)
    for change in subscribed:
        sub = rows[(change.user.id, change.stream.id)]
        per_user[change.user.id].append(
            subscription_to_dict(sub, shapes[change.stream.id], subscribers=sorted(subscribers[change.stream.id]))
        )
    by_payload: dict[str, list[int]] = defaultdict(list)
    for user_id, subs in per_user.items():
        by_payload[json.dumps(subs, sort_keys=True)].append(user_id)
    for payload, user_ids in by_payload.items():
        send_event_on_commit(
            realm, {"type": "subscription", "op": "add", "subscriptions": json.loads(payload)}, user_ids
        )


def _send_peer_events(
    realm: Realm, op: str, changes: list[SubscriptionChange], audience: dict[int, set[int]] | None = None
) -> None:
    """Emits: subscription/peer_add or peer_remove {stream_ids, user_ids} to those who can see the
    channels (`audience`, when the caller has read it already), but not to the users concerned (they
    have their own event): one event per set of channels with the same users and the same audience."""
    if not changes:
        return
    users_by_stream: dict[int, set[int]] = defaultdict(set)
    streams = {}
    for change in changes:
        users_by_stream[change.stream.id].add(change.user.id)
        streams[change.stream.id] = change.stream
    if audience is None:
        audience = metadata_access_user_ids(realm, list(streams.values()))
    grouped: dict[tuple[frozenset[int], frozenset[int]], list[int]] = defaultdict(list)
    for stream_id, user_ids in users_by_stream.items():
        recipients = audience[stream_id] - user_ids
        if recipients:
            grouped[(frozenset(user_ids), frozenset(recipients))].append(stream_id)
    for (user_ids, recipients), stream_ids in grouped.items():
        event = {"type": "subscription", "op": op, "stream_ids": sorted(stream_ids), "user_ids": sorted(user_ids)}
        send_event_on_commit(realm, event, recipients)


def send_peer_events_for_activation(realm: Realm | int, users: Sequence[User], *, op: str) -> None:
    """Subscriber lists hold active users only: a deactivated user leaves those of their channels, a
    reactivated one comes back (Zulip's peer_remove at deactivation, peer_add at reactivation).
    Emits: subscription/peer_remove or peer_add to those who see the channels (see _send_peer_events)."""
    by_id = {user.id: user for user in users}
    rows = Subscription.objects.filter(user_id__in=by_id, active=True, stream__deactivated=False).select_related(
        "stream"
    )
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
    member leaving a private one), as Zulip's bulk_remove_subscriptions.
    """
    _lock_streams(streams)
    active = set(
        Subscription.objects.filter(stream__in=streams, user__in=users, active=True).values_list("user_id", "stream_id")
    )
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
    by_user: dict[int, list[dict]] = defaultdict(list)
    for change in removed:
        by_user[change.user.id].append({"stream_id": change.stream.id, "name": change.stream.name})
    by_payload: dict[str, list[int]] = defaultdict(list)
    for user_id, subs in by_user.items():
        by_payload[json.dumps(subs, sort_keys=True)].append(user_id)
    for payload, user_ids in by_payload.items():
        event = {"type": "subscription", "op": "remove", "subscriptions": json.loads(payload)}
        send_event_on_commit(realm, event, user_ids)
    send_stream_access_changes(realm, left, could_see)
    return removed, not_subscribed


# --- subscription settings ------------------------------------------------------------------------


@transaction.atomic
def do_change_subscription_property(sub: Subscription, prop: str, value: bool | str, *, acting_user: User) -> None:
    """Set one of the user's settings for the channel (validated by the caller).

    Emits: subscription/update {stream_id, property, value} to the user; for is_muted and its
    legacy inverse in_home_view, two events: in_home_view first, then is_muted.
    """
    if prop in ("is_muted", "in_home_view"):
        muted = value if prop == "is_muted" else not value
        sub.is_muted = muted
        sub.save(update_fields=["is_muted"])
        updates = [("in_home_view", not muted), ("is_muted", muted)]
    else:
        setattr(sub, prop, value)
        sub.save(update_fields=[prop])
        updates = [(prop, value)]
    for name, new_value in updates:
        event = {
            "type": "subscription",
            "op": "update",
            "stream_id": sub.stream_id,
            "property": name,
            "value": new_value,
        }
        send_event_on_commit(acting_user.realm_id, event, [sub.user_id])


# --- topics -----------------------------------------------------------------------------------------


@transaction.atomic
def do_set_user_topic_visibility_policy(user: User, stream: Stream, topic_name: str, policy: int) -> None:
    """Set (or, with 0, remove) the user's policy for the topic. Setting what is already set
    changes nothing and sends nothing.

    Emits: muted_topics (legacy; queues that also asked for user_topic do not get it), then
    user_topic {stream_id, topic_name, last_updated, visibility_policy}, to the user.
    """
    existing = UserTopic.objects.select_for_update().filter(user=user, stream=stream, topic_name__iexact=topic_name)
    current = existing.first()
    now = timezone.now()
    if policy == UserTopic.VisibilityPolicy.INHERIT:
        if current is None:
            return
        current.delete()
        shape = {**user_topic_to_dict(current), "last_updated": int(now.timestamp()), "visibility_policy": 0}
    else:
        created = False
        if current is None:
            try:
                with transaction.atomic():
                    current = UserTopic.objects.create(
                        user=user, stream=stream, topic_name=topic_name, visibility_policy=policy, last_updated=now
                    )
                    created = True
            except IntegrityError:
                # The same request at the same time (a retry) created the row first: this one updates it.
                current = existing.get()
        if not created:
            if current.visibility_policy == policy:
                return
            current.visibility_policy, current.last_updated = policy, now
            current.save()
        shape = user_topic_to_dict(current)
    send_event_on_commit(user.realm_id, {"type": "muted_topics", "muted_topics": muted_topics_of(user)}, [user.id])
    send_event_on_commit(user.realm_id, {"type": "user_topic", **shape}, [user.id])


def muted_topics_of(user: User) -> list[list]:
    """The legacy muted_topics list: [[channel name, topic, timestamp], ...]."""
    rows = UserTopic.objects.filter(
        user=user, visibility_policy=UserTopic.VisibilityPolicy.MUTED, stream__deactivated=False
    ).select_related("stream")
    return [[row.stream.name, row.topic_name, int(row.last_updated.timestamp())] for row in rows.order_by("id")]


# --- channel settings -----------------------------------------------------------------------------


def send_stream_update(stream: Stream, prop: str, value: Any, **extra: Any) -> None:
    """Emits: stream/update {stream_id, name, property, value, ...} to everyone who can see it."""
    audience = metadata_access_user_ids(stream.realm, [stream])[stream.id]
    event = {"type": "stream", "op": "update", "stream_id": stream.id, "name": stream.name, "property": prop}
    send_event_on_commit(stream.realm_id, {**event, "value": value, **extra}, audience)


@transaction.atomic
def do_rename_stream(stream: Stream, new_name: str, *, acting_user: User | None) -> None:
    """Rename (name checked). Raises if another channel has the name. Emits: stream/update {name}."""
    old_name = stream.name
    stream.name = new_name
    try:
        with transaction.atomic():
            stream.save(update_fields=["name"])
    except IntegrityError:
        raise JsonableError(f"Channel '{new_name}' already exists") from None
    audience = metadata_access_user_ids(stream.realm, [stream])[stream.id]
    event = {"type": "stream", "op": "update", "stream_id": stream.id, "name": old_name, "property": "name"}
    send_event_on_commit(stream.realm_id, {**event, "value": new_name}, audience)


@transaction.atomic
def do_change_stream_description(stream: Stream, description: str, *, acting_user: User | None) -> None:
    """Emits: stream/update {description, rendered_description}."""
    stream.description = description
    stream.rendered_description = render_markdown(description)
    stream.save(update_fields=["description", "rendered_description"])
    send_stream_update(stream, "description", description, rendered_description=stream.rendered_description)


def _send_visibility_changes(stream: Stream, before: set[int]) -> None:
    send_stream_access_changes(stream.realm, [stream], {stream.id: before})


def send_stream_access_changes(realm: Realm | int, streams: Sequence[Stream], before: dict[int, set[int]]) -> None:
    """After a change of who can see these channels (`before`: metadata_access_user_ids read before
    it): see _send_access_events. A fixed number of queries, however many channels."""
    if not streams:
        return
    after = metadata_access_user_ids(realm, streams)
    gained = {s.id: after[s.id] - before.get(s.id, set()) for s in streams}
    lost = {s.id: before.get(s.id, set()) - after[s.id] for s in streams}
    _send_access_events(realm, streams, gained=gained, lost=lost)


def send_stream_events_for_role_change(user: User, before: Sequence[Stream]) -> None:
    """After the user's role changed (`before`: visible_streams(user) read before it), as Zulip's
    send_stream_events_for_role_update: a guest no longer sees the public channels they are not in,
    an administrator sees every private channel, and back. See _send_access_events."""
    if not user.is_active:
        return
    after = visible_streams(user)
    before_ids, after_ids = {s.id for s in before}, {s.id for s in after}
    streams = [s for s in before if s.id not in after_ids] + [s for s in after if s.id not in before_ids]
    _send_access_events(
        user.realm_id,
        streams,
        gained={s.id: {user.id} for s in after if s.id not in before_ids},
        lost={s.id: {user.id} for s in before if s.id not in after_ids},
    )


def _send_access_events(
    realm: Realm | int, streams: Sequence[Stream], *, gained: dict[int, set[int]], lost: dict[int, set[int]]
) -> None:
    """Emits: stream/delete to those who no longer see a channel; stream/create (one event for the
    channels with the same newcomers), then subscription/peer_add {the channel's subscribers} per
    channel, to those who now do (their client knows nobody in it yet), as Zulip does."""
    for stream in streams:
        if lost.get(stream.id):
            _send_stream_delete(stream, lost[stream.id])
    now_visible = [s for s in streams if gained.get(s.id)]
    if not now_visible:
        return
    subscribers = subscriber_ids_by_stream([s.id for s in now_visible])
    shapes = stream_dicts(now_visible, subscriber_ids=subscribers)
    by_recipients: dict[frozenset[int], list[dict]] = defaultdict(list)
    for stream in now_visible:
        by_recipients[frozenset(gained[stream.id])].append(shapes[stream.id])
    for recipients, shapes_for in by_recipients.items():
        send_event_on_commit(realm, {"type": "stream", "op": "create", "streams": shapes_for}, recipients)
    for stream in now_visible:
        if subscribers[stream.id]:
            event = {
                "type": "subscription",
                "op": "peer_add",
                "stream_ids": [stream.id],
                "user_ids": sorted(subscribers[stream.id]),
            }
            send_event_on_commit(realm, event, gained[stream.id])


class GroupChannelAccess:
    """Around a change of groups' members or subgroups: who sees the private channels that those
    groups open, read before the change, and the events for whoever gains or loses sight of one
    after it (Zulip's bulk_add_members_to_user_groups and its kin)."""

    def __init__(self, realm: Realm | int, group_ids: Collection[int]) -> None:
        self.realm_id = realm if isinstance(realm, int) else realm.id
        self.streams = private_streams_seen_through_groups(self.realm_id, group_ids)
        self.before = metadata_access_user_ids(self.realm_id, self.streams)

    def send_changes(self) -> None:
        send_stream_access_changes(self.realm_id, self.streams, self.before)


def _send_stream_delete(stream: Stream, user_ids: Collection[int]) -> None:
    """Emits: stream/delete {streams: [channel], stream_ids: [id]}."""
    shape = stream_dicts([stream])[stream.id]
    event = {"type": "stream", "op": "delete", "streams": [shape], "stream_ids": [stream.id]}
    send_event_on_commit(stream.realm_id, event, user_ids)


@transaction.atomic
def do_change_stream_permission(
    stream: Stream, *, invite_only: bool, history_public_to_subscribers: bool, is_web_public: bool, acting_user: User
) -> None:
    """Change who can see the channel. Users who could see it and no longer can get
    stream/delete; users who now can get stream/create.

    Emits: stream/update {invite_only, history_public_to_subscribers, is_web_public} to those who
    can see it afterwards (and, for each other changed property, its own update).
    """
    before = metadata_access_user_ids(stream.realm, [stream])[stream.id]
    old = (stream.invite_only, stream.history_public_to_subscribers, stream.is_web_public)
    stream.invite_only = invite_only
    stream.history_public_to_subscribers = history_public_to_subscribers
    stream.is_web_public = is_web_public
    stream.save(update_fields=["invite_only", "history_public_to_subscribers", "is_web_public"])
    if old == (invite_only, history_public_to_subscribers, is_web_public):
        return
    _send_visibility_changes(stream, before)
    extra = {"history_public_to_subscribers": history_public_to_subscribers, "is_web_public": is_web_public}
    if old[0] != invite_only:
        send_stream_update(stream, "invite_only", invite_only, **extra)
    elif old[1] != history_public_to_subscribers:
        send_stream_update(stream, "history_public_to_subscribers", history_public_to_subscribers)
    elif old[2] != is_web_public:
        send_stream_update(stream, "is_web_public", is_web_public)


@transaction.atomic
def do_change_stream_group_setting(stream: Stream, name: str, change: GroupSettingChange, *, acting_user: User) -> bool:
    """Set a group setting (Zulip's {new, old} form: `old`, when given, must be the current value,
    else EXPECTATION_MISMATCH). Returns whether it changed.

    Emits: stream/update {property: name, value: the API value}; and, when the change makes the
    channel visible or invisible to some users, stream/create or stream/delete to them.
    """
    current = getattr(stream, name)
    new_value = check_group_setting_change(change, current=current)
    if new_value is None:
        return False
    before = metadata_access_user_ids(stream.realm, [stream])[stream.id]
    group = check_group_setting_value(stream.realm, name, new_value, setting=Stream.SETTINGS[name], current=current)
    setattr(stream, name, group)
    stream.save(update_fields=[name])
    delete_unused_setting_group(current, group)
    _send_visibility_changes(stream, before)
    send_stream_update(stream, name, setting_values_for_api(stream.realm_id, [group.id])[group.id])
    return True


@transaction.atomic
def do_deactivate_stream(stream: Stream, *, acting_user: User | None) -> None:
    """Archive the channel: it keeps its subscriptions but is gone from lists and cannot be joined.

    Emits: stream/delete {streams: [channel], stream_ids} to everyone who could see it.
    """
    if stream.deactivated:
        return
    audience = metadata_access_user_ids(stream.realm, [stream])[stream.id]
    stream.deactivated = True
    stream.save(update_fields=["deactivated"])
    _send_stream_delete(stream, audience)


# --- what the endpoints check -------------------------------------------------------------------


def principals_to_users(acting_user: User, principals: list[int] | list[str]) -> list[User]:
    """The active users (bots too) named by ids (one query) or emails; "No such user" or "User is
    deactivated" (BAD_REQUEST) for any other, another organization's users included."""
    wanted = list(dict.fromkeys(principals))
    if isinstance(wanted[0], str):
        # One user however many spellings of their email (emails are case-insensitive).
        found = (access_user_by_email(acting_user, email, allow_bots=True) for email in wanted)
        return list({user.id: user for user in found}.values())
    users = {u.id: u for u in User.objects.filter(realm_id=acting_user.realm_id, id__in=wanted)}
    for user_id in wanted:
        if user_id not in users:
            raise JsonableError("No such user")
        if not users[user_id].is_active:
            raise JsonableError("User is deactivated")
    return [users[user_id] for user_id in wanted]


def controls(acting_user: User, target: User) -> bool:
    """The user themself, or a bot they own."""
    return target.id == acting_user.id or (target.is_bot and target.bot_owner_id == acting_user.id)


@transaction.atomic
def do_change_subscription_properties(
    changes: list[tuple[Subscription, str, bool | str]], *, acting_user: User
) -> None:
    """Several settings, all or none."""
    for sub, prop, value in changes:
        do_change_subscription_property(sub, prop, value, acting_user=acting_user)


MAX_RETENTION_DAYS = 2**31 - 1


def parse_message_retention_days(value: str | int) -> int | None:
    """Zulip's values: "realm_default" (None), "unlimited" (-1) or a positive number of days."""
    if value == "realm_default":
        return None
    if value == "unlimited":
        return -1
    # Within the column's range (a 32-bit integer on PostgreSQL): beyond it, a 400, not a 500.
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_RETENTION_DAYS:
        return value
    raise JsonableError(f"Bad value for 'message_retention_days': {value}")


def parse_topics_policy(value: str) -> str:
    if value not in Stream.TopicsPolicy.values:
        raise JsonableError("Invalid topics_policy")
    return value


@transaction.atomic
def check_add_subscriptions(user: User, params: SubscribeParams) -> dict[str, Any]:
    """POST /users/me/subscriptions: subscribe the user (or `principals`) to these channels,
    creating those that do not exist. Everything is checked before anything changes."""
    realm = user.realm
    targets = principals_to_users(user, params.principals) if params.principals else [user]
    wanted: dict[str, NewSubscription] = {}
    for item in params.subscriptions:
        name = check_stream_name(item.name)
        wanted.setdefault(name.lower(), item.model_copy(update={"name": name}))
    if params.is_web_public:
        raise JsonableError("Web-public channels are not enabled.")
    retention = parse_message_retention_days(params.message_retention_days)
    topics_policy = parse_topics_policy(params.topics_policy or Stream.TopicsPolicy.INHERIT)
    if topics_policy != Stream.TopicsPolicy.INHERIT and not user.is_admin:
        raise JsonableError("Insufficient permission")
    # A public channel's history is public to its subscribers whatever was asked (as in Zulip).
    history_public = params.history_public_to_subscribers if params.invite_only else True
    if params.is_default_stream:
        raise JsonableError("Default channels are not supported.")

    existing = streams_by_name(realm, [item.name for item in wanted.values()])
    membership = Membership(user)
    subscribed_to = set(
        Subscription.objects.filter(user=user, active=True, stream__in=existing.values()).values_list(
            "stream_id", flat=True
        )
    )
    authorized, unauthorized = [], []
    for stream in existing.values():
        allowed = not stream.deactivated and has_content_access(
            membership, stream, is_subscribed=stream.id in subscribed_to
        )
        (authorized if allowed else unauthorized).append(stream)
    if unauthorized and params.authorization_errors_fatal:
        raise JsonableError(f"Unable to access channel ({unauthorized[0].name}).")

    missing = [
        NewChannel(item.name, check_description(item.description or ""))
        for key, item in wanted.items()
        if key not in existing
    ]
    if missing:
        check_channel_creation(membership, len(missing), invite_only=params.invite_only)
    if retention is not None and not user.is_owner and missing:
        raise OrganizationOwnerRequiredError()  # a setting of the channels being created
    if missing:
        count_channel_creation(user, len(missing))
    created = create_streams(
        realm,
        missing,
        invite_only=params.invite_only,
        history_public_to_subscribers=history_public,
        message_retention_days=retention,
        topics_policy=topics_policy,
        group_settings=params.group_settings(),
        acting_user=user,
    )
    streams = [*authorized, *created]
    colors = {item.name: item.color for item in wanted.values() if item.color is not None}
    subscribed, already = bulk_add_subscriptions(
        realm, streams, targets, color_map=colors, created=created, acting_user=user
    )
    result: dict[str, Any] = {"subscribed": _names_by_user(subscribed), "already_subscribed": _names_by_user(already)}
    if not params.authorization_errors_fatal:
        result["unauthorized"] = [stream.name for stream in unauthorized]
    return result


def check_channel_creation(membership: Membership, count: int, *, invite_only: bool) -> None:
    """Whether the user may create `count` channels at once: at most RATE_LIMIT_CHANNEL_CREATION
    (the most the rate limit could ever allow), and the organization's policy for the kind (Zulip's
    "Insufficient permission")."""
    limit, _ = settings.RATE_LIMIT_CHANNEL_CREATION
    if count > limit:
        raise InvalidArgumentError("subscriptions", f"Too many new channels in one request: {count} (limit: {limit})")
    if not can_create_channels(membership, invite_only=invite_only):
        raise JsonableError("Insufficient permission")


def count_channel_creation(user: User, count: int) -> None:
    """Count `count` new channels against the user's RATE_LIMIT_CHANNEL_CREATION (per hour); 429
    RATE_LIMIT_HIT past it. Called after the other checks, before the channels are created: a
    request they refuse costs nothing. Fails closed (503) when Redis is unreachable, as the
    password-login limit does."""
    if not settings.RATE_LIMITING_ENABLED:
        return
    state = ratelimit.check(f"create_channels_by_user:{user.id}", settings.RATE_LIMIT_CHANNEL_CREATION, cost=count)
    if state.blocked:
        raise RateLimitedError(state.retry_after)


def _names_by_user(changes: list[SubscriptionChange]) -> dict[str, list[str]]:
    result: dict[str, list[str]] = defaultdict(list)
    for change in changes:
        result[str(change.user.id)].append(change.stream.name)
    return dict(result)


@transaction.atomic
def check_remove_subscriptions(user: User, subscriptions: list[str], principals: list | None) -> dict[str, list[str]]:
    """DELETE /users/me/subscriptions. A user may always unsubscribe themself and their bots; others
    only as an administrator, a member of the channel's can_administer_channel_group or of its
    can_remove_subscribers_group. A channel the user may not see does not exist for them."""
    targets = principals_to_users(user, principals) if principals else [user]
    names = [name.strip() for name in subscriptions]
    found = streams_by_name(user.realm, names)
    membership = Membership(user)
    subscribed = set(
        Subscription.objects.filter(user=user, active=True, stream__in=found.values()).values_list(
            "stream_id", flat=True
        )
    )
    streams = []
    for name in names:
        stream = found.get(name.lower())
        if stream is None or not has_metadata_access(membership, stream, is_subscribed=stream.id in subscribed):
            raise StreamDoesNotExistError(name)
        streams.append(stream)
    streams = list(dict.fromkeys(streams))
    if any(not controls(user, target) for target in targets):
        for stream in streams:
            if not (can_administer(membership, stream) or membership.holds(stream, "can_remove_subscribers_group")):
                raise JsonableError("Insufficient permission")
    removed, not_subscribed = bulk_remove_subscriptions(user.realm, targets, streams, acting_user=user)
    return {
        "removed": [change.stream.name for change in removed],
        "not_removed": [change.stream.name for change in not_subscribed],
    }


class StreamDoesNotExistError(JsonableError):
    code = ErrorCode.STREAM_DOES_NOT_EXIST

    def __init__(self, name: str) -> None:
        super().__init__(f"Channel '{name}' does not exist", stream=name)


class StreamWithIdDoesNotExistError(JsonableError):
    code = ErrorCode.STREAM_DOES_NOT_EXIST

    def __init__(self, stream_id: int) -> None:
        super().__init__(f"Channel with ID '{stream_id}' does not exist", stream_id=stream_id)


def access_stream_to_administer(user: User, stream_id: int) -> Stream:
    """The channel, if the user may change its settings; "Invalid channel ID" if they cannot see
    it, "You do not have permission to administer this channel." if they can."""
    stream = Stream.objects.filter(realm_id=user.realm_id, id=stream_id).select_related("realm").first()
    if stream is None:
        raise JsonableError("Invalid channel ID")
    membership = Membership(user)
    if can_administer(membership, stream):
        return stream
    is_subscribed = Subscription.objects.filter(user=user, stream=stream, active=True).exists()
    if has_metadata_access(membership, stream, is_subscribed=is_subscribed):
        raise JsonableError(
            "You do not have permission to administer this channel.", code=ErrorCode.CANNOT_ADMINISTER_CHANNEL
        )
    raise JsonableError("Invalid channel ID")


# Settings that let their members read a private channel: setting them needs content access.
CONTENT_ACCESS_SETTINGS = ("can_add_subscribers_group", "can_subscribe_group")


@transaction.atomic
def check_update_stream(user: User, stream_id: int, params: UpdateStreamParams) -> None:
    """PATCH /streams/{stream_id}: every change checked (Zulip's rules and messages), then applied;
    all or nothing."""
    stream = access_stream_to_administer(user, stream_id)
    if stream.deactivated:
        # Gone for clients (they got stream/delete; GET /streams/{id} does not find it).
        raise JsonableError("Invalid channel ID")
    _lock_streams([stream])
    is_subscribed = Subscription.objects.filter(user=user, stream=stream, active=True).exists()
    membership = Membership(user)
    content_access = has_content_access(membership, stream, is_subscribed=is_subscribed)
    is_private = stream.invite_only if params.is_private is None else params.is_private
    is_web_public = stream.is_web_public if params.is_web_public is None else params.is_web_public
    if params.history_public_to_subscribers is not None:
        history_public = params.history_public_to_subscribers
    elif params.is_private is not None:
        history_public = not params.is_private
    else:
        history_public = stream.history_public_to_subscribers
    if (is_web_public and (not history_public or is_private)) or (not is_private and not history_public):
        raise JsonableError("Invalid parameters")
    if params.is_private is not None and not content_access:
        raise JsonableError("Channel content access is required.")
    # Making a channel private or public needs the permission to create such channels (as in Zulip).
    if params.is_private is not None and not can_create_channels(membership, invite_only=params.is_private):
        raise JsonableError("Insufficient permission")
    if params.is_web_public:
        raise JsonableError("Web-public channels are not enabled.")
    if params.is_default_stream is not None:
        raise JsonableError("Default channels are not supported.")
    if params.message_retention_days is not None and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    if params.topics_policy is not None:
        parse_topics_policy(params.topics_policy)
        if not user.is_admin:
            raise JsonableError("Insufficient permission")
    new_name = None
    if params.new_name is not None:
        new_name = check_stream_name(params.new_name)
        if new_name == stream.name:
            raise JsonableError("Channel already has that name.")
    setting_changes = params.group_setting_changes()
    if any(name in CONTENT_ACCESS_SETTINGS for name in setting_changes) and not content_access:
        raise JsonableError("Channel content access is required.")

    if (is_private, history_public, is_web_public) != (
        stream.invite_only,
        stream.history_public_to_subscribers,
        stream.is_web_public,
    ):
        do_change_stream_permission(
            stream,
            invite_only=is_private,
            history_public_to_subscribers=history_public,
            is_web_public=is_web_public,
            acting_user=user,
        )
    if params.message_retention_days is not None:
        days = parse_message_retention_days(params.message_retention_days)
        if days != stream.message_retention_days:
            stream.message_retention_days = days
            stream.save(update_fields=["message_retention_days"])
            send_stream_update(stream, "message_retention_days", days)
    if params.topics_policy is not None and params.topics_policy != stream.topics_policy:
        stream.topics_policy = params.topics_policy
        stream.save(update_fields=["topics_policy"])
        send_stream_update(stream, "topics_policy", stream.topics_policy)
    if params.description is not None:
        description = check_description(params.description)
        if description != stream.description:
            do_change_stream_description(stream, description, acting_user=user)
    if new_name is not None:
        do_rename_stream(stream, new_name, acting_user=user)
    for name, change in setting_changes.items():
        do_change_stream_group_setting(stream, name, change, acting_user=user)
