"""Uploads' part of the event system: the organization's custom emoji (`realm_emoji`) and the
upload limit in the "realm" state. `attachment` events go to queues as they are, `realm_emoji` events in
the form each queue asked for."""

from django.conf import settings

from apps.events.registry import QueueOptions, StateContext, event_transform, initial_state
from apps.uploads.selectors import realm_emoji_dicts
from apps.uploads.thumbnails import THUMBNAIL_OUTPUT_FORMATS


@initial_state("realm_emoji")
def realm_emoji_state(context: StateContext) -> dict:
    return {"realm_emoji": realm_emoji_dicts(context.user.realm_id)}


@event_transform("realm_emoji")
def realm_emoji_for_queue(event: dict, options: QueueOptions) -> dict:
    """Zulip's realm_emoji/add and realm_emoji/update_one for queues with the individual_emoji_changes
    capability (feature level 491); for the others, realm_emoji/update with every custom emoji."""
    if options.client_capabilities.get("individual_emoji_changes"):
        return {key: value for key, value in event.items() if key != "realm_emoji"}
    return {key: event[key] for key in ("id", "type", "realm_emoji") if key in event} | {"op": "update"}


@initial_state("realm")
def upload_limits_state(context: StateContext) -> dict:
    # (realm_can_add_custom_emoji_group is among the organization's group settings: apps.groups.)
    return {
        "max_file_upload_size_mib": settings.MAX_FILE_UPLOAD_SIZE_MIB,
        "max_avatar_file_size_mib": settings.MAX_AVATAR_FILE_SIZE_MIB,
        # The organization's quota of uploaded files, for display (null: none), as Zulip's.
        "realm_upload_quota_mib": settings.UPLOAD_QUOTA_MIB_PER_REALM or None,
        # Zulip's: the thumbnails of uploaded images, which clients may ask for instead of the one
        # a message shows (apps.uploads.thumbnails).
        "server_thumbnail_formats": [each.to_dict() for each in THUMBNAIL_OUTPUT_FORMATS],
    }
