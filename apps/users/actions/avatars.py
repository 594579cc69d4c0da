"""Changing a user's avatar: POST /users/me/avatar (a picture, or a bot's from its owner) and
DELETE /users/me/avatar (back to Gravatar), as Zulip's set_avatar_backend and delete_avatar_backend.
The pictures are written before the row that names them; the old ones are removed once the change
commits (apps.users.avatars)."""

import secrets

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F

from apps.core.errors import JsonableError
from apps.core.params import content_type_of
from apps.events.publish import forget_credentials_on_commit
from apps.realms.models import AuditLogEventType
from apps.users.actions.notify import audit_user_change, send_avatar_update
from apps.users.avatars import avatar_pngs, avatar_storage, avatar_storage_name
from apps.users.models import AvatarSource, User

MIB = 1024 * 1024


def check_may_change_avatar(acting_user: User) -> None:
    if acting_user.realm.avatar_changes_disabled and not acting_user.is_admin:
        raise JsonableError("Avatar changes are disabled in this organization.")


def check_upload_avatar(user: User, uploaded: UploadedFile, *, acting_user: User) -> None:
    """Make the uploaded picture `user`'s avatar (Zulip's checks and texts; that one picture came is
    the caller's to check, whose wording differs between the endpoints)."""
    if (uploaded.size or 0) > settings.MAX_AVATAR_FILE_SIZE_MIB * MIB:
        raise JsonableError(
            f"Uploaded file is larger than the allowed limit of {settings.MAX_AVATAR_FILE_SIZE_MIB} MiB"
        )
    small, medium = avatar_pngs(uploaded.read(), content_type_of(uploaded.content_type, uploaded.name or ""))
    avatar_hash = secrets.token_hex(16)
    storage = avatar_storage()
    written = [
        storage.save(avatar_storage_name(user.realm_id, avatar_hash), ContentFile(small)),
        storage.save(avatar_storage_name(user.realm_id, avatar_hash, medium=True), ContentFile(medium)),
    ]
    try:
        do_change_avatar(user, AvatarSource.UPLOADED, avatar_hash, acting_user=acting_user)
    except BaseException:
        for name in written:
            storage.delete(name)
        raise


@transaction.atomic(savepoint=False)
def do_change_avatar(user: User, source: str, avatar_hash: str = "", *, acting_user: User | None) -> None:
    """Set the avatar's source (AvatarSource; an uploaded one's stored `avatar_hash`) and bump its
    version; the previous upload's pictures are deleted once this commits.

    Audit: USER_AVATAR_SOURCE_CHANGED. Emits: realm_user/update with the avatar fields (for a bot
    too, as Zulip since feature level 474: no realm_bot/update)."""
    row = User.objects.filter(id=user.id)
    # The write first: it locks the row (the database, on SQLite), so that what is read next is the
    # avatar of the last change that committed, not the one this request authenticated with.
    row.update(avatar_version=F("avatar_version") + 1)
    old_source, old_hash = row.values_list("avatar_source", "avatar_hash").get()
    row.update(avatar_source=source, avatar_hash=avatar_hash)
    user.refresh_from_db(fields=["avatar_source", "avatar_hash", "avatar_version"])
    forget_credentials_on_commit(user_ids=[user.id])
    audit_user_change(
        user, AuditLogEventType.USER_AVATAR_SOURCE_CHANGED, "avatar_source", old_source, source, acting_user=acting_user
    )
    send_avatar_update(user)
    if old_hash:
        transaction.on_commit(lambda: _delete_pictures(user.realm_id, old_hash))


def _delete_pictures(realm_id: int, avatar_hash: str) -> None:
    storage = avatar_storage()
    for medium in (False, True):
        storage.delete(avatar_storage_name(realm_id, avatar_hash, medium=medium))
