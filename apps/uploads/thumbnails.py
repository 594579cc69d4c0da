"""Uploaded images: their dimensions and thumbnails, made with Pillow as Zulip makes them with
libvips (zerver/lib/thumbnail.py), and the inline previews of messages linking them.

An upload whose declared type is a PNG, GIF, JPEG or WebP image and whose header decodes has its
width and height (as shown, after the EXIF orientation) and frame count recorded, and gets Zulip's
default thumbnails, stored beside it: `840x560.webp` (a still, of the first frame) and, for an
animated image, `840x560-anim.webp`. An image of more than IMAGE_BOMB_TOTAL_PIXELS (or an animation
whose first three frames are more than a third of it) gets neither, as in Zulip.

A message linking such an image (`/user_uploads/{path_id}`) shows Zulip's preview after the
paragraph holding the link:
`<div class="message_inline_image"><a href="/user_uploads/..." title="name"><img
data-original-content-type="image/png" data-original-dimensions="WxH"
src="/user_uploads/thumbnail/.../840x560.webp"></a></div>`.
"""

import html
import io
import re
import warnings
from dataclasses import dataclass
from urllib.parse import unquote

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from apps.uploads.models import Attachment

IMAGE_BOMB_TOTAL_PIXELS = 90_000_000
IMAGE_MAX_ANIMATED_PIXELS = IMAGE_BOMB_TOTAL_PIXELS // 3
# The types Pillow reads here (Zulip also takes AVIF, HEIC and TIFF, through libvips).
THUMBNAIL_ACCEPT_IMAGE_TYPES = frozenset({"image/gif", "image/jpeg", "image/png", "image/webp"})
# Frames of an animated thumbnail at most (Zulip truncates thumbnailed animations too), and the
# pixels decoded for one at most: made in the upload's request, a big animation of many frames would
# hold it for seconds (a 3,100-pixel square of 100 frames, 11 kB as a GIF: 6.5 s of CPU), so a big
# one's thumbnail is shorter.
MAX_ANIMATED_FRAMES = 100
MAX_ANIMATION_DECODED_PIXELS = 60_000_000


@dataclass(frozen=True)
class ThumbnailFormat:
    extension: str
    max_width: int
    max_height: int
    animated: bool

    def __str__(self) -> str:
        return f"{self.max_width}x{self.max_height}{'-anim' if self.animated else ''}.{self.extension}"

    def to_dict(self) -> dict:
        """As /register's server_thumbnail_formats lists it."""
        return {"name": str(self), "max_width": self.max_width, "max_height": self.max_height,
                "format": self.extension, "animated": self.animated}  # fmt: skip


# Zulip's THUMBNAIL_OUTPUT_FORMATS: the first animated and still ones are those messages show.
THUMBNAIL_OUTPUT_FORMATS = (ThumbnailFormat("webp", 840, 560, animated=True), ThumbnailFormat("webp", 840, 560, False))
FORMATS_BY_NAME = {str(each): each for each in THUMBNAIL_OUTPUT_FORMATS}


@dataclass
class UploadedImage:
    width: int
    height: int
    frames: int
    thumbnails: dict[str, bytes]  # format name -> WebP bytes


def thumbnail_storage_name(path_id: str, format_name: str) -> str:
    return f"thumbnails/{path_id}/{format_name}"


def uploaded_image(stream, content_type: str) -> UploadedImage | None:
    """The dimensions and thumbnails of an uploaded file (`stream`, read from its start), or None
    when it is not an image we thumbnail (its declared type, a header that does not decode, too many
    pixels, a body that does not decode)."""
    if content_type not in THUMBNAIL_ACCEPT_IMAGE_TYPES:
        return None
    stream.seek(0)
    with warnings.catch_warnings():
        # Our own limit (below Pillow's error) bounds the pixels: its warning is not needed.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            image = Image.open(stream)
            frames = getattr(image, "n_frames", 1)
            pixels = image.width * image.height
            if pixels > IMAGE_BOMB_TOTAL_PIXELS or (frames > 1 and pixels * min(3, frames) > IMAGE_MAX_ANIMATED_PIXELS):
                return None
            orientation = image.getexif().get(0x0112, 1)
            width, height = (image.height, image.width) if orientation in (5, 6, 7, 8) else image.size
            thumbnails = {}
            for thumbnail_format in THUMBNAIL_OUTPUT_FORMATS:
                if thumbnail_format.animated and frames == 1:
                    continue
                thumbnails[str(thumbnail_format)] = _thumbnail(image, thumbnail_format)
        except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError, SyntaxError, EOFError):
            return None
    return UploadedImage(width=width, height=height, frames=frames, thumbnails=thumbnails)


def _fit(frame: Image.Image, thumbnail_format: ThumbnailFormat) -> Image.Image:
    frame = ImageOps.exif_transpose(frame)
    frame = frame.convert("RGBA" if "A" in frame.getbands() or "transparency" in frame.info else "RGB")
    frame.thumbnail((thumbnail_format.max_width, thumbnail_format.max_height))  # only ever shrinks
    return frame


def _thumbnail(image: Image.Image, thumbnail_format: ThumbnailFormat) -> bytes:
    out = io.BytesIO()
    if not thumbnail_format.animated:
        image.seek(0)
        if image.format == "JPEG":
            image.draft("RGB", (thumbnail_format.max_width, thumbnail_format.max_height))
        _fit(image.copy(), thumbnail_format).save(out, format="WEBP")
        return out.getvalue()
    frames, durations = [], []
    most = min(MAX_ANIMATED_FRAMES, max(1, MAX_ANIMATION_DECODED_PIXELS // (image.width * image.height)))
    for number, frame in enumerate(ImageSequence.Iterator(image)):
        if number >= most:
            break
        frames.append(_fit(frame.copy(), thumbnail_format))
        durations.append(frame.info.get("duration", 100))
    frames[0].save(out, format="WEBP", save_all=True, append_images=frames[1:], duration=durations, loop=0)
    return out.getvalue()


# --- previews in messages -------------------------------------------------------------------------

_PARAGRAPH_RE = re.compile(r"<p>.*?</p>", re.S)
_UPLOAD_LINK_RE = re.compile(r'<a href="/user_uploads/([^"?#]+)"[^>]*>(.*?)</a>', re.S)
_TAG_RE = re.compile(r"<[^>]+>")


def preview_html(attachment: Attachment, link_text: str) -> str:
    """Zulip's inline preview of an uploaded image (thumbnailed), `link_text` the link's text."""
    path_id = attachment.path_id
    animated = attachment.image_frames is not None and attachment.image_frames > 1
    shown = next(f for f in THUMBNAIL_OUTPUT_FORMATS if f.animated == animated)
    url = html.escape(f"/user_uploads/{path_id}")
    title = html.escape(link_text)
    attributes = ['data-animated="true"'] if animated else []
    attributes += [
        f'data-original-content-type="{html.escape(attachment.content_type)}"',
        f'data-original-dimensions="{attachment.image_width}x{attachment.image_height}"',
        f'src="{html.escape(f"/user_uploads/thumbnail/{path_id}/{shown}")}"',
    ]
    return f'<div class="message_inline_image"><a href="{url}" title="{title}"><img {" ".join(attributes)}></a></div>'


def with_image_previews(rendered: str, images: dict[str, Attachment]) -> str:
    """`rendered` with a preview after each paragraph for each link in it to one of `images` (by
    path id: the message's uploaded images that have thumbnails)."""
    if not images:
        return rendered

    def paragraph(match: re.Match) -> str:
        previews = []
        for link in _UPLOAD_LINK_RE.finditer(match.group(0)):
            attachment = images.get(unquote(html.unescape(link.group(1))))
            if attachment is not None:
                previews.append(preview_html(attachment, html.unescape(_TAG_RE.sub("", link.group(2)))))
        return match.group(0) + "\n" + "\n".join(previews) if previews else match.group(0)

    return _PARAGRAPH_RE.sub(paragraph, rendered)
