"""Channels' part of the event system: the "subscription", "stream", "user_topic" and
"muted_topics" initial state, and how subscription events adapt to a queue's capabilities."""

from apps.events.registry import QueueOptions, StateContext, event_filter, event_transform, initial_state
from apps.groups.events import membership_group_ids
from apps.subscriptions.default_groups import default_channel_groups
from apps.subscriptions.realm_channels import default_channels
from apps.subscriptions.selectors import (
    Membership,
    can_create_channels,
    has_realm_setting,
    stream_dicts,
    subscriber_ids_by_stream,
    subscriptions_of_user,
    visible_streams,
)
from apps.subscriptions.serializers import (
    fill_null_notification_settings,
    null_notification_fallbacks,
    subscription_to_dict,
    user_topic_to_dict,
)
from apps.subscriptions.user_topic_policies import muted_topics_of, user_topics_of_user


def knows_archived_channels(options: QueueOptions) -> bool:
    """Zulip's archived_channels client capability: the client holds archived channels (is_archived)
    in its channels and subscriptions, and is told of archiving by stream/update {is_archived}; other
    clients know none and are told by stream/delete (and stream/create when one comes back)."""
    return bool(options.client_capabilities.get("archived_channels", False))


def _subscriptions(context: StateContext) -> list:
    """The user's subscription rows (active and not), to archived channels only for clients that
    know them."""
    archived_too = knows_archived_channels(context.options)
    return context.once(
        "subscriptions",
        lambda: [s for s in subscriptions_of_user(context.user) if archived_too or not s.stream.deactivated],
    )


def _visible(context: StateContext) -> list:
    archived_too = knows_archived_channels(context.options)
    return context.once("visible_streams", lambda: visible_streams(context.user, include_archived=archived_too))


def _stream_shapes(context: StateContext) -> dict[int, dict]:
    """The channels of both the subscription and the stream state, shaped once: those the user can
    see and those they have subscription rows for (their subscriber counts are the channels')."""

    def shape() -> dict[int, dict]:
        streams = {stream.id: stream for stream in _visible(context)}
        for sub in _subscriptions(context):
            streams.setdefault(sub.stream_id, sub.stream)
        return stream_dicts(list(streams.values()))

    return context.once("stream_shapes", shape)


@initial_state("subscription")
def subscription_state(context: StateContext) -> dict:
    """subscriptions, unsubscribed (channels the user left) and never_subscribed (channels they can
    see and never joined): a fixed number of queries, however many channels and subscribers, shared
    with the stream state."""
    options = context.options
    subs = _subscriptions(context)
    visible = _visible(context)
    visible_ids = {stream.id for stream in visible}
    known = {s.stream_id for s in subs}
    never = [stream for stream in visible if stream.id not in known]
    include = options.include_subscribers in ("true", "partial")
    # Subscribers are read only for lists that include them.
    subscribers = subscriber_ids_by_stream([s.stream_id for s in subs] + [s.id for s in never]) if include else None
    shapes = _stream_shapes(context)
    null_ok = options.client_capabilities.get("notification_settings_null", False)
    fallbacks = null_notification_fallbacks(context.user)

    def members(stream_id: int) -> list[int] | None:
        return list(subscribers[stream_id]) if subscribers is not None else None

    def one(sub) -> dict:
        shape = subscription_to_dict(sub, shapes[sub.stream_id], subscribers=members(sub.stream_id))
        return shape if null_ok else fill_null_notification_settings(shape, fallbacks)

    never_subscribed = []
    for stream in never:
        shape = dict(shapes[stream.id])
        if include:
            shape["subscribers"] = sorted(subscribers[stream.id])
        never_subscribed.append(shape)
    return {
        "subscriptions": [one(s) for s in subs if s.active],
        # Only channels the user can still see: a private channel left is gone, as in Zulip.
        "unsubscribed": [one(s) for s in subs if not s.active and s.stream_id in visible_ids],
        "never_subscribed": never_subscribed,
    }


@initial_state("stream")
def stream_state(context: StateContext) -> dict:
    shapes = _stream_shapes(context)
    return {"streams": [shapes[stream.id] for stream in _visible(context)]}


@initial_state("default_streams")
def default_streams_state(context: StateContext) -> dict:
    """The ids of the organization's default channels (none for guests, as in Zulip)."""
    user = context.user
    return {"realm_default_streams": [] if user.is_guest else [s.id for s in default_channels(user.realm_id)]}


@initial_state("default_stream_groups")
def default_stream_groups_state(context: StateContext) -> dict:
    """The organization's default channel groups (none for guests, as the events)."""
    user = context.user
    return {"realm_default_stream_groups": [] if user.is_guest else default_channel_groups(user.realm_id)}


@initial_state("user_topic")
def user_topic_state(context: StateContext) -> dict:
    return {"user_topics": [user_topic_to_dict(row) for row in user_topics_of_user(context.user)]}


@initial_state("muted_topics")
def muted_topics_state(context: StateContext) -> dict:
    # Clients that ask for user_topic have its data; the legacy list is left out for them.
    types = context.options.event_types
    if types is not None and "user_topic" in types:
        return {}
    return {"muted_topics": muted_topics_of(context.user)}


# The marks of the events of archiving and unarchiving (apps.subscriptions.actions.access), which
# say which queues show them; as Zulip's, they never reach a client.
ARCHIVING_MARKS = ("for_archiving", "for_unarchiving")


@event_filter("stream")
def shows_stream_event(event: dict, options: QueueOptions) -> bool:
    """Archiving and unarchiving, as Zulip's queues show them: stream/update {is_archived} to
    clients that know archived channels; stream/delete and stream/create marked for them to the
    others."""
    if event["op"] == "update" and event["property"] == "is_archived":
        return knows_archived_channels(options)
    if any(event.get(mark) for mark in ARCHIVING_MARKS):
        return not knows_archived_channels(options)
    return True


@event_filter("subscription")
def shows_subscription_event(event: dict, options: QueueOptions) -> bool:
    """A channel back from the archive gives its subscriptions and subscribers again to the clients
    it told to forget them (those without the archived_channels capability)."""
    return not (event.get("for_unarchiving") and knows_archived_channels(options))


def _unmarked(event: dict) -> dict:
    if not any(mark in event for mark in ARCHIVING_MARKS):
        return event
    return {key: value for key, value in event.items() if key not in ARCHIVING_MARKS}


@event_transform("stream")
def adapt_stream_event(event: dict, options: QueueOptions) -> dict:
    return _unmarked(event)


@event_transform("subscription")
def adapt_subscription_event(event: dict, options: QueueOptions) -> dict:
    """An `add` carries its user's null_notification_fallbacks ("notification_fallbacks", for this
    only: never sent); nor are the archiving marks (see ARCHIVING_MARKS)."""
    event = _unmarked(event)
    if "notification_fallbacks" not in event:
        return event
    event = dict(event)
    fallbacks = event.pop("notification_fallbacks")
    if fallbacks is None or options.client_capabilities.get("notification_settings_null", False):
        return event
    subscriptions = [fill_null_notification_settings(sub, fallbacks) for sub in event["subscriptions"]]
    return {**event, "subscriptions": subscriptions}


@initial_state("realm_user")
def channel_permissions_state(context: StateContext) -> dict:
    """What the user may do with channels, as Zulip's register computes it from the organization's
    settings (clients show or hide their buttons by it)."""
    membership = Membership(context.user, group_ids=membership_group_ids(context))
    public = can_create_channels(membership, invite_only=False)
    private = can_create_channels(membership, invite_only=True)
    return {
        "can_create_public_streams": public,
        "can_create_private_streams": private,
        "can_create_web_public_streams": False,  # Parley has no web-public channels
        "can_create_streams": public or private,  # its name before Zulip 5.0 (feature level 102)
        "can_subscribe_other_users": has_realm_setting(membership, "can_add_subscribers_group"),  # never guests
    }
