"""Drafts' part of the event system: the `drafts` initial state. Their events (drafts add, update,
remove) go to the owner's queues as they are."""

from apps.drafts.selectors import MAX_DRAFTS_IN_REGISTER_RESPONSE, drafts_for_user
from apps.events.registry import StateContext, initial_state


@initial_state("drafts")
def drafts_state(context: StateContext) -> dict:
    """The user's most recently edited drafts (at most MAX_DRAFTS_IN_REGISTER_RESPONSE), newest
    first; none when they turned synchronization off."""
    user = context.user
    if not user.enable_drafts_synchronization:
        return {"drafts": []}
    return {"drafts": drafts_for_user(user, limit=MAX_DRAFTS_IN_REGISTER_RESPONSE)}
