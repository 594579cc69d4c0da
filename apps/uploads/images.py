"""Custom emoji images (apps.core.images checks them): shrunk to fit DEFAULT_EMOJI_SIZE square
when still, kept as sent when animated (with a still PNG of its first frame for clients that do
not animate)."""

import io
from dataclasses import dataclass

from apps.core.images import ACCEPTED_FORMATS, DECODING_ERRORS, UNDECODABLE, BadImageError, open_image

DEFAULT_EMOJI_SIZE = 64
MAX_EMOJI_FILE_SIZE_MIB = 5


@dataclass
class EmojiImage:
    data: bytes
    extension: str
    is_animated: bool
    still_png: bytes | None  # the first frame, for animated images


def emoji_image(data: bytes, content_type: str) -> EmojiImage:
    """The image to store for an uploaded emoji; BadImageError when it is not an accepted image."""
    image = open_image(data, content_type)
    _, extension = ACCEPTED_FORMATS[image.format]
    try:
        # An MPO's other pictures are not frames of an animation: it is a still JPEG.
        is_animated = image.format != "MPO" and bool(getattr(image, "is_animated", False))
        if is_animated:
            image.seek(0)
            still = io.BytesIO()
            image.convert("RGBA").save(still, format="PNG")
            return EmojiImage(data=data, extension=extension, is_animated=True, still_png=still.getvalue())
        image.load()
        if image.width <= DEFAULT_EMOJI_SIZE and image.height <= DEFAULT_EMOJI_SIZE:
            return EmojiImage(data=data, extension=extension, is_animated=False, still_png=None)
        image_format = "JPEG" if image.format == "MPO" else image.format
        image.thumbnail((DEFAULT_EMOJI_SIZE, DEFAULT_EMOJI_SIZE))
        if image_format == "JPEG" and image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        resized = io.BytesIO()
        image.save(resized, format=image_format)
        return EmojiImage(data=resized.getvalue(), extension=extension, is_animated=False, still_png=None)
    except DECODING_ERRORS:
        raise BadImageError(UNDECODABLE) from None
