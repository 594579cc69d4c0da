"""Presence's part of the event system: the `presence` state of POST /register, its keys of the
`realm` state, and presence events in the form each queue asked for."""

from apps.events.registry import QueueOptions, StateContext, event_transform, initial_state
from apps.presence.limits import OFFLINE_THRESHOLD_SECS, PING_INTERVAL_SECS
from apps.presence.selectors import presence_response, user_statuses
from apps.users.access import inaccessible_user_ids


@initial_state("presence")
def presence_state(context: StateContext) -> dict:
    """`presences` (by user id for slim_presence queues, else by API email), `server_timestamp`,
    `presence_last_update_id`."""
    return presence_response(context.user, slim=context.options.slim_presence)


@initial_state("realm")
def presence_realm_state(context: StateContext) -> dict:
    return {
        "server_presence_ping_interval_seconds": PING_INTERVAL_SECS,
        "server_presence_offline_threshold_seconds": OFFLINE_THRESHOLD_SECS,
        "realm_presence_disabled": context.user.realm.presence_disabled,
    }


@event_transform("presence")
def presence_for_queue(event: dict, options: QueueOptions) -> dict:
    """`{"type", "presences": {user_id: modern}}` for queues with the simplified_presence_events
    capability, else Zulip's legacy event (user_id, email, server_timestamp, presence)."""
    if options.client_capabilities.get("simplified_presence_events"):
        # With its queue id, which the client acknowledges (GET /events' last_event_id).
        return {key: event[key] for key in ("id", "type", "presences") if key in event}
    return {key: value for key, value in event.items() if key != "presences"}


@initial_state("user_status")
def user_status_state(context: StateContext) -> dict:
    statuses = user_statuses(context.user.realm_id)
    # A guest who may see only some people: theirs, and bots'.
    unknown = inaccessible_user_ids(context.user, map(int, statuses))
    return {"user_status": {user_id: status for user_id, status in statuses.items() if int(user_id) not in unknown}}
