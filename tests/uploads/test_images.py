"""Uploaded images (issue 20): dimensions recorded, Zulip's 840x560 WebP thumbnails stored and
served at /user_uploads/thumbnail/... to those who may see the image, /register's
server_thumbnail_formats, and Zulip's inline preview in messages that link the image (sent or
edited in)."""

import io

import pytest
from PIL import Image

from apps.messages.models import Message
from apps.uploads.models import Attachment
from apps.uploads.thumbnails import with_image_previews
from tests.api import api_for, assert_success
from tests.messages.conftest import post_message
from tests.uploads.conftest import download, image_bytes, uploaded


def path_of(url: str) -> str:
    return url.removeprefix("/user_uploads/")


def send(user, stream, content) -> Message:
    body = assert_success(post_message(user, type="stream", to=stream.name, topic="pics", content=content))
    return Message.objects.get(id=body["id"])


def test_an_image_gets_its_dimensions_and_thumbnail(member, uploads_dir):
    url = uploaded(member, name="photo.png", data=image_bytes(size=(1200, 900)), content_type="image/png")
    attachment = Attachment.objects.get(path_id=path_of(url))
    assert (attachment.image_width, attachment.image_height, attachment.image_frames) == (1200, 900, 1)
    assert attachment.thumbnails == ["840x560.webp"]
    response = download(member, f"/user_uploads/thumbnail/{attachment.path_id}/840x560.webp")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    thumbnail = Image.open(io.BytesIO(b"".join(response.streaming_content)))
    assert (thumbnail.format, thumbnail.size) == ("WEBP", (747, 560))  # fits 840x560, keeps the ratio


def test_an_animated_image_gets_an_animated_thumbnail_too(member):
    url = uploaded(member, name="wave.gif", data=image_bytes("GIF", size=(20, 10), frames=3), content_type="image/gif")
    attachment = Attachment.objects.get(path_id=path_of(url))
    assert attachment.image_frames == 3
    assert attachment.thumbnails == ["840x560-anim.webp", "840x560.webp"]
    response = download(member, f"/user_uploads/thumbnail/{attachment.path_id}/840x560-anim.webp")
    animated = Image.open(io.BytesIO(b"".join(response.streaming_content)))
    assert (animated.n_frames, animated.size) == (3, (20, 10))  # small images are not enlarged


def test_a_big_animations_thumbnail_is_cut_short(member, monkeypatch):
    """The pixels decoded for an animated thumbnail are bounded (the uploads QA pass: a big square of
    100 frames took 6.5 s of the upload's request); the frames beyond make no thumbnail."""
    monkeypatch.setattr("apps.uploads.thumbnails.MAX_ANIMATION_DECODED_PIXELS", 2 * 20 * 10)
    data = image_bytes("GIF", size=(20, 10), frames=5)
    url = uploaded(member, name="long.gif", data=data, content_type="image/gif")
    attachment = Attachment.objects.get(path_id=path_of(url))
    assert attachment.image_frames == 5
    response = download(member, f"/user_uploads/thumbnail/{attachment.path_id}/840x560-anim.webp")
    assert Image.open(io.BytesIO(b"".join(response.streaming_content))).n_frames == 2


def test_the_exif_orientation_is_applied(member):
    image = Image.new("RGB", (40, 20), (0, 128, 0))
    exif = image.getexif()
    exif[0x0112] = 6  # rotated 90 degrees
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif)
    url = uploaded(member, name="turned.jpg", data=out.getvalue(), content_type="image/jpeg")
    attachment = Attachment.objects.get(path_id=path_of(url))
    assert (attachment.image_width, attachment.image_height) == (20, 40)


@pytest.mark.parametrize(
    ("name", "data", "content_type"),
    [
        ("notes.txt", b"hello", "text/plain"),
        ("fake.png", b"not an image at all", "image/png"),
        ("picture.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
        ("misnamed.txt", image_bytes(), "text/plain"),  # only declared images are read
    ],
)
def test_other_files_get_no_dimensions(member, name, data, content_type):
    url = uploaded(member, name=name, data=data, content_type=content_type)
    attachment = Attachment.objects.get(path_id=path_of(url))
    assert (attachment.image_width, attachment.thumbnails) == (None, [])


def test_an_image_of_too_many_pixels_is_kept_without_thumbnail(member, monkeypatch):
    monkeypatch.setattr("apps.uploads.thumbnails.IMAGE_BOMB_TOTAL_PIXELS", 100 * 100 - 1)
    url = uploaded(member, name="big.png", data=image_bytes(size=(100, 100)), content_type="image/png")
    assert Attachment.objects.get(path_id=path_of(url)).thumbnails == []


def test_a_message_linking_an_image_shows_zulips_preview(member, admin, make_stream):
    stream = make_stream("design", member, admin)
    url = uploaded(member, name="cat & dog.png", data=image_bytes(size=(64, 48)), content_type="image/png")
    message = send(member, stream, f"look: [cat & dog.png]({url})")
    path = path_of(url)
    assert message.rendered_content == (
        f'<p>look: <a href="{url}" rel="noopener noreferrer">cat &amp; dog.png</a></p>\n'
        f'<div class="message_inline_image"><a href="{url}" title="cat &amp; dog.png">'
        f'<img data-original-content-type="image/png" data-original-dimensions="64x48" '
        f'src="/user_uploads/thumbnail/{path}/840x560.webp"></a></div>'
    )
    assert message.has_image
    shown = assert_success(api_for(admin).get(f"/messages/{message.id}"))["message"]
    assert 'class="message_inline_image"' in shown["content"]
    # Whoever sees the message gets the thumbnail; another organization's user does not.
    assert download(admin, f"/user_uploads/thumbnail/{path}/840x560.webp").status_code == 200


def test_full_addresses_of_the_organizations_files_and_views_are_made_relative(member, admin, make_stream):
    """As Zulip's rewrite_local_links_to_relative (the uploads QA pass: a file linked by its full
    address was claimed but showed no preview)."""
    stream = make_stream("design", member, admin)
    url = uploaded(member, name="cat.png", data=image_bytes(size=(64, 48)), content_type="image/png")
    full = f"http://testserver{url}"
    message = send(member, stream, f"look: {full} and [there](http://testserver/#narrow/channel/{stream.id}-design)")
    assert f'<a href="{url}" rel="noopener noreferrer">{full}</a>' in message.rendered_content
    assert f'<a href="#narrow/channel/{stream.id}-design"' in message.rendered_content
    assert 'class="message_inline_image"' in message.rendered_content
    assert message.has_image
    # Another server's address stays as written.
    other = send(member, stream, "https://elsewhere.example/user_uploads/1/ab/cat.png")
    assert 'href="https://elsewhere.example/user_uploads/1/ab/cat.png"' in other.rendered_content


def test_an_animated_preview_says_so(member, admin, make_stream):
    stream = make_stream("design", member, admin)
    url = uploaded(member, name="a.gif", data=image_bytes("GIF", frames=2), content_type="image/gif")
    message = send(member, stream, f"[a.gif]({url})")
    assert '<img data-animated="true" data-original-content-type="image/gif"' in message.rendered_content
    assert f'src="/user_uploads/thumbnail/{path_of(url)}/840x560-anim.webp"' in message.rendered_content


def test_an_edit_adds_and_removes_the_preview(member, admin, make_stream, capture_events):
    stream = make_stream("design", member, admin)
    url = uploaded(member, name="p.png", data=image_bytes(), content_type="image/png")
    message = send(member, stream, "no picture yet")
    with capture_events(admin) as received:
        assert_success(api_for(member).patch(f"/messages/{message.id}", {"content": f"[p.png]({url})"}))
    [event] = [e for e in received[admin.id] if e["type"] == "update_message"]
    assert 'class="message_inline_image"' in event["rendered_content"]
    message.refresh_from_db()
    assert 'class="message_inline_image"' in message.rendered_content
    assert_success(api_for(member).patch(f"/messages/{message.id}", {"content": "gone"}))
    message.refresh_from_db()
    assert message.rendered_content == "<p>gone</p>"


def test_no_preview_for_files_that_are_not_images_or_not_the_senders(member, admin, make_stream):
    stream = make_stream("design", member, admin)
    text_url = uploaded(member)
    others_image = uploaded(admin, name="secret.png", data=image_bytes(), content_type="image/png")
    message = send(member, stream, f"[notes]({text_url}) and [x]({others_image})")
    assert "message_inline_image" not in message.rendered_content


def test_thumbnails_are_refused_to_those_who_may_not_see_the_image(member, admin, foreign_user):
    url = uploaded(member, name="p.png", data=image_bytes(), content_type="image/png")
    thumbnail = f"/user_uploads/thumbnail/{path_of(url)}/840x560.webp"
    assert download(admin, thumbnail).status_code == 403
    assert download(foreign_user, thumbnail).status_code in (401, 404)
    assert download(member, f"/user_uploads/thumbnail/{path_of(url)}/100x100.webp").status_code == 404


def test_register_sends_the_thumbnail_formats(member):
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["server_thumbnail_formats"] == [
        {"name": "840x560-anim.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": True},
        {"name": "840x560.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": False},
    ]


def test_deleting_the_file_removes_its_thumbnails(member, uploads_dir, django_capture_on_commit_callbacks):
    url = uploaded(member, name="p.png", data=image_bytes(), content_type="image/png")
    attachment = Attachment.objects.get(path_id=path_of(url))
    stored = uploads_dir / "thumbnails" / attachment.path_id / "840x560.webp"
    assert stored.exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert_success(api_for(member).delete(f"/attachments/{attachment.id}"))
    assert not stored.exists()


def test_previews_go_after_their_paragraph_only():
    class Image:
        path_id = "1/abc/p.png"
        image_frames = 1
        image_width, image_height = 10, 20
        content_type = "image/png"

    html = '<blockquote>\n<p><a href="/user_uploads/1/abc/p.png">p</a></p>\n</blockquote>\n<p>after</p>'
    result = with_image_previews(html, {"1/abc/p.png": Image()})
    assert result.startswith('<blockquote>\n<p><a href="/user_uploads/1/abc/p.png">p</a></p>\n<div class=')
    assert result.endswith("</div>\n</blockquote>\n<p>after</p>")
