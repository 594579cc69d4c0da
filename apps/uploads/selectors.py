"""Reads of uploaded files and custom emoji: a user's files and the space they take, who may
download a file, and the organization's emoji in Zulip's shapes."""

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

from django.db.models import Sum

from apps.groups.selectors import has_realm_permission
from apps.messages.hooks import contents_to_send
from apps.messages.selectors import visible_message_flags
from apps.realms.models import Realm
from apps.uploads.errors import InvalidAttachmentError, UploadForbiddenError, UploadNotFoundError
from apps.uploads.models import Attachment, RealmEmoji
from apps.users.models import User

# A link to an uploaded file in a message's Markdown: /user_uploads/{realm id}/{random}/{name},
# relative or on any host (the path id is then looked up; text that only looks like one is ignored).
UPLOAD_LINK_RE = re.compile(r"/user_uploads/(\d+/[A-Za-z0-9_-]+/[^\s)\]>\"'`]+)")
# A message linking more files than this has only its first ones claimed.
MAX_LINKED_FILES = 100


def _millis(moment) -> int:
    return int(moment.timestamp() * 1000)


def attachment_to_dict(attachment: Attachment, messages: Iterable[Any] | None = None) -> dict[str, Any]:
    """Zulip's Attachment.to_dict: `messages` (id, date_sent) of the messages that link it, with
    JavaScript timestamps (milliseconds)."""
    if messages is None:
        messages = attachment.messages.order_by("id")
    return {
        "id": attachment.id,
        "name": attachment.file_name,
        "path_id": attachment.path_id,
        "size": attachment.size,
        "create_time": _millis(attachment.create_time),
        "messages": [{"id": m.id, "date_sent": _millis(m.date_sent)} for m in messages],
    }


def attachments_for_user(user: User) -> list[dict[str, Any]]:
    """The user's uploaded files, newest first, with their messages (two queries)."""
    attachments = Attachment.objects.filter(owner=user).order_by("-id").prefetch_related("messages")
    return [attachment_to_dict(a, sorted(a.messages.all(), key=lambda m: m.id)) for a in attachments]


def upload_space_used(realm: Realm | int) -> int:
    """Bytes the organization's uploaded files take."""
    realm_id = realm if isinstance(realm, int) else realm.id
    return Attachment.objects.filter(realm_id=realm_id).aggregate(total=Sum("size"))["total"] or 0


def access_attachment_by_id(user: User, attachment_id: int) -> Attachment:
    """The user's own uploaded file; "Invalid attachment" for any other id."""
    attachment = Attachment.objects.filter(id=attachment_id, owner=user).first()
    if attachment is None:
        raise InvalidAttachmentError()
    return attachment


def attachment_by_path_id(realm: Realm, path_id: str) -> Attachment | None:
    if not path_id.startswith(f"{realm.id}/") or "\x00" in path_id:  # PostgreSQL refuses NUL
        return None
    return Attachment.objects.filter(realm=realm, path_id=path_id).first()


def old_unclaimed_attachments(older_than) -> list[Attachment]:
    """Files no message links, uploaded before `older_than`, oldest first; not those a message still
    to be sent links (a scheduled message: contents_to_send), as in Zulip."""
    unclaimed = Attachment.objects.filter(messages__isnull=True, create_time__lt=older_than)
    kept = {
        (realm_id, path_id)
        for contents in contents_to_send.call()
        for realm_id, content in contents
        for path_id in linked_path_ids(content)
    }
    found = unclaimed.select_related("owner").order_by("id")
    return [attachment for attachment in found if (attachment.realm_id, attachment.path_id) not in kept]


def can_see_attachment(user: User, attachment: Attachment) -> bool:
    """Zulip's validate_attachment_request: the uploader, and whoever may see a message that links
    the file (received it, or reads the channel's public history)."""
    if attachment.realm_id != user.realm_id:
        return False
    if attachment.owner_id == user.id:
        return True
    message_ids = list(attachment.messages.values_list("id", flat=True))
    return bool(message_ids) and bool(visible_message_flags(user, message_ids))


def access_attachment_for_download(user: User, realm: Realm, path_id: str) -> Attachment:
    """The organization's file at `path_id` if `user` may download it: UploadNotFoundError when there
    is none (another organization's included), UploadForbiddenError when they may not."""
    attachment = attachment_by_path_id(realm, path_id)
    if attachment is None or user.realm_id != realm.id:
        raise UploadNotFoundError()
    if not can_see_attachment(user, attachment):
        raise UploadForbiddenError()
    return attachment


def linked_path_ids(content: str) -> list[str]:
    """The path ids of the uploaded files `content` may link, in order, each once."""
    found: dict[str, None] = {}
    for match in UPLOAD_LINK_RE.finditer(content):
        found[unquote(match.group(1)).rstrip(".,;:!?")] = None
        if len(found) >= MAX_LINKED_FILES:
            break
    return list(found)


# --- custom emoji ---------------------------------------------------------------------------------


def emoji_url(realm_id: int, file_name: str, *, still: bool = False) -> str:
    """Where an emoji's image is served (apps.uploads.pages; no authentication)."""
    if still:
        stem = file_name.rsplit(".", 1)[0]
        return f"/user_avatars/{realm_id}/emoji/images/still/{stem}.png"
    return f"/user_avatars/{realm_id}/emoji/images/{file_name}"


def realm_emoji_to_dict(emoji: RealmEmoji) -> dict[str, Any]:
    return {
        "id": str(emoji.id),
        "name": emoji.name,
        "source_url": emoji_url(emoji.realm_id, emoji.file_name),
        "deactivated": emoji.deactivated,
        "author_id": emoji.author_id,
        "still_url": emoji_url(emoji.realm_id, emoji.file_name, still=True) if emoji.is_animated else None,
    }


def realm_emoji_dicts(realm: Realm | int) -> dict[str, dict[str, Any]]:
    """Every custom emoji of the organization, active or not, by id (Zulip's realm_emoji)."""
    realm_id = realm if isinstance(realm, int) else realm.id
    emoji = RealmEmoji.objects.filter(realm_id=realm_id).exclude(file_name="").order_by("id")
    return {str(e.id): realm_emoji_to_dict(e) for e in emoji}


def active_emoji_by_name(realm: Realm, name: str) -> RealmEmoji | None:
    return RealmEmoji.objects.filter(realm=realm, name=name, deactivated=False).first()


def emoji_file_exists(realm_id: int, file_name: str) -> bool:
    return RealmEmoji.objects.filter(realm_id=realm_id, file_name=file_name).exists()


def can_add_custom_emoji(user: User) -> bool:
    """The organization's can_add_custom_emoji_group (members by default, as in Zulip; PATCH /realm,
    the Django admin)."""
    return has_realm_permission(user, "can_add_custom_emoji_group")
