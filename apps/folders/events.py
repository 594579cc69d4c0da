"""Channel folders' part of the event system: the `channel_folders` initial state. Their events
(channel_folder add, update, reorder) go to every active user of the organization as they are."""

from apps.events.registry import StateContext, initial_state
from apps.folders.selectors import channel_folders_in_realm


@initial_state("channel_folders")
def channel_folders_state(context: StateContext) -> dict:
    """Every folder of the organization, archived ones too (their channels keep them), in order."""
    return {"channel_folders": channel_folders_in_realm(context.user.realm_id, include_archived=True)}
