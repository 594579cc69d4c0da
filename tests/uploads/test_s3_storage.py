"""Uploads kept in an S3-compatible bucket through django-storages (UPLOADS_S3_BUCKET), against a
real S3 API: moto's standalone server, started as a process of its own. A file and its thumbnail
are stored as objects, served to whoever may see them, and removed with the file."""

import io
import socket
import subprocess
import sys
import time

import pytest
from PIL import Image

from apps.uploads.models import Attachment
from tests.api import api_for, assert_success
from tests.uploads.conftest import download, uploaded
from tests.uploads.test_attachments import send

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto.server")
pytest.importorskip("storages.backends.s3")

BUCKET = "parley-uploads"
KEYS = {"access_key": "testing", "secret_key": "testing"}  # moto takes any


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    """moto's S3 server on a free port, for this module's tests."""
    port = free_port()
    log = (tmp_path_factory.mktemp("moto") / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("moto's server did not start")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@pytest.fixture
def bucket(s3_server, settings):
    client = boto3.client(
        "s3",
        endpoint_url=s3_server,
        region_name="us-east-1",
        aws_access_key_id=KEYS["access_key"],
        aws_secret_access_key=KEYS["secret_key"],
    )
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **settings.STORAGES,
        "uploads": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": BUCKET, "endpoint_url": s3_server, "region_name": "us-east-1",
                        "default_acl": "private", "file_overwrite": False, **KEYS},
        },
    }  # fmt: skip
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)


def keys(client) -> set[str]:
    return {item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])}


def test_files_and_thumbnails_are_kept_in_the_bucket(
    bucket, member, admin, make_stream, django_capture_on_commit_callbacks
):
    picture = io.BytesIO()
    Image.new("RGB", (100, 50), (10, 20, 30)).save(picture, format="PNG")
    url = uploaded(member, name="graph.png", data=picture.getvalue(), content_type="image/png")
    path_id = url.removeprefix("/user_uploads/")
    assert keys(bucket) == {f"files/{path_id}", f"thumbnails/{path_id}/840x560.webp"}
    stored = bucket.get_object(Bucket=BUCKET, Key=f"files/{path_id}")["Body"].read()
    assert stored == picture.getvalue()

    assert download(admin, url).status_code == 403  # no message links it yet
    send(member, make_stream("design", member, admin), f"[graph]({url})")
    response = download(admin, url)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == picture.getvalue()
    thumbnail = download(admin, f"/user_uploads/thumbnail/{path_id}/840x560.webp")
    assert Image.open(io.BytesIO(b"".join(thumbnail.streaming_content))).size == (100, 50)

    attachment = Attachment.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        assert_success(api_for(member).delete(f"/attachments/{attachment.id}"))
    assert keys(bucket) == set()
