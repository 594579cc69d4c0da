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
        image.draft("RGB", (MEDIUM_AVATAR_SIZE, MEDIUM_AVATAR_SIZE))  # a big JPEG decoded at a fraction
        image = ImageOps.exif_transpose(image)  # upright, as a phone's camera meant it
        side = min(image.width, image.height)
        left, top = (image.width - side) // 2, (image.height - side) // 2
        square = image.crop((left, top, left + side, top + side))
        if square.mode not in ("RGB", "RGBA", "L", "LA"):  # palettes, CMYK, 16 bits: resized well in RGBA
            square = square.convert("RGBA")
        square.thumbnail((MEDIUM_AVATAR_SIZE, MEDIUM_AVATAR_SIZE))
        medium = square.convert("RGBA")
        small = medium
        if medium.width > DEFAULT_AVATAR_SIZE:  # never enlarged
            small = medium.resize((DEFAULT_AVATAR_SIZE, DEFAULT_AVATAR_SIZE), Image.Resampling.LANCZOS)
        return _png(small), _png(medium)
    except DECODING_ERRORS:
        raise BadImageError(UNDECODABLE) from None


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
