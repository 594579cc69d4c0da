"""Shared helpers of the uploads tests: files posted as the official client posts them (multipart,
any field name), downloads with API credentials or a browser session, and images made with Pillow."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from tests.api import api_for, assert_success


@pytest.fixture(autouse=True)
def uploads_dir(settings, tmp_path):
    """Each test's files in a folder of its own."""
    settings.STORAGES = {
        **settings.STORAGES,
        "uploads": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path)}},
    }
    return tmp_path


def post_files(user, path: str, files: dict, **params):
    api = api_for(user)
    return api.client.post(f"/api/v1{path}", {**files, **params}, **api.headers)


def upload(user, name="notes.txt", data=b"hello, world\n", content_type="text/plain", field="file"):
    return post_files(user, "/user_uploads", {field: SimpleUploadedFile(name, data, content_type)})


def uploaded(user, **kwargs) -> str:
    """POST /user_uploads; the file's URL."""
    return assert_success(upload(user, **kwargs))["url"]


def download(user, url: str, **extra):
    """GET the URL with the user's API credentials (HTTP Basic), on their organization's host."""
    api = api_for(user)
    return api.client.get(url, **api.headers, **extra)


def browser_of(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def host_of(user) -> str:
    return f"{user.realm.string_id}.testserver" if user.realm.string_id else "testserver"


def image_bytes(fmt="PNG", size=(16, 16), frames=1, color=(255, 0, 0, 255)) -> bytes:
    mode = "RGB" if fmt == "JPEG" else "RGBA"
    images = [Image.new(mode, size, color[: len(mode)]) for _ in range(frames)]
    for index, image in enumerate(images):
        image.putpixel((0, 0), (index * 40 % 256, 0, 0, 255)[: len(mode)])
    out = io.BytesIO()
    if frames > 1:
        images[0].save(out, format=fmt, save_all=True, append_images=images[1:], duration=100, loop=0)
    else:
        images[0].save(out, format=fmt)
    return out.getvalue()
