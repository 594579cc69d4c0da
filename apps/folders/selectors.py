"""Reads of channel folders. An organization's folders are seen by all its users; another
organization's do not exist for them."""

from typing import Any

from django.db.models import Max
from django.db.models.functions import Upper

from apps.folders.errors import InvalidChannelFolderError
from apps.folders.models import ChannelFolder
from apps.folders.serializers import channel_folder_to_dict
from apps.realms.models import Realm

MAX_ID = 2**63 - 1


def channel_folders_in_realm(realm: Realm | int, *, include_archived: bool) -> list[dict[str, Any]]:
    """The organization's Channel folder objects in their order (`order`, then id): one query."""
    folders = ChannelFolder.objects.filter(realm=realm)
    if not include_archived:
        folders = folders.filter(is_archived=False)
    return [channel_folder_to_dict(folder) for folder in folders.order_by("order", "id")]


def access_channel_folder_by_id(realm: Realm | int, folder_id: int, *, for_update: bool = False) -> ChannelFolder:
    """The organization's folder with this id; "Invalid channel folder ID" if it has none (or the id
    is one no row could have)."""
    if not 0 < folder_id <= MAX_ID:
        raise InvalidChannelFolderError()
    folders = ChannelFolder.objects.select_for_update() if for_update else ChannelFolder.objects
    folder = folders.filter(realm=realm, id=folder_id).first()
    if folder is None:
        raise InvalidChannelFolderError()
    return folder


def folder_name_in_use(realm: Realm | int, name: str, *, exclude: ChannelFolder | None = None) -> bool:
    """Whether a folder in use (not archived) of the organization has this name, whatever its case."""
    folders = ChannelFolder.objects.annotate(upper_name=Upper("name")).filter(
        realm=realm, is_archived=False, upper_name=name.upper()
    )
    if exclude is not None:
        folders = folders.exclude(id=exclude.id)
    return folders.exists()


def next_folder_order(realm: Realm | int) -> int:
    """The order that puts a new folder after every other."""
    highest = ChannelFolder.objects.filter(realm=realm).aggregate(highest=Max("order"))["highest"]
    return 0 if highest is None else highest + 1


def folder_ids_in_realm(realm: Realm | int) -> list[int]:
    return list(ChannelFolder.objects.filter(realm=realm).values_list("id", flat=True))
