"""Uploads and custom emoji under /api/v1: POST /user_uploads, the temporary URL of a file
(GET /user_uploads/{realm_id}/{random}/{name}), /attachments, and /realm/emoji."""

from rest_framework.request import Request

from apps.core.errors import JsonableError
from apps.core.params import uploaded_files
from apps.core.permissions import IsHuman, IsNotGuest
from apps.core.responses import json_success
from apps.core.views import ApiView, ApiViewSet
from apps.uploads.actions import (
    check_add_realm_emoji,
    check_remove_realm_emoji,
    check_upload_file,
    do_delete_attachment,
)
from apps.uploads.errors import UploadNotFoundError
from apps.uploads.pages import temporary_url
from apps.uploads.selectors import (
    access_attachment_by_id,
    access_attachment_for_download,
    attachments_for_user,
    realm_emoji_dicts,
    upload_space_used,
)


class UploadFileView(ApiView):
    """POST /user_uploads: one file, any field name; answers its URL (`uri` is the older name)."""

    def post(self, request: Request):
        files = uploaded_files(request)
        if not files:
            raise JsonableError("You must specify a file to upload")
        if len(files) > 1:
            raise JsonableError("You may only upload one file at a time")
        attachment = check_upload_file(request.user, files[0])
        url = f"/user_uploads/{attachment.path_id}"
        return json_success(request, {"uri": url, "url": url, "filename": attachment.file_name})


class FileTemporaryUrlView(ApiView):
    """GET /user_uploads/{realm_id}/{random}/{name}: a URL of the file that works without credentials for a
    minute (for clients that download with another HTTP stack, like the mobile app)."""

    def get(self, request: Request, realm_id: int, random: str, name: str):
        if realm_id != request.user.realm_id:
            raise UploadNotFoundError()
        path_id = f"{realm_id}/{random}/{name}"
        attachment = access_attachment_for_download(request.user, request.user.realm, path_id)
        return json_success(request, {"url": temporary_url(attachment.path_id)})


class AttachmentViewSet(ApiViewSet):
    """GET /attachments (the user's files and the organization's upload space used) and
    DELETE /attachments/{attachment_id}."""

    lookup_url_kwarg = "attachment_id"
    lookup_value_converter = "id"

    def list(self, request: Request):
        return json_success(
            request,
            {
                "attachments": attachments_for_user(request.user),
                "upload_space_used": upload_space_used(request.user.realm_id),
            },
        )

    def destroy(self, request: Request, attachment_id: int):
        attachment = access_attachment_by_id(request.user, attachment_id)
        do_delete_attachment(attachment, acting_user=request.user)
        return json_success(request)


class RealmEmojiListView(ApiView):
    """GET /realm/emoji: the organization's custom emoji, deactivated ones too."""

    def get(self, request: Request):
        return json_success(request, {"emoji": realm_emoji_dicts(request.user.realm_id)})


class RealmEmojiView(ApiView):
    """POST /realm/emoji/{emoji_name} (one image, any field name; not by guests nor bots, as Zulip's
    require_member_or_admin) and DELETE (deactivates)."""

    method_permission_classes = {"post": [IsNotGuest, IsHuman]}

    def post(self, request: Request, emoji_name: str):
        check_add_realm_emoji(emoji_name, uploaded_files(request), acting_user=request.user)
        return json_success(request)

    def delete(self, request: Request, emoji_name: str):
        check_remove_realm_emoji(emoji_name, acting_user=request.user)
        return json_success(request)
