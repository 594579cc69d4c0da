"""Where uploaded files and custom emoji images are kept: Django's storage named "uploads"
(settings.STORAGES; the filesystem under var/uploads by default, any storage backend otherwise),
with the names, file names and content types Zulip gives them."""

import os
import re
import secrets
import unicodedata

from django.core.files.storage import Storage, storages

# Served inline (every other type is a download), as Zulip's INLINE_MIME_TYPES: types a browser
# shows without running anything. Never SVG or HTML.
INLINE_MIME_TYPES = frozenset(
    {
        "application/pdf",
        "audio/aac",
        "audio/flac",
        "audio/mp4",
        "audio/mpeg",
        "audio/wav",
        "audio/webm",
        "image/apng",
        "image/avif",
        "image/gif",
        "image/jpeg",
        "image/png",
        "image/webp",
        "text/plain",
        "video/mp4",
        "video/webm",
    }
)
# Most filesystems limit a path component to 255 bytes; the sanitized name is one.
MAX_FILE_NAME_BYTES = 255


def upload_storage() -> Storage:
    return storages["uploads"]


def attachment_storage_name(path_id: str) -> str:
    return f"files/{path_id}"


def emoji_storage_name(realm_id: int, file_name: str) -> str:
    return f"emoji/{realm_id}/{file_name}"


def truncate_file_name(name: str, max_bytes: int = MAX_FILE_NAME_BYTES) -> str:
    """At most `max_bytes` bytes of UTF-8, keeping the extension when that leaves room."""
    if len(name.encode()) <= max_bytes:
        return name
    stem, extension = os.path.splitext(name)
    if len(extension.encode()) >= max_bytes:
        stem, extension = name, ""
    room = max_bytes - len(extension.encode())
    return stem.encode()[:room].decode(errors="ignore") + extension


def sanitize_name(value: str) -> str:
    """Zulip's sanitize_name: a name safe in a filesystem, an object store and a URL. Unicode
    letters and digits stay; other characters but ".", "-" and "_" go; runs of spaces and dashes
    become one dash."""
    value = unicodedata.normalize("NFKC", value)
    value = re.sub(r"[^\w\s.-]", "", value).strip()
    value = re.sub(r"[-\s]+", "-", value)
    value = truncate_file_name(value)
    if value in {"", ".", ".."}:
        return "uploaded-file"
    return value


def new_path_id(realm_id: int, file_name: str) -> str:
    """Where a new upload goes: "{realm id}/{24 random characters}/{sanitized name}"."""
    return f"{realm_id}/{secrets.token_urlsafe(18)}/{sanitize_name(file_name)}"


def is_inline(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() in INLINE_MIME_TYPES
