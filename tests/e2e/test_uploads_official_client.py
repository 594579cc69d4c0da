"""Uploads and custom emoji with the official `zulip` Python client from PyPI, unchanged, against a
real server: upload_file, a message linking the file, downloading it (HTTP Basic, and the temporary
URL the mobile app asks for), get_attachments; upload_custom_emoji and a reaction with it."""

import io

import pytest
import requests
import zulip
from PIL import Image

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(transactional_db, live_server_factory, tmp_path):
    return live_server_factory(UPLOADS_DIR=str(tmp_path / "uploads"), MAX_FILE_UPLOAD_SIZE_MIB="2")


def test_upload_link_and_download_with_the_official_client(server, people):
    _, owner, member = people
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    other = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    assert client.register(fetch_event_types=["realm"])["max_file_upload_size_mib"] == 2

    upload = io.BytesIO(b"quarterly numbers\n")
    upload.name = "report 2026.txt"
    result = client.upload_file(upload)
    assert result["result"] == "success", result
    url = result["uri"]
    assert url == result["url"]
    assert url.startswith("/user_uploads/")
    assert url.endswith("/report-2026.txt")

    # Nobody else may download it before a message links it.
    member_auth = (member.delivery_email, member.api_key)
    assert requests.get(server.url + url, auth=member_auth, timeout=10).status_code == 403

    sent = client.send_message({"type": "private", "to": [member.id], "content": f"[report]({url})"})
    assert sent["result"] == "success", sent
    response = requests.get(server.url + url, auth=member_auth, timeout=10)
    assert response.status_code == 200
    assert response.content == b"quarterly numbers\n"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response.headers["Content-Security-Policy"]

    temporary = other.call_endpoint(url=url.removeprefix("/"), method="GET")
    assert temporary["result"] == "success", temporary
    assert requests.get(server.url + temporary["url"], timeout=10).content == b"quarterly numbers\n"

    [attachment] = client.get_attachments()["attachments"]
    assert attachment["name"] == "report 2026.txt"
    assert [m["id"] for m in attachment["messages"]] == [sent["id"]]
    narrowed = other.get_messages(
        {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": [{"operator": "has", "operand": "attachment"}]}
    )
    assert [m["id"] for m in narrowed["messages"]] == [sent["id"]]

    too_big = io.BytesIO(b"x" * (2 * 1024 * 1024 + 1))
    too_big.name = "big.bin"
    refused = client.upload_file(too_big)
    assert refused["result"] == "error"
    assert refused["msg"] == "File is larger than this server's configured maximum upload size (2 MiB)."


def test_custom_emoji_with_the_official_client(server, people):
    _, owner, member = people
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    image = io.BytesIO()
    Image.new("RGBA", (32, 32), (0, 128, 255, 255)).save(image, format="PNG")
    image.seek(0)
    image.name = "blue.png"
    assert client.upload_custom_emoji("blue_square_x", image)["result"] == "success"
    [emoji] = client.get_realm_emoji()["emoji"].values()
    assert emoji["name"] == "blue_square_x"
    assert requests.get(server.url + emoji["source_url"], timeout=10).headers["Content-Type"] == "image/png"

    sent = client.send_message({"type": "private", "to": [member.id], "content": "react to me"})
    reacted = client.add_reaction({"message_id": sent["id"], "emoji_name": "blue_square_x"})
    assert reacted["result"] == "success", reacted
    [reaction] = client.call_endpoint(url=f"messages/{sent['id']}", method="GET")["message"]["reactions"]
    assert (reaction["emoji_code"], reaction["reaction_type"]) == (emoji["id"], "realm_emoji")
    assert client.delete_custom_emoji("blue_square_x")["result"] == "success"


def test_an_uploaded_image_shows_its_preview_with_the_official_client(server, people):
    _, owner, member = people
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    reader = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    formats = reader.register(fetch_event_types=["realm"])["server_thumbnail_formats"]
    assert [f["name"] for f in formats] == ["840x560-anim.webp", "840x560.webp"]

    image = io.BytesIO()
    Image.new("RGB", (1000, 500), (0, 0, 255)).save(image, format="PNG")
    image.seek(0)
    image.name = "chart.png"
    url = client.upload_file(image)["url"]
    sent = client.send_message({"type": "private", "to": [member.id], "content": f"[chart.png]({url})"})
    assert sent["result"] == "success", sent

    [message] = reader.get_messages({"anchor": sent["id"], "num_before": 0, "num_after": 0})["messages"]
    thumbnail = f"/user_uploads/thumbnail/{url.removeprefix('/user_uploads/')}/840x560.webp"
    assert (
        f'<div class="message_inline_image"><a href="{url}" title="chart.png"><img '
        f'data-original-content-type="image/png" data-original-dimensions="1000x500" src="{thumbnail}"></a></div>'
    ) in message["content"]
    response = requests.get(server.url + thumbnail, auth=(member.delivery_email, member.api_key), timeout=10)
    assert response.status_code == 200
    assert Image.open(io.BytesIO(response.content)).size == (840, 420)


def test_an_avatar_with_the_official_client(server, people):
    _, owner, member = people
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    reader = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    image = io.BytesIO()
    Image.new("RGB", (640, 480), (200, 30, 30)).save(image, format="JPEG")
    image.seek(0)
    image.name = "me.jpg"
    result = client.call_endpoint(url="users/me/avatar", method="POST", files=[image])
    assert result["result"] == "success", result
    url = result["avatar_url"]
    [shown] = [u for u in reader.get_members({"client_gravatar": True})["members"] if u["user_id"] == owner.id]
    assert shown["avatar_url"] == url
    picture = requests.get(server.url + url, timeout=10)  # no credentials
    assert picture.headers["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(picture.content)).size == (100, 100)
    back = client.call_endpoint(url="users/me/avatar", method="DELETE")
    assert back["avatar_url"].startswith("https://secure.gravatar.com/avatar/"), back
    assert requests.get(server.url + url, timeout=10).status_code == 404
