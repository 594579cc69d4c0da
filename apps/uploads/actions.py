"""Every change to uploaded files and custom emoji: uploading a file, a message's content claiming
the files it links (and releasing those it no longer links), deleting a file; adding and
deactivating custom emoji. Files are written to the storage before the rows that name them, and
removed from it once the deletion of their row commits."""

import logging
import re
import secrets
from unicodedata import normalize

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction

from apps.core.errors import JsonableError, ResourceNotFoundError
from apps.core.params import content_type_of
from apps.events.publish import Everyone, send_event_on_commit
from apps.messages.emoji import ZULIP_EXTRA_EMOJI, unicode_emoji_code
from apps.messages.models import Message
from apps.realms.models import Realm
from apps.uploads.errors import FileTooLargeError, InvalidAttachmentError, RealmUploadQuotaError
from apps.uploads.images import MAX_EMOJI_FILE_SIZE_MIB, emoji_image
from apps.uploads.models import Attachment, RealmEmoji
from apps.uploads.selectors import (
    attachment_to_dict,
    can_add_custom_emoji,
    can_see_attachment,
    linked_path_ids,
    realm_emoji_dicts,
    realm_emoji_to_dict,
    upload_space_used,
)
from apps.uploads.storage import (
    attachment_storage_name,
    emoji_storage_name,
    new_path_id,
    upload_storage,
)
from apps.uploads.thumbnails import UploadedImage, thumbnail_storage_name, uploaded_image, with_image_previews
from apps.users.models import User

logger = logging.getLogger(__name__)

MIB = 1024 * 1024
_EMOJI_NAME_RE = re.compile(r"[0-9a-z_-]+")


# --- uploaded files -------------------------------------------------------------------------------


def _notify_attachment(attachment: Attachment, op: str, data: dict) -> None:
    event = {
        "type": "attachment",
        "op": op,
        "attachment": data,
        "upload_space_used": upload_space_used(attachment.realm_id),
    }
    send_event_on_commit(attachment.realm_id, event, [attachment.owner_id])


def check_upload_file(user: User, uploaded: UploadedFile) -> Attachment:
    """POST /user_uploads: the file checked against the server's size limit and the organization's
    quota, stored, then recorded (do_create_attachment)."""
    max_mib = settings.MAX_FILE_UPLOAD_SIZE_MIB
    size = uploaded.size or 0
    if size > max_mib * MIB or max_mib == 0:
        raise FileTooLargeError(max_mib)
    quota_mib = settings.UPLOAD_QUOTA_MIB_PER_REALM
    if quota_mib and upload_space_used(user.realm_id) + size > quota_mib * MIB:
        raise RealmUploadQuotaError()
    # NUL is the one character the database cannot keep (Zulip removes it too).
    file_name = normalize("NFC", (uploaded.name or "").replace("\x00", ""))
    content_type = content_type_of(uploaded.content_type, file_name)
    storage = upload_storage()
    stored = storage.save(attachment_storage_name(new_path_id(user.realm_id, file_name)), uploaded)
    path_id = stored.removeprefix("files/")
    written = [stored]
    try:
        image = uploaded_image(uploaded, content_type)
        if image is not None:
            for name, data in image.thumbnails.items():
                written.append(storage.save(thumbnail_storage_name(path_id, name), ContentFile(data)))
        return do_create_attachment(
            user,
            path_id=path_id,
            file_name=file_name,
            content_type=content_type,
            size=size,
            image=image,
            acting_user=user,
        )
    except BaseException:
        for name in written:
            storage.delete(name)
        raise


@transaction.atomic(savepoint=False)
def do_create_attachment(
    owner: User,
    *,
    path_id: str,
    file_name: str,
    content_type: str,
    size: int,
    image: UploadedImage | None = None,
    acting_user: User | None,
) -> Attachment:
    """Record a stored file as `owner`'s (with, for an image, its dimensions and stored thumbnails),
    within the organization's quota: checked again with its row locked, so that uploads made at
    the same time cannot together pass it (RealmUploadQuotaError).

    Emits: attachment/add {attachment, upload_space_used} to the owner.
    """
    quota_mib = settings.UPLOAD_QUOTA_MIB_PER_REALM
    if quota_mib:
        Realm.objects.select_for_update(no_key=True).filter(id=owner.realm_id).exists()
        if upload_space_used(owner.realm_id) + size > quota_mib * MIB:
            raise RealmUploadQuotaError()
    attachment = Attachment.objects.create(
        realm_id=owner.realm_id,
        owner=owner,
        path_id=path_id,
        file_name=file_name,
        content_type=content_type,
        size=size,
        image_width=image.width if image else None,
        image_height=image.height if image else None,
        image_frames=image.frames if image else None,
        thumbnails=sorted(image.thumbnails) if image else [],
    )
    _notify_attachment(attachment, "add", attachment_to_dict(attachment, []))
    return attachment


@transaction.atomic(savepoint=False)
def do_delete_attachment(attachment: Attachment, *, acting_user: User | None) -> None:
    """DELETE /attachments/{id}: the file and its row (messages that link it keep their text).

    Emits: attachment/remove {attachment: {id}, upload_space_used} to the owner. Raises "Invalid
    attachment" when another request deleted it meanwhile (its row, locked first, makes deletions
    take turns: the hostile-input QA pass, 8 of 20 at once answered 200, each with its event).
    """
    if not Attachment.objects.select_for_update().filter(id=attachment.id).exists():
        raise InvalidAttachmentError()
    attachment_id = attachment.id
    stored = [attachment_storage_name(attachment.path_id)]
    stored += [thumbnail_storage_name(attachment.path_id, name) for name in attachment.thumbnails]
    attachment.delete()
    attachment.id = attachment_id
    _notify_attachment(attachment, "remove", {"id": attachment_id})
    transaction.on_commit(lambda: _delete_stored(stored))


def _delete_stored(names: list[str]) -> None:
    for name in names:
        try:
            upload_storage().delete(name)
        except OSError:
            logger.warning("could not delete the stored file %s", name, exc_info=True)


@transaction.atomic(savepoint=False)
def do_sync_message_attachments(message: Message) -> dict[str, bool]:
    """The files `message`'s content links now: those its sender may see (their own, or linked by
    a message they may see) are claimed by it, those it no longer links are released (Zulip's
    do_claim_attachments and check_attachment_reference_change). Returns the message's
    has_attachment and has_image (an image file claimed), its rendered_content with the previews
    of the thumbnailed images it links (apps.uploads.thumbnails) when there are any, and
    `detached_uploads`: the sender's files this content no longer links and no message links now
    (Zulip's, for the edit's answer). No query for a message that links no file and linked none.

    Emits: attachment/update {attachment, upload_space_used} to the owner of each file claimed or
    released.
    """
    wanted = linked_path_ids(message.content) if "/user_uploads/" in message.content else []
    if not wanted and not message.has_attachment:
        return {}
    current = {a.path_id: a for a in Attachment.objects.filter(messages=message)}
    changed = [a for path_id, a in current.items() if path_id not in wanted]
    if changed:
        Attachment.messages.through.objects.filter(message=message, attachment__in=changed).delete()
    kept = [a for path_id, a in current.items() if path_id in wanted]
    candidates = Attachment.objects.filter(realm_id=message.realm_id, path_id__in=set(wanted) - set(current))
    for attachment in candidates:
        if can_see_attachment(message.sender, attachment):
            attachment.messages.add(message)
            kept.append(attachment)
            changed.append(attachment)
    detached = []
    for attachment in changed:
        data = attachment_to_dict(attachment)
        _notify_attachment(attachment, "update", data)
        if attachment.owner_id == message.sender_id and not data["messages"]:
            detached.append(data)
    found = {
        "has_attachment": bool(kept),
        "has_image": any(a.content_type.startswith("image/") for a in kept),
        "detached_uploads": detached,
    }
    images = {a.path_id: a for a in kept if a.thumbnails}
    if images:
        found["rendered_content"] = with_image_previews(message.rendered_content, images)
    return found


# --- custom emoji ---------------------------------------------------------------------------------


def check_valid_emoji_name(name: str) -> None:
    """Zulip's rules (and Parley's cap on the length)."""
    if not name:
        raise JsonableError("Emoji name is missing")
    if not _EMOJI_NAME_RE.fullmatch(name):
        raise JsonableError(
            "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."
        )
    if name[-1] in "-_":
        raise JsonableError("Emoji names must end with either a letter or digit.")
    if len(name) > RealmEmoji.MAX_NAME_LENGTH:
        raise JsonableError(f"Emoji names must be at most {RealmEmoji.MAX_NAME_LENGTH} characters.")


def check_add_realm_emoji(name: str, files: list[UploadedFile], *, acting_user: User) -> RealmEmoji:
    """POST /realm/emoji/{name}, checked in Zulip's order: the name, the permission, a clash with
    an active emoji, exactly one file, overriding a built-in emoji (administrators only), the
    size, the image; then stored (do_add_realm_emoji)."""
    name = name.strip().replace(" ", "_")
    check_valid_emoji_name(name)
    if not can_add_custom_emoji(acting_user):
        raise JsonableError("Insufficient permission")
    realm = acting_user.realm
    if RealmEmoji.objects.filter(realm=realm, name=name, deactivated=False).exists():
        raise JsonableError("A custom emoji with this name already exists.")
    if len(files) != 1:
        raise JsonableError("You must upload exactly one file.")
    if (name == ZULIP_EXTRA_EMOJI or unicode_emoji_code(name) is not None) and not acting_user.is_admin:
        raise JsonableError("Only administrators can override default emoji.")
    [uploaded] = files
    if (uploaded.size or 0) > MAX_EMOJI_FILE_SIZE_MIB * MIB:
        raise JsonableError(f"Uploaded file is larger than the allowed limit of {MAX_EMOJI_FILE_SIZE_MIB} MiB")
    image = emoji_image(uploaded.read(), content_type_of(uploaded.content_type, uploaded.name or ""))
    storage = upload_storage()
    file_name = storage.save(
        emoji_storage_name(realm.id, f"{secrets.token_hex(4)}{image.extension}"), ContentFile(image.data)
    ).rsplit("/", 1)[-1]
    stored = [emoji_storage_name(realm.id, file_name)]
    if image.still_png is not None:
        stem = file_name.rsplit(".", 1)[0]
        stored.append(storage.save(emoji_storage_name(realm.id, f"still/{stem}.png"), ContentFile(image.still_png)))
    try:
        return do_add_realm_emoji(
            realm, name=name, file_name=file_name, is_animated=image.is_animated, acting_user=acting_user
        )
    except BaseException:
        for each in stored:
            storage.delete(each)
        raise


@transaction.atomic
def do_add_realm_emoji(
    realm: Realm, *, name: str, file_name: str, is_animated: bool, acting_user: User | None
) -> RealmEmoji:
    """Record a custom emoji whose image is stored; "A custom emoji with this name already
    exists." when another request added an active one of this name first (the unique constraint).

    Emits: realm_emoji/add {emoji} to its active users (realm_emoji/update {realm_emoji: all of the
    organization's} to queues without the individual_emoji_changes capability).
    """
    emoji = RealmEmoji(realm=realm, name=name, author=acting_user, file_name=file_name, is_animated=is_animated)
    try:
        with transaction.atomic():
            emoji.save(force_insert=True)
    except IntegrityError:
        raise JsonableError("A custom emoji with this name already exists.") from None
    _notify_realm_emoji(realm.id, {"op": "add", "emoji": realm_emoji_to_dict(emoji)})
    return emoji


def check_remove_realm_emoji(name: str, *, acting_user: User) -> None:
    """DELETE /realm/emoji/{name}: by administrators and the emoji's author."""
    emoji = None
    if _EMOJI_NAME_RE.fullmatch(name):  # no query for a name no emoji can have (NUL: PostgreSQL refuses it)
        emoji = RealmEmoji.objects.filter(realm_id=acting_user.realm_id, name=name, deactivated=False).first()
    if emoji is None:
        raise ResourceNotFoundError(f"Emoji '{name}' does not exist")
    if not acting_user.is_admin and emoji.author_id != acting_user.id:
        raise JsonableError("Must be an organization administrator or emoji author")
    do_deactivate_realm_emoji(emoji, acting_user=acting_user)


@transaction.atomic(savepoint=False)
def do_deactivate_realm_emoji(emoji: RealmEmoji, *, acting_user: User | None) -> None:
    """Deactivate a custom emoji (kept: reactions name it; its name is free again).

    Emits: realm_emoji/update_one {emoji_id, data: {deactivated: true}} to the organization's active
    users (realm_emoji/update {realm_emoji} to queues without individual_emoji_changes). Raises
    "Emoji ... does not exist" when another request deactivated it meanwhile (the update waits for
    the other's row lock, then finds nothing to change: the hostile-input QA pass, up to 8 of 20
    at once answered 200, each with its events).
    """
    if not RealmEmoji.objects.filter(id=emoji.id, deactivated=False).update(deactivated=True):
        raise ResourceNotFoundError(f"Emoji '{emoji.name}' does not exist")
    emoji.deactivated = True
    _notify_realm_emoji(emoji.realm_id, {"op": "update_one", "emoji_id": str(emoji.id), "data": {"deactivated": True}})


def _notify_realm_emoji(realm_id: int, change: dict) -> None:
    """The change (Zulip's realm_emoji/add or update_one), with every emoji of the organization for
    the queues that take the whole list instead (apps.uploads.events.realm_emoji_for_queue)."""
    event = {"type": "realm_emoji", **change, "realm_emoji": realm_emoji_dicts(realm_id)}
    send_event_on_commit(realm_id, event, Everyone())
