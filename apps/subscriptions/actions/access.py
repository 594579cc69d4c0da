"""Who is told of a channel: the `stream` events to those who can see it, and to whoever gains or
loses sight of it (a privacy or group setting changes, a group's members change, a role changes).

These write no rows: the actions that change who sees a channel call them in their transaction,
and the events leave on commit.
"""

import json
from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any

from apps.events.publish import send_event_on_commit
from apps.realms.models import Realm
from apps.subscriptions.models import Stream, Subscription
from apps.subscriptions.selectors import (
    metadata_access_user_ids,
    private_streams_seen_through_groups,
    stream_dicts,
    subscriber_ids_by_stream,
    visible_streams,
)
from apps.subscriptions.serializers import (
    NULL_NOTIFICATION_FALLBACKS,
    null_notification_fallbacks,
    subscription_to_dict,
)
from apps.users.models import User


def send_stream_creation(
    realm: Realm,
    streams: Sequence[Stream],
    *,
    only_to: Collection[int] | None = None,
    subscriber_ids: dict[int, set[int]] | None = None,
    viewers: dict[int, set[int]] | None = None,
    for_unarchiving: bool = False,
) -> None:
    """Emits: stream/create {streams} to everyone who can see each channel (`viewers`, when the
    caller knows them; or those of them in `only_to`), their subscriber_count that of `subscriber_ids`
    if given (see stream_dicts); marked `for_unarchiving` (as Zulip's) when the channels come back
    from the archive (UNARCHIVING)."""
    if not streams:
        return
    shapes = stream_dicts(streams, subscriber_ids=subscriber_ids)
    audience = viewers if viewers is not None else metadata_access_user_ids(realm, streams)
    recipients = {s.id: audience[s.id] if only_to is None else audience[s.id] & set(only_to) for s in streams}
    _send_creations(realm, shapes, recipients, for_unarchiving=for_unarchiving)


def _send_creations(
    realm: Realm | int, shapes: dict[int, dict], recipients: dict[int, set[int]], *, for_unarchiving: bool
) -> None:
    """Emits: stream/create {streams}, one event for the channels with the same recipients
    (`recipients` by channel id, in the channels' order)."""
    by_recipients: dict[frozenset[int], list[dict]] = defaultdict(list)
    for stream_id, user_ids in recipients.items():
        if user_ids:
            by_recipients[frozenset(user_ids)].append(shapes[stream_id])
    for user_ids, shapes_for in by_recipients.items():
        event = {"type": "stream", "op": "create", "streams": shapes_for, **_unarchiving(for_unarchiving)}
        send_event_on_commit(realm, event, user_ids)


def _unarchiving(for_unarchiving: bool) -> dict[str, bool]:
    """The mark of the events telling clients without the archived_channels capability that a channel
    is back (clients with it are told by stream/update {is_archived}: apps.subscriptions.events)."""
    return {"for_unarchiving": True} if for_unarchiving else {}


def send_stream_update(
    stream: Stream, prop: str, value: Any, *, to: Collection[int] | None = None, **extra: Any
) -> None:
    """Emits: stream/update {stream_id, name, property, value, ...} to everyone who can see it (or
    to those of `to`)."""
    audience = metadata_access_user_ids(stream.realm_id, [stream])[stream.id] if to is None else to
    event = {"type": "stream", "op": "update", "stream_id": stream.id, "name": stream.name, "property": prop}
    send_event_on_commit(stream.realm_id, {**event, "value": value, **extra}, audience)


def send_stream_delete(stream: Stream, user_ids: Collection[int], *, for_archiving: bool = False) -> None:
    """Emits: stream/delete {streams: [{stream_id}], stream_ids: [id]} to these users (`streams`
    as Zulip's since feature level 343: its ids alone, kept for older clients); `for_archiving`
    (as Zulip's) when it is archived: clients with the archived_channels capability are told by
    stream/update {is_archived} instead (apps.subscriptions.events)."""
    event = {"type": "stream", "op": "delete", "streams": [{"stream_id": stream.id}], "stream_ids": [stream.id]}
    if for_archiving:
        event["for_archiving"] = True
    send_event_on_commit(stream.realm_id, event, user_ids)


def send_subscription_adds(
    realm: Realm | int,
    streams: Sequence[Stream],
    subs: Sequence[Subscription],
    *,
    for_unarchiving: bool = False,
    subscribers: dict[int, set[int]] | None = None,
) -> None:
    """Emits: subscription/add {these subscriptions, to channels among `streams`} to their users
    (marked as send_stream_creation's when `for_unarchiving`); `subscribers`: the channels' as they
    are now, when the caller knows them."""
    if subscribers is None:
        subscribers = subscriber_ids_by_stream([s.id for s in streams])
    shapes = stream_dicts(streams, subscriber_ids=subscribers)
    per_user: dict[int, list[dict]] = defaultdict(list)
    for sub in subs:
        shape = shapes[sub.stream_id]
        per_user[sub.user_id].append(subscription_to_dict(sub, shape, subscribers=sorted(subscribers[sub.stream_id])))
    # Each user's null_notification_fallbacks go with their event, for the clients needing them.
    settings = User.objects.filter(id__in=per_user).values("id", *NULL_NOTIFICATION_FALLBACKS.values())
    fallbacks = {row["id"]: null_notification_fallbacks(row) for row in settings}
    send_subscription_lists(realm, "add", per_user, fallbacks, for_unarchiving=for_unarchiving)


def send_subscription_lists(
    realm: Realm | int,
    op: str,
    per_user: dict[int, list[dict]],
    fallbacks: dict[int, dict] | None = None,
    *,
    for_unarchiving: bool = False,
) -> None:
    """Emits: subscription/`op` {subscriptions: the user's list} to each user of `per_user` (with
    their `notification_fallbacks`, when given); users whose events are the same share one."""
    by_payload: dict[str, list[int]] = defaultdict(list)
    for user_id, dicts in per_user.items():
        extra = {} if fallbacks is None else {"notification_fallbacks": fallbacks.get(user_id)}
        by_payload[json.dumps({"subscriptions": dicts, **extra}, sort_keys=True)].append(user_id)
    for payload, user_ids in by_payload.items():
        event = {"type": "subscription", "op": op, **json.loads(payload), **_unarchiving(for_unarchiving)}
        send_event_on_commit(realm, event, user_ids)


def send_stream_access_changes(
    realm: Realm | int, streams: Sequence[Stream], before: dict[int, set[int]], *, for_unarchiving: bool = False
) -> None:
    """After a change of who can see these channels (`before`: metadata_access_user_ids read before
    it): see _send_access_events (marked as send_stream_creation's when `for_unarchiving`). A
    fixed number of queries, however many channels."""
    if not streams:
        return
    after = metadata_access_user_ids(realm, streams)
    gained = {s.id: after[s.id] - before.get(s.id, set()) for s in streams}
    lost = {s.id: before.get(s.id, set()) - after[s.id] for s in streams}
    _send_access_events(realm, streams, gained=gained, lost=lost, for_unarchiving=for_unarchiving)


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
    realm: Realm | int,
    streams: Sequence[Stream],
    *,
    gained: dict[int, set[int]],
    lost: dict[int, set[int]],
    for_unarchiving: bool = False,
) -> None:
    """Emits: stream/delete to those who no longer see a channel; stream/create (one event for the
    channels with the same newcomers), then subscription/peer_add {the channel's subscribers} per
    channel, to those who now do (their client knows nobody in it yet), as Zulip does."""
    for stream in streams:
        if lost.get(stream.id):
            send_stream_delete(stream, lost[stream.id])
    now_visible = [s for s in streams if gained.get(s.id)]
    if not now_visible:
        return
    subscribers = subscriber_ids_by_stream([s.id for s in now_visible])
    shapes = stream_dicts(now_visible, subscriber_ids=subscribers)
    _send_creations(realm, shapes, {s.id: gained[s.id] for s in now_visible}, for_unarchiving=for_unarchiving)
    for stream in now_visible:
        if subscribers[stream.id]:
            event = {
                "type": "subscription",
                "op": "peer_add",
                "stream_ids": [stream.id],
                "user_ids": sorted(subscribers[stream.id]),
                **_unarchiving(for_unarchiving),
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
