"""Scheduled messages' part of the event system: the `scheduled_messages` initial state. Their
events (scheduled_messages add, update, remove) go to the sender's queues as they are."""

from apps.events.registry import StateContext, initial_state
from apps.scheduled_messages.selectors import unsent_scheduled_messages


@initial_state("scheduled_messages")
def scheduled_messages_state(context: StateContext) -> dict:
    return {"scheduled_messages": unsent_scheduled_messages(context.user)}
