"""Images people upload (custom emoji, avatars), opened with Pillow as Zulip checks them with
libvips: a PNG, GIF, JPEG or WebP image, as declared and as decoded, that decodes and is not too
big (a small file can claim a huge image: the pixels are counted before anything is decoded)."""

import io
import warnings

from PIL import Image, UnidentifiedImageError

from apps.core.errors import JsonableError

MAX_PIXELS = 4096 * 4096
# Pillow's format -> (content type, extension)
ACCEPTED_FORMATS = {
    "PNG": ("image/png", ".png"),
    "GIF": ("image/gif", ".gif"),
    "JPEG": ("image/jpeg", ".jpeg"),
    "MPO": ("image/jpeg", ".jpeg"),  # a JPEG carrying more pictures (phone cameras'): its first is shown
    "WEBP": ("image/webp", ".webp"),
}
ACCEPTED_CONTENT_TYPES = frozenset(content_type for content_type, _ in ACCEPTED_FORMATS.values())
UNDECODABLE = "Could not decode image; did you upload an image file?"
# What a header that decodes over a body that does not raises while the image is read.
DECODING_ERRORS = (OSError, ValueError, SyntaxError, EOFError)


class BadImageError(JsonableError):
    pass


def open_image(data: bytes, content_type: str) -> Image.Image:
    """The uploaded image, opened (its pixels not yet read: a caller that reads them catches
    DECODING_ERRORS); BadImageError when it is not one of the accepted formats, does not decode or
    is too big."""
    if content_type.split(";")[0].strip().lower() not in ACCEPTED_CONTENT_TYPES:
        raise BadImageError("Invalid image format")
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(data))
        except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning, *DECODING_ERRORS):
            raise BadImageError(UNDECODABLE) from None  # ValueError: a PNG text chunk too big to unpack, say
    if image.width * image.height > MAX_PIXELS:
        raise BadImageError("Image size exceeds limit.")
    if image.format not in ACCEPTED_FORMATS:
        raise BadImageError("Invalid image format")
    return image
