"""Serving uploaded files and custom emoji images, outside /api/v1 (mounted by config/urls.py):

- GET /user_uploads/{realm_id}/{random}/{name}: to the uploader and whoever may see a message linking the
  file, with a browser session or HTTP Basic API credentials (as Zulip);
  /user_uploads/download/... always as a download; /user_uploads/thumbnail/.../{format} an
  image's thumbnail (apps.uploads.thumbnails), to the same people;
- GET /user_uploads/temporary/{token}/{name}: without credentials, for a minute after
  GET /api/v1/user_uploads/... handed out the token;
- GET /user_avatars/{realm_id}/emoji/images/{name}: custom emoji, to anyone;
- GET /user_avatars/{realm_id}/{hash}.png (and {hash}-medium.png): uploaded avatars
  (apps.users.avatars), to anyone, as Zulip serves them.

Files are sent with their content type, inline only when a browser shows that type without running
anything (storage.INLINE_MIME_TYPES), never sniffed, and in a CSP sandbox: an uploaded HTML or SVG
file cannot run in the organization's origin. Errors are Zulip's envelope.
"""

import re
from urllib.parse import quote

from django.core import signing
from django.http import FileResponse, HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from apps.core.auth import realm_for_request
from apps.core.errors import JsonableError, MethodNotAllowedError, error_response
from apps.core.sessions import credentials_or_session_user
from apps.uploads.errors import UploadNotFoundError
from apps.uploads.models import Attachment
from apps.uploads.selectors import access_attachment_for_download, attachment_by_path_id
from apps.uploads.storage import attachment_storage_name, emoji_storage_name, is_inline, upload_storage
from apps.uploads.thumbnails import thumbnail_storage_name
from apps.users.avatars import avatar_storage, avatar_storage_name

TEMPORARY_URL_SECONDS = 60
_TOKEN_SALT = "apps.uploads.temporary_url"  # noqa: S105 (a signing salt, not a secret)
SANDBOX_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; media-src 'self'; sandbox"
_EMOJI_FILE_RE = re.compile(r"[A-Za-z0-9_]{1,40}\.(png|gif|jpeg|webp)")
_AVATAR_FILE_RE = re.compile(r"([0-9a-f]{32})(-medium)?\.png")
_EMOJI_CONTENT_TYPES = {"png": "image/png", "gif": "image/gif", "jpeg": "image/jpeg", "webp": "image/webp"}


def temporary_url(path_id: str) -> str:
    token = signing.dumps(path_id, salt=_TOKEN_SALT)
    return f"/user_uploads/temporary/{quote(token)}/{quote(path_id.rsplit('/', 1)[-1])}"


def _protect(response: HttpResponse) -> HttpResponse:
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = SANDBOX_CSP
    return response


def file_response(attachment: Attachment, *, download: bool = False) -> HttpResponse:
    try:
        stored = upload_storage().open(attachment_storage_name(attachment.path_id), "rb")
    except OSError:
        raise UploadNotFoundError() from None
    content_type = attachment.content_type or "application/octet-stream"
    response = FileResponse(
        stored,
        content_type=content_type,
        as_attachment=download or not is_inline(content_type),
        filename=attachment.path_id.rsplit("/", 1)[-1],
    )
    patch_cache_control(response, private=True, immutable=True)
    return _protect(response)


@method_decorator(csrf_exempt, name="dispatch")  # GET and HEAD only: other methods are a JSON 405
class _FileView(View):
    http_method_names = ["get", "head"]

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return super().dispatch(request, *args, **kwargs)
        except JsonableError as error:
            return _protect(error_response(error))

    def http_method_not_allowed(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return _protect(error_response(MethodNotAllowedError(["GET", "HEAD"])))


class ServeFileView(_FileView):
    """GET /user_uploads/{realm_id}/{random}/{name} (and /user_uploads/download/...)."""

    download = False

    def get(self, request: HttpRequest, realm_id: int, random: str, name: str) -> HttpResponse:
        return file_response(_accessible_attachment(request, realm_id, random, name), download=self.download)


def _accessible_attachment(request: HttpRequest, realm_id: int, random: str, name: str) -> Attachment:
    """The file the request may download (API credentials or the organization's browser session)."""
    realm = realm_for_request(request)
    user = credentials_or_session_user(request)
    if realm_id != realm.id:
        raise UploadNotFoundError()
    return access_attachment_for_download(user, realm, f"{realm_id}/{random}/{name}")


class DownloadFileView(ServeFileView):
    download = True


class ThumbnailView(_FileView):
    """GET /user_uploads/thumbnail/{realm_id}/{random}/{name}/{format}: an image's thumbnail, to
    whoever may download the image."""

    def get(self, request: HttpRequest, realm_id: int, random: str, name: str, format_name: str) -> HttpResponse:
        attachment = _accessible_attachment(request, realm_id, random, name)
        if format_name not in attachment.thumbnails:
            raise UploadNotFoundError()
        try:
            stored = upload_storage().open(thumbnail_storage_name(attachment.path_id, format_name), "rb")
        except OSError:
            raise UploadNotFoundError() from None
        response = FileResponse(stored, content_type="image/webp")
        patch_cache_control(response, private=True, immutable=True)
        return _protect(response)


class TemporaryFileView(_FileView):
    """GET /user_uploads/temporary/{token}/{name}: no credentials, the token's file for a minute."""

    def get(self, request: HttpRequest, token: str, name: str) -> HttpResponse:
        try:
            path_id = signing.loads(token, salt=_TOKEN_SALT, max_age=TEMPORARY_URL_SECONDS)
        except signing.BadSignature:  # expired ones too
            raise JsonableError("Invalid token") from None
        if not isinstance(path_id, str) or path_id.rsplit("/", 1)[-1] != name:
            raise JsonableError("Invalid filename")
        realm = realm_for_request(request)
        attachment = attachment_by_path_id(realm, path_id)
        if attachment is None:
            raise UploadNotFoundError()
        return file_response(attachment)


class EmojiImageView(_FileView):
    """GET /user_avatars/{realm_id}/emoji/images/{name} (and .../still/{name}): no credentials."""

    still = False

    def get(self, request: HttpRequest, realm_id: int, name: str) -> HttpResponse:
        match = _EMOJI_FILE_RE.fullmatch(name)
        if match is None or (self.still and match.group(1) != "png"):
            raise UploadNotFoundError()
        try:
            stored = upload_storage().open(emoji_storage_name(realm_id, f"still/{name}" if self.still else name), "rb")
        except OSError:
            raise UploadNotFoundError() from None
        response = FileResponse(stored, content_type=_EMOJI_CONTENT_TYPES[match.group(1)])
        patch_cache_control(response, public=True, max_age=86400)
        return _protect(response)


class StillEmojiImageView(EmojiImageView):
    still = True


class AvatarImageView(_FileView):
    """GET /user_avatars/{realm_id}/{hash}.png and {hash}-medium.png: no credentials. A new upload
    has a new hash, so an address always shows the same picture (cached for a year)."""

    def get(self, request: HttpRequest, realm_id: int, name: str) -> HttpResponse:
        match = _AVATAR_FILE_RE.fullmatch(name)
        if match is None:
            raise UploadNotFoundError()
        storage_name = avatar_storage_name(realm_id, match.group(1), medium=bool(match.group(2)))
        try:
            stored = avatar_storage().open(storage_name, "rb")
        except OSError:
            raise UploadNotFoundError() from None
        response = FileResponse(stored, content_type="image/png")
        patch_cache_control(response, public=True, max_age=365 * 86400, immutable=True)
        return _protect(response)
