"""Saved snippets' part of the event system: the `saved_snippets` initial state. Their events (add,
update, remove) go to the owner's queues as they are."""

from apps.events.registry import StateContext, initial_state
from apps.snippets.selectors import saved_snippets_for_user


@initial_state("saved_snippets")
def saved_snippets_state(context: StateContext) -> dict:
    return {"saved_snippets": saved_snippets_for_user(context.user)}
