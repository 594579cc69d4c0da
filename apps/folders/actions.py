"""Channel folders: creating, renaming, describing, archiving and ordering an organization's folders
(Zulip's channel_folders). Administrators manage them (the views' gate; the admin's staff and
commands act as the server). Each change writes its audit log entry in its transaction and tells
every active user of the organization (channel_folder events)."""

from collections.abc import Sequence

from django.db import IntegrityError, transaction

from apps.core.errors import JsonableError
from apps.core.markdown import render_description
from apps.core.text import unprintable_position
from apps.events.publish import Everyone, send_event_on_commit
from apps.folders.errors import ChannelFolderNameInUseError
from apps.folders.hooks import folder_in_use
from apps.folders.models import ChannelFolder
from apps.folders.selectors import folder_ids_in_realm, folder_name_in_use, next_folder_order
from apps.folders.serializers import channel_folder_to_dict
from apps.realms.audit import audit, changed
from apps.realms.models import AuditLogEventType, Realm
from apps.users.models import User


def _send_to_realm(realm_id: int, event: dict) -> None:
    send_event_on_commit(realm_id, event, Everyone())


def _audit(folder: ChannelFolder, event_type: AuditLogEventType, acting_user: User | None, **extra) -> None:
    audit(folder.realm_id, event_type, extra_data={"channel_folder_id": folder.id, **extra}, acting_user=acting_user)


def _send_update(folder: ChannelFolder, data: dict) -> None:
    """Emits: channel_folder/update {channel_folder_id, data} to the organization's active users."""
    _send_to_realm(
        folder.realm_id, {"type": "channel_folder", "op": "update", "channel_folder_id": folder.id, "data": data}
    )


# --- checking what is sent ------------------------------------------------------------------------


def check_channel_folder_name(name: str) -> str:
    """Zulip's rules for a folder's name; returns it stripped."""
    name = name.strip()
    if not name:
        raise JsonableError("Channel folder name can't be empty.")
    if len(name) > ChannelFolder.MAX_NAME_LENGTH:
        raise JsonableError(f"name is too long (limit: {ChannelFolder.MAX_NAME_LENGTH} characters)")
    position = unprintable_position(name)
    if position is not None:
        raise JsonableError(f"Invalid character in channel folder name, at position {position}.")
    return name


def check_channel_folder_description(description: str) -> str:
    if len(description) > ChannelFolder.MAX_DESCRIPTION_LENGTH:
        raise JsonableError(f"description is too long (limit: {ChannelFolder.MAX_DESCRIPTION_LENGTH} characters)")
    return description


# --- creating and changing folders ----------------------------------------------------------------


def check_add_channel_folder(realm: Realm, *, name: str, description: str, acting_user: User | None) -> ChannelFolder:
    """POST /channel_folders/create: the name (check_channel_folder_name, free among the folders in
    use) and description checked, then do_add_channel_folder."""
    name = check_channel_folder_name(name)
    description = check_channel_folder_description(description)
    if folder_name_in_use(realm, name):
        raise ChannelFolderNameInUseError()
    return do_add_channel_folder(realm, name=name, description=description, acting_user=acting_user)


@transaction.atomic
def do_add_channel_folder(realm: Realm, *, name: str, description: str, acting_user: User | None) -> ChannelFolder:
    """Create a folder (checked values) after the organization's others, `acting_user` its creator.
    Raises ChannelFolderNameInUseError when another request took the name meanwhile.

    Emits: channel_folder/add {channel_folder} to the organization's active users.
    Audit: CHANNEL_FOLDER_CREATED {channel_folder_id, name}.
    """
    try:
        with transaction.atomic():
            folder = ChannelFolder.objects.create(
                realm=realm,
                name=name,
                description=description,
                rendered_description=render_description(realm.id, description, acting_user=acting_user),
                order=next_folder_order(realm),
                creator=acting_user,
            )
    except IntegrityError:
        raise ChannelFolderNameInUseError() from None
    _audit(folder, AuditLogEventType.CHANNEL_FOLDER_CREATED, acting_user, name=name)
    _send_to_realm(realm.id, {"type": "channel_folder", "op": "add", "channel_folder": channel_folder_to_dict(folder)})
    return folder


@transaction.atomic
def check_update_channel_folder(
    folder: ChannelFolder,
    *,
    name: str | None = None,
    description: str | None = None,
    is_archived: bool | None = None,
    acting_user: User | None,
) -> None:
    """PATCH /channel_folders/{id}, for a folder of the user's organization: each value given and
    different from the folder's checked, then changed (None leaves a value as it is); all or
    nothing. A new name (or, unarchiving, the folder's) must be free among the folders in use.
    A folder with channels in it is not archived, as in Zulip (clients would not know the folder
    their channels name)."""
    if is_archived and not folder.is_archived:
        check_may_archive_channel_folder(folder)
    in_use_afterwards = not (folder.is_archived if is_archived is None else is_archived)
    if name is not None:
        name = check_channel_folder_name(name)
        if name != folder.name and in_use_afterwards and folder_name_in_use(folder.realm_id, name, exclude=folder):
            raise ChannelFolderNameInUseError()
    if description is not None:
        description = check_channel_folder_description(description)
    if name is not None and name != folder.name:
        do_rename_channel_folder(folder, name, acting_user=acting_user)
    if description is not None and description != folder.description:
        do_change_channel_folder_description(folder, description, acting_user=acting_user)
    if is_archived is not None and is_archived != folder.is_archived:
        do_set_channel_folder_archived(folder, is_archived, acting_user=acting_user)


def check_may_archive_channel_folder(folder: ChannelFolder) -> None:
    """Zulip's rule: a folder is archived once no channel is in it."""
    if any(folder_in_use.call(folder)):
        raise JsonableError("You need to remove all the channels from this folder to archive it.")


def _update_in_use_name(folder: ChannelFolder, **values) -> None:
    """Write these values of the folder; ChannelFolderNameInUseError if its name, in use afterwards,
    is another folder's in use (the database's constraint: a request may have taken it meanwhile)."""
    try:
        with transaction.atomic():
            ChannelFolder.objects.filter(id=folder.id).update(**values)
    except IntegrityError:
        raise ChannelFolderNameInUseError() from None


@transaction.atomic
def do_rename_channel_folder(folder: ChannelFolder, name: str, *, acting_user: User | None) -> None:
    """Rename the folder (a checked name). Raises ChannelFolderNameInUseError when another folder in
    use has it.

    Emits: channel_folder/update {data: {name}}. Audit: CHANNEL_FOLDER_NAME_CHANGED.
    """
    old = folder.name
    _update_in_use_name(folder, name=name)
    folder.name = name
    _audit(folder, AuditLogEventType.CHANNEL_FOLDER_NAME_CHANGED, acting_user, **changed("name", old, name))
    _send_update(folder, {"name": name})


@transaction.atomic(savepoint=False)
def do_change_channel_folder_description(folder: ChannelFolder, description: str, *, acting_user: User | None) -> None:
    """Set the folder's description (checked) and its rendering.

    Emits: channel_folder/update {data: {description, rendered_description}}.
    Audit: CHANNEL_FOLDER_DESCRIPTION_CHANGED.
    """
    old = folder.description
    folder.description = description
    folder.rendered_description = render_description(folder.realm_id, description, acting_user=acting_user)
    folder.save(update_fields=["description", "rendered_description"])
    extra = changed("description", old, description)
    _audit(folder, AuditLogEventType.CHANNEL_FOLDER_DESCRIPTION_CHANGED, acting_user, **extra)
    _send_update(folder, {"description": description, "rendered_description": folder.rendered_description})


@transaction.atomic
def do_set_channel_folder_archived(folder: ChannelFolder, is_archived: bool, *, acting_user: User | None) -> None:
    """Archive or unarchive the folder (check_update_channel_folder: only an empty one is archived, as
    in Zulip; the server's own tools may archive any, its channels staying in it). Unarchiving raises
    ChannelFolderNameInUseError when a folder in use has taken its name meanwhile.

    Emits: channel_folder/update {data: {is_archived}}.
    Audit: CHANNEL_FOLDER_ARCHIVED or CHANNEL_FOLDER_UNARCHIVED.
    """
    if not is_archived and folder_name_in_use(folder.realm_id, folder.name, exclude=folder):
        raise ChannelFolderNameInUseError()
    _update_in_use_name(folder, is_archived=is_archived)
    folder.is_archived = is_archived
    event_type = (
        AuditLogEventType.CHANNEL_FOLDER_ARCHIVED if is_archived else AuditLogEventType.CHANNEL_FOLDER_UNARCHIVED
    )
    _audit(folder, event_type, acting_user)
    _send_update(folder, {"is_archived": is_archived})


# --- ordering -------------------------------------------------------------------------------------


@transaction.atomic
def check_reorder_channel_folders(realm: Realm, order: Sequence[int], *, acting_user: User | None) -> None:
    """PATCH /channel_folders: `order` lists every folder of the organization (archived ones too),
    each once, first shown first; "Invalid order mapping." otherwise. Each folder's order becomes
    its position.

    Emits: channel_folder/reorder {order}. Audit: CHANNEL_FOLDERS_REORDERED {order}.
    """
    ids = folder_ids_in_realm(realm)
    if len(order) != len(ids) or set(order) != set(ids):
        raise JsonableError("Invalid order mapping.")
    _apply_order(realm, list(order), acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_move_channel_folder(folder: ChannelFolder, order: int, *, acting_user: User | None) -> None:
    """Give the folder this order value (the admin's order column): the organization's folders are
    then numbered 0, 1, ... in their new order (order, then id), which is announced.

    Emits: channel_folder/reorder {order}. Audit: CHANNEL_FOLDERS_REORDERED {order}.
    """
    ChannelFolder.objects.filter(id=folder.id).update(order=order)
    folder.order = order
    ids = list(
        ChannelFolder.objects.filter(realm_id=folder.realm_id).order_by("order", "id").values_list("id", flat=True)
    )
    _apply_order(folder.realm_id, ids, acting_user=acting_user)
    folder.order = ids.index(folder.id)


def _apply_order(realm: Realm | int, order: list[int], *, acting_user: User | None) -> None:
    realm_id = realm if isinstance(realm, int) else realm.id
    folders = list(ChannelFolder.objects.select_for_update().filter(realm_id=realm_id, id__in=order))
    position = {folder_id: index for index, folder_id in enumerate(order)}
    for folder in folders:
        folder.order = position[folder.id]
    ChannelFolder.objects.bulk_update(folders, ["order"])
    audit(realm_id, AuditLogEventType.CHANNEL_FOLDERS_REORDERED, extra_data={"order": order}, acting_user=acting_user)
    _send_to_realm(realm_id, {"type": "channel_folder", "op": "reorder", "order": order})
