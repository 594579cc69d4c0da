"""Push's part of the event system: the `devices` state of POST /register (fetch type "device").
Device events go to their owner's queues as they are."""

from apps.events.registry import StateContext, initial_state
from apps.push.selectors import devices_for_user


@initial_state("device")
def devices_state(context: StateContext) -> dict:
    return {"devices": devices_for_user(context.user)}
