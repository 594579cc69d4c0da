"""Request parameter classes of /channel_folders, and the Channel folder object."""

from typing import Annotated, Any

from pydantic import Field

from apps.core.params import Id, Json, Params
from apps.folders.models import ChannelFolder

FolderName = Annotated[str, Field(max_length=ChannelFolder.MAX_NAME_LENGTH)]
FolderDescription = Annotated[str, Field(max_length=ChannelFolder.MAX_DESCRIPTION_LENGTH)]

# The most folder ids PATCH /channel_folders reads (an organization has far fewer folders).
MAX_ORDER_ITEMS = 10_000


class ListChannelFoldersParams(Params):
    include_archived: Json[bool] = False


class CreateChannelFolderParams(Params):
    name: FolderName
    description: FolderDescription


class UpdateChannelFolderParams(Params):
    name: FolderName | None = None
    description: FolderDescription | None = None
    is_archived: Json[bool] | None = None


class ReorderChannelFoldersParams(Params):
    order: Json[Annotated[list[Id], Field(max_length=MAX_ORDER_ITEMS)]]


def channel_folder_to_dict(folder: ChannelFolder) -> dict[str, Any]:
    """Zulip's Channel folder object: GET /channel_folders, /register and channel_folder/add."""
    return {
        "id": folder.id,
        "name": folder.name,
        "description": folder.description,
        "rendered_description": folder.rendered_description,
        "order": folder.order,
        "date_created": int(folder.date_created.timestamp()),
        "creator_id": folder.creator_id,
        "is_archived": folder.is_archived,
    }
