"""Uploaded avatars, as Zulip keeps them: the picture cropped to a centred square and stored as a
DEFAULT_AVATAR_SIZE PNG and a MEDIUM_AVATAR_SIZE one, in the uploads storage (settings.STORAGES
"uploads") under avatars/{realm_id}/{hash}.png and {hash}-medium.png, where the hash is random and
new with each upload (so a cached old picture is never served for a new one). apps.uploads serves
them at /user_avatars/{realm_id}/... to anyone, as Zulip does."""

import io

from django.core.files.storage import Storage, storages
from PIL import Image, ImageOps

from apps.core.images import DECODING_ERRORS, UNDECODABLE, BadImageError, open_image

DEFAULT_AVATAR_SIZE = 100
MEDIUM_AVATAR_SIZE = 500


def avatar_storage() -> Storage:
    return storages["uploads"]


def avatar_storage_name(realm_id: int, avatar_hash: str, *, medium: bool = False) -> str:
    return f"avatars/{realm_id}/{avatar_hash}{'-medium' if medium else ''}.png"


def avatar_pngs(data: bytes, content_type: str) -> tuple[bytes, bytes]:
    """The small and medium PNGs of an uploaded picture (the first frame of an animated one, turned
    as its EXIF orientation says); BadImageError when it is not an accepted image (apps.core.images)."""
    image = open_image(data, content_type)
    try:
        image.seek(0)
        image = ImageOps.exif_transpose(image).convert("RGBA")  # upright, as a phone's camera meant it
        side = min(image.width, image.height)
        left, top = (image.width - side) // 2, (image.height - side) // 2
        square = image.crop((left, top, left + side, top + side))
        return _png(square, DEFAULT_AVATAR_SIZE), _png(square, MEDIUM_AVATAR_SIZE)
    except DECODING_ERRORS:
        raise BadImageError(UNDECODABLE) from None


def _png(square: Image.Image, size: int) -> bytes:
    resized = square if square.width <= size else square.resize((size, size), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    resized.save(out, format="PNG")
    return out.getvalue()
