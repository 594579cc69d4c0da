"""Uploads' part of the event system: the organization's custom emoji (`realm_emoji`) and the
upload limit in the "realm" state. `attachment` and `realm_emoji` events go to queues as they are."""

from django.conf import settings

from apps.events.registry import StateContext, initial_state
from apps.uploads.selectors import realm_emoji_dicts
from apps.uploads.thumbnails import THUMBNAIL_OUTPUT_FORMATS


@initial_state("realm_emoji")
def realm_emoji_state(context: StateContext) -> dict:
    return {"realm_emoji": realm_emoji_dicts(context.user.realm_id)}


@initial_state("realm")
def upload_limits_state(context: StateContext) -> dict:
    # (realm_can_add_custom_emoji_group is among the organization's group settings: apps.groups.)
    return {
        "max_file_upload_size_mib": settings.MAX_FILE_UPLOAD_SIZE_MIB,
        # Zulip's: the thumbnails of uploaded images, which clients may ask for instead of the one
        # a message shows (apps.uploads.thumbnails).
        "server_thumbnail_formats": [each.to_dict() for each in THUMBNAIL_OUTPUT_FORMATS],
    }
