"""Uploaded avatars, as Zulip's: POST /users/me/avatar (exactly one picture, within
MAX_AVATAR_FILE_SIZE_MIB, that decodes), DELETE /users/me/avatar (back to Gravatar), a bot's picture
given to POST or PATCH /bots, the organization's avatar_changes_disabled, the pictures served
without credentials at their /user_avatars/ address, and the realm_user (and realm_bot) events."""

import json
import struct
import zlib
from io import BytesIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from PIL import Image

from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.models import AvatarSource, User
from apps.users.selectors import gravatar_url
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once
from tests.uploads.conftest import image_bytes, post_files


def picture(data=None, name="me.png", content_type="image/png"):
    return SimpleUploadedFile(name, image_bytes(size=(300, 200)) if data is None else data, content_type)


def set_avatar(user, **files):
    return post_files(user, "/users/me/avatar", files or {"file": picture()})


def fetched(anonymous, url: str) -> Image.Image:
    response = anonymous.client.get(url)
    assert response.status_code == 200, response
    assert response["Content-Type"] == "image/png"
    assert "immutable" in response["Cache-Control"]
    return Image.open(BytesIO(b"".join(response.streaming_content)))


def test_an_uploaded_picture_becomes_the_avatar_everyone_sees(member, admin, anonymous, uploads_dir, capture_events):
    with capture_events(admin) as received:
        url = assert_success(set_avatar(member))["avatar_url"]
    member.refresh_from_db()
    assert (member.avatar_source, member.avatar_version) == (AvatarSource.UPLOADED, 2)
    assert url == f"/user_avatars/{member.realm_id}/{member.avatar_hash}.png?version=2"
    assert fetched(anonymous, url).size == (100, 100)  # the centre of 300x200, cropped square
    medium = url.replace(".png", "-medium.png")
    assert fetched(anonymous, medium).size == (200, 200)  # never enlarged
    assert received[admin.id] == [
        {
            "type": "realm_user",
            "op": "update",
            "person": {
                "user_id": member.id,
                "avatar_source": "U",
                "avatar_url": url,
                "avatar_url_medium": medium,
                "avatar_version": 2,
            },
        }
    ]
    for client_gravatar in ("true", "false"):  # an uploaded avatar's URL is always sent
        users = assert_success(api_for(admin).get("/users", {"client_gravatar": client_gravatar}))["members"]
        assert next(u for u in users if u["user_id"] == member.id)["avatar_url"] == url
    assert assert_success(api_for(member).get("/users/me"))["avatar_url"] == url
    assert RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_AVATAR_SOURCE_CHANGED).count() == 1


def test_a_new_picture_has_a_new_address_and_the_old_one_goes(
    member, anonymous, uploads_dir, django_capture_on_commit_callbacks
):
    first = assert_success(set_avatar(member))["avatar_url"]
    with django_capture_on_commit_callbacks(execute=True):
        jpeg = picture(image_bytes(fmt="JPEG", size=(50, 50)), "a.jpg", "image/jpeg")
        second = assert_success(set_avatar(member, file=jpeg))["avatar_url"]
    assert first.split("?")[0] != second.split("?")[0]
    assert second.endswith("?version=3")
    assert anonymous.client.get(first).status_code == 404
    assert fetched(anonymous, second).size == (50, 50)
    with django_capture_on_commit_callbacks(execute=True):
        answer = assert_success(api_for(member).delete("/users/me/avatar"))
    member.refresh_from_db()
    assert (member.avatar_source, member.avatar_hash, member.avatar_version) == (AvatarSource.GRAVATAR, "", 4)
    assert answer["avatar_url"] == gravatar_url(member.delivery_email, 4, medium=True)
    assert anonymous.client.get(second).status_code == 404
    assert list(uploads_dir.rglob("*.png")) == []


@pytest.mark.parametrize(
    ("files", "msg"),
    [
        ({}, "You must upload exactly one avatar."),
        ({"a": "x", "b": "y"}, "You must upload exactly one avatar."),
        ({"f": b"not an image"}, "Could not decode image; did you upload an image file?"),
        ({"f": ("x.svg", b"<svg/>", "image/svg+xml")}, "Invalid image format"),
        ({"f": "big"}, "Uploaded file is larger than the allowed limit of 1 MiB"),
    ],
)
def test_what_is_not_one_good_picture_is_refused_and_changes_nothing(member, settings, uploads_dir, files, msg):
    settings.MAX_AVATAR_FILE_SIZE_MIB = 1
    made = {}
    for field, given in files.items():
        if given == "big":
            made[field] = picture(b"\0" * (1024 * 1024 + 1))
        elif isinstance(given, tuple):
            made[field] = SimpleUploadedFile(*given)
        elif isinstance(given, bytes):
            made[field] = picture(given)
        else:
            made[field] = picture()
    before = list(User.objects.filter(id=member.id).values())
    response = post_files(member, "/users/me/avatar", made) if made else api_for(member).post("/users/me/avatar")
    assert_error(response, 400, "BAD_REQUEST", msg)
    assert list(User.objects.filter(id=member.id).values()) == before
    assert list(uploads_dir.rglob("*.png")) == []


def test_the_organization_may_keep_avatars_to_administrators(member, admin, uploads_dir):
    assert_success(api_for(admin).patch("/realm", {"avatar_changes_disabled": "true"}))
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert (state["realm_avatar_changes_disabled"], state["max_avatar_file_size_mib"]) == (True, 5)
    for response in (set_avatar(member), api_for(member).delete("/users/me/avatar")):
        assert_error(response, 400, "BAD_REQUEST", "Avatar changes are disabled in this organization.")
    assert assert_success(set_avatar(admin))["avatar_url"].startswith(f"/user_avatars/{admin.realm_id}/")


def test_a_bot_gets_a_picture_when_made_or_changed(member, anonymous, uploads_dir, capture_events):
    made = assert_success(post_files(member, "/bots", {"avatar": picture()}, full_name="Pic Bot", short_name="pic"))
    bot = User.objects.get(id=made["user_id"])
    assert made["avatar_url"] == f"/user_avatars/{bot.realm_id}/{bot.avatar_hash}.png?version=2"
    fetched(anonymous, made["avatar_url"])
    bot_events = json.dumps(["realm_bot", "realm_user"])
    with capture_events(member, fetch_event_types=bot_events, event_types=bot_events) as received:
        changed = assert_success(post_files_patch(member, f"/bots/{bot.id}", {"avatar": picture()}))
    bot.refresh_from_db()
    assert changed["avatar_url"] == f"/user_avatars/{bot.realm_id}/{bot.avatar_hash}.png?version=3"
    # Told by its user only, as Zulip since feature level 474 (bot objects have no avatar_url).
    [event] = received[member.id]
    assert (event["type"], event["person"]["user_id"], event["person"]["avatar_url"]) == (
        "realm_user", bot.id, changed["avatar_url"]
    )  # fmt: skip
    two = {"a": picture(), "b": picture()}
    one_file = "You may only upload one file at a time"
    assert_error(post_files_patch(member, f"/bots/{bot.id}", two), 400, "BAD_REQUEST", one_file)
    response = post_files(member, "/bots", two, full_name="Two Bot", short_name="two")
    assert_error(response, 400, "BAD_REQUEST", "You may only upload one file at a time")
    response = post_files(member, "/bots", {"f": picture(b"junk")}, full_name="Bad Bot", short_name="bad")
    assert_error(response, 400, "BAD_REQUEST", "Could not decode image; did you upload an image file?")
    assert not User.objects.filter(full_name__in=["Two Bot", "Bad Bot"]).exists()


def post_files_patch(user, path: str, files: dict):
    """PATCH with a multipart body, as the official client sends files."""
    api = api_for(user)
    body = encode_multipart(BOUNDARY, files)
    return api.client.patch(f"/api/v1{path}", body, content_type=MULTIPART_CONTENT, **api.headers)


def test_unknown_or_malformed_avatar_addresses_are_404(member, anonymous):
    for path in (f"/user_avatars/{member.realm_id}/{'a' * 32}.png", f"/user_avatars/{member.realm_id}/../x.png",
                 f"/user_avatars/{member.realm_id}/ABC.png"):  # fmt: skip
        assert anonymous.client.get(path).status_code == 404


def test_a_photo_is_turned_upright_as_its_exif_says(member, anonymous):
    photo = Image.new("RGB", (200, 100), (255, 0, 0))
    photo.paste((0, 0, 255), (100, 0, 200, 100))  # left red, right blue
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: turn it a quarter to stand upright
    data = BytesIO()
    photo.save(data, format="JPEG", exif=exif)
    url = assert_success(set_avatar(member, f=picture(data.getvalue(), "p.jpg", "image/jpeg")))["avatar_url"]
    shown = fetched(anonymous, url).convert("RGB")
    top_left, top_right = shown.getpixel((5, 5)), shown.getpixel((94, 5))
    assert abs(top_left[0] - top_right[0]) < 40  # one colour across the top: turned (else red | blue)


def png_with_text_bomb() -> bytes:
    """A small PNG whose compressed text chunk unpacks to more than Pillow reads (its ValueError)."""
    plain = BytesIO()
    Image.new("RGB", (4, 4)).save(plain, format="PNG")
    data = plain.getvalue()
    body = b"Comment\0\0" + zlib.compress(b"\0" * 5 * 2**20)
    chunk = struct.pack(">I", len(body)) + b"zTXt" + body + struct.pack(">I", zlib.crc32(b"zTXt" + body))
    return data[:33] + chunk + data[33:]  # after the signature and IHDR


def test_pictures_that_only_look_like_images_are_refused(member, uploads_dir):
    truncated_header = image_bytes()[:16] + b"\0\0\0\x0c" + image_bytes()[20:]  # IHDR's length cut to 12
    for data in (png_with_text_bomb(), truncated_header):
        response = set_avatar(member, f=picture(data))
        assert_error(response, 400, "BAD_REQUEST", "Could not decode image; did you upload an image file?")
    assert list(uploads_dir.rglob("*.png")) == []


def test_a_phone_cameras_jpeg_with_more_pictures_and_a_generic_type_are_taken(member, anonymous):
    mpo = BytesIO()
    second = Image.new("RGB", (60, 40))
    Image.new("RGB", (60, 40), (250, 0, 0)).save(mpo, format="MPO", save_all=True, append_images=[second])
    url = assert_success(set_avatar(member, f=picture(mpo.getvalue(), "p.jpg", "image/jpeg")))["avatar_url"]
    assert fetched(anonymous, url).convert("RGB").getpixel((20, 20))[0] > 200  # the first picture, red
    generic = picture(image_bytes(), "me.png", "application/octet-stream")  # the name says what it is
    assert assert_success(set_avatar(member, f=generic))["avatar_url"].endswith("?version=3")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_changes_at_once_leave_only_the_last_pictures(member, uploads_dir):
    calls = [lambda: set_avatar(member) for _ in range(4)] + [lambda: api_for(member).delete("/users/me/avatar")]
    for response in at_once(*calls):
        assert response.status_code == 200, response.content
    member.refresh_from_db()
    kept = sorted(path.name for path in uploads_dir.rglob("*.png"))
    expected = [] if not member.avatar_hash else [f"{member.avatar_hash}-medium.png", f"{member.avatar_hash}.png"]
    assert kept == expected
