"""Scheduled messages' part of the event system: the `scheduled_messages` and `reminders` initial
states (one read of the user's unsent ones for both). Their events (scheduled_messages add, update,
remove; reminders add, remove) go to the sender's queues as they are."""

from apps.events.registry import StateContext, initial_state
from apps.scheduled_messages.selectors import unsent, unsent_reminders, unsent_scheduled_messages


def _unsent(context: StateContext) -> list:
    return context.once("unsent_scheduled", lambda: list(unsent(context.user)))


@initial_state("scheduled_messages")
def scheduled_messages_state(context: StateContext) -> dict:
    return {"scheduled_messages": unsent_scheduled_messages(context.user, _unsent(context))}


@initial_state("reminders")
def reminders_state(context: StateContext) -> dict:
    return {"reminders": unsent_reminders(context.user, _unsent(context))}
