"""Custom emoji images, checked and sized with Pillow as Zulip does with libvips: a PNG, GIF, JPEG
or WebP image that decodes, shrunk to fit DEFAULT_EMOJI_SIZE square when it is still, kept as sent
when it is animated (with a still PNG of its first frame for clients that do not animate)."""

import io
import warnings
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

from apps.uploads.errors import BadImageError

DEFAULT_EMOJI_SIZE = 64
MAX_EMOJI_FILE_SIZE_MIB = 5
# An image of more pixels is refused before it is decoded (a small file can claim a huge image).
MAX_EMOJI_PIXELS = 4096 * 4096
# Pillow's format -> (content type, extension)
EMOJI_FORMATS = {
    "PNG": ("image/png", ".png"),
    "GIF": ("image/gif", ".gif"),
    "JPEG": ("image/jpeg", ".jpeg"),
    "WEBP": ("image/webp", ".webp"),
}
EMOJI_CONTENT_TYPES = frozenset(content_type for content_type, _ in EMOJI_FORMATS.values())


@dataclass
class EmojiImage:
    data: bytes
    extension: str
    is_animated: bool
    still_png: bytes | None  # the first frame, for animated images


def _open(data: bytes) -> Image.Image:
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data))
        except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning, OSError):
            raise BadImageError("Could not decode image; did you upload an image file?") from None
    if image.width * image.height > MAX_EMOJI_PIXELS:
        raise BadImageError("Image size exceeds limit.")
    return image


def emoji_image(data: bytes, content_type: str) -> EmojiImage:
    """The image to store for an uploaded emoji; BadImageError when it is not one of the accepted
    formats (as declared and as decoded) or does not decode."""
    if content_type.split(";")[0].strip().lower() not in EMOJI_CONTENT_TYPES:
        raise BadImageError("Invalid image format")
    image = _open(data)
    if image.format not in EMOJI_FORMATS:
        raise BadImageError("Invalid image format")
    _, extension = EMOJI_FORMATS[image.format]
    try:
        is_animated = bool(getattr(image, "is_animated", False))
        if is_animated:
            image.seek(0)
            still = io.BytesIO()
            image.convert("RGBA").save(still, format="PNG")
            return EmojiImage(data=data, extension=extension, is_animated=True, still_png=still.getvalue())
        image.load()
        if image.width <= DEFAULT_EMOJI_SIZE and image.height <= DEFAULT_EMOJI_SIZE:
            return EmojiImage(data=data, extension=extension, is_animated=False, still_png=None)
        image_format = image.format
        image.thumbnail((DEFAULT_EMOJI_SIZE, DEFAULT_EMOJI_SIZE))
        if image_format == "JPEG" and image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        resized = io.BytesIO()
        image.save(resized, format=image_format)
        return EmojiImage(data=resized.getvalue(), extension=extension, is_animated=False, still_png=None)
    except (OSError, ValueError, SyntaxError, EOFError):
        # A header that decodes over a body that does not.
        raise BadImageError("Could not decode image; did you upload an image file?") from None
