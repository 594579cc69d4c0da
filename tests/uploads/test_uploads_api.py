"""POST /user_uploads and serving /user_uploads/...: Zulip's answer and errors, the server's size
limit and the organization's quota, sanitized names, storage, who may download (the uploader,
whoever may see a message linking the file; never another organization), the headers that keep an
uploaded page from running, and the temporary URLs the mobile app downloads with."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client

from apps.uploads.models import Attachment
from apps.uploads.storage import sanitize_name
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once
from tests.messages.conftest import post_message
from tests.uploads.conftest import browser_of, download, host_of, post_files, upload, uploaded

URL_RE = re.compile(r"/user_uploads/(\d+)/([A-Za-z0-9_-]{24})/(.+)")


def send_linking(user, url, to, topic="files"):
    params = {"type": "stream", "to": to.name, "topic": topic} if hasattr(to, "name") else {"type": "private"}
    if not hasattr(to, "name"):
        params["to"] = [u.id for u in to]
    return assert_success(post_message(user, content=f"see [the file]({url})", **params))["id"]


def test_upload_answers_zulips_fields_and_stores_the_file(member, realm, uploads_dir):
    body = assert_success(upload(member, name="notes.txt", data=b"hello"))
    assert body["uri"] == body["url"]
    assert body["filename"] == "notes.txt"
    match = URL_RE.fullmatch(body["url"])
    assert match is not None
    assert int(match.group(1)) == realm.id
    assert match.group(3) == "notes.txt"
    attachment = Attachment.objects.get()
    assert (attachment.owner, attachment.realm, attachment.size) == (member, realm, 5)
    assert attachment.path_id == body["url"].removeprefix("/user_uploads/")
    assert (uploads_dir / "files" / attachment.path_id).read_bytes() == b"hello"


def test_upload_takes_any_field_name(member):
    body = assert_success(upload(member, field="whatever"))
    assert body["filename"] == "notes.txt"
    assert "ignored_parameters_unsupported" not in body  # the file is the payload, not a parameter


def test_an_uploads_other_parameters_are_reported_ignored(member):
    files = {"file": SimpleUploadedFile("notes.txt", b"hi", "text/plain")}
    body = assert_success(post_files(member, "/user_uploads", files, colour="blue"))
    assert body["ignored_parameters_unsupported"] == ["colour"]


@pytest.mark.parametrize(
    ("name", "sanitized"),
    [
        ("my file (1).txt", "my-file-1.txt"),
        ("../../etc/passwd", "....etcpasswd"),
        ("Ünïcödé naïve.pdf", "Ünïcödé-naïve.pdf"),
        ("<script>.html", "script.html"),
        ("..", "uploaded-file"),
        ("a" * 300 + ".png", "a" * 251 + ".png"),
    ],
)
def test_file_names_are_sanitized_as_zulip_does(name, sanitized):
    assert sanitize_name(name) == sanitized


def test_the_url_takes_the_sanitized_name_and_the_answer_the_original(member):
    body = assert_success(upload(member, name="my report (final).txt"))
    assert body["url"].endswith("/my-report-final.txt")
    assert body["filename"] == "my report (final).txt"


def test_no_file_is_refused(member):
    assert_error(post_files(member, "/user_uploads", {}), 400, "BAD_REQUEST", "You must specify a file to upload")
    assert_error(api_for(member).post("/user_uploads", {"x": "1"}), 400, "BAD_REQUEST")
    assert not Attachment.objects.exists()


def test_a_file_name_too_long_for_a_multipart_body_is_refused_clearly(member, uploads_dir):
    """Django refuses a part whose headers pass 1 kB (the hostile QA pass: the answer named the
    framework's parser, not the cause)."""
    name = "n" * 1000 + ".txt"  # as a client sends it (SimpleUploadedFile would cut it to 255)
    body = f'--B\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\na\r\n--B--\r\n'
    api = api_for(member)
    multipart = "multipart/form-data; boundary=B"
    response = api.client.post("/api/v1/user_uploads", body, content_type=multipart, **api.headers)
    msg = "Malformed request body: a part's headers are over 1 kB (is a file's name that long?)"
    assert_error(response, 400, "BAD_REQUEST", msg)
    assert not Attachment.objects.exists()


def test_two_files_are_refused(member, uploads_dir):
    files = {"a": SimpleUploadedFile("a.txt", b"a"), "b": SimpleUploadedFile("b.txt", b"b")}
    msg = "You may only upload one file at a time"
    assert_error(post_files(member, "/user_uploads", files), 400, "BAD_REQUEST", msg)
    assert not Attachment.objects.exists()
    assert not list(uploads_dir.rglob("*.txt"))


def test_a_file_over_the_limit_is_refused(member, settings, uploads_dir):
    settings.MAX_FILE_UPLOAD_SIZE_MIB = 1
    response = upload(member, data=b"x" * (1024 * 1024 + 1))
    msg = "File is larger than this server's configured maximum upload size (1 MiB)."
    assert_error(response, 400, "BAD_REQUEST", msg)
    assert not Attachment.objects.exists()
    assert not list(uploads_dir.rglob("*.txt"))
    assert_success(upload(member, data=b"x" * (1024 * 1024)))


def test_a_limit_of_zero_turns_uploads_off(member, settings):
    settings.MAX_FILE_UPLOAD_SIZE_MIB = 0
    msg = "File is larger than this server's configured maximum upload size (0 MiB)."
    assert_error(upload(member, data=b"x"), 400, "BAD_REQUEST", msg)
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["max_file_upload_size_mib"] == 0


def test_register_sends_the_limit(member, settings):
    settings.MAX_FILE_UPLOAD_SIZE_MIB = 25
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["max_file_upload_size_mib"] == 25
    assert state["realm_upload_quota_mib"] is None  # no quota
    settings.UPLOAD_QUOTA_MIB_PER_REALM = 1024
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_upload_quota_mib"] == 1024


def test_the_organization_quota_counts_every_members_files(member, admin, settings, other_realm):
    settings.UPLOAD_QUOTA_MIB_PER_REALM = 1
    assert_success(upload(member, data=b"x" * (700 * 1024)))
    response = upload(admin, data=b"x" * (400 * 1024))
    assert_error(response, 400, "REALM_UPLOAD_QUOTA", "Upload would exceed your organization's upload quota.")
    assert Attachment.objects.count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_uploads_at_the_same_time_cannot_pass_the_quota_together(member, settings, uploads_dir):
    """The quota is checked again with the organization's row locked (the uploads QA pass: of 8
    uploads at once, 2 passed a quota only one had room for)."""
    settings.UPLOAD_QUOTA_MIB_PER_REALM = 1
    assert_success(upload(member, data=b"x" * (600 * 1024)))
    statuses = at_once(*[lambda: upload(member, data=b"x" * (300 * 1024)).status_code for _ in range(6)])
    assert sorted(statuses) == [200] + [400] * 5
    assert Attachment.objects.count() == 2


def test_unauthenticated_uploads_are_refused(anonymous, realm):
    response = anonymous.client.post("/api/v1/user_uploads", {"f": SimpleUploadedFile("a.txt", b"a")})
    assert_error(response, 401, "UNAUTHORIZED")


# --- downloading ------------------------------------------------------------------------------------


def test_the_uploader_downloads_with_api_credentials(member):
    url = uploaded(member, name="notes.txt", data=b"hello")
    response = download(member, url)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"hello"
    assert response["Content-Type"] == "text/plain"
    assert response["Content-Disposition"] == 'inline; filename="notes.txt"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response["Content-Security-Policy"]
    assert "private" in response["Cache-Control"]


def test_the_uploader_downloads_with_a_browser_session(member):
    url = uploaded(member, data=b"hello")
    response = browser_of(member).get(url, HTTP_HOST=host_of(member))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"hello"


def test_html_and_svg_are_downloads_never_pages(member):
    for name, content_type in [("page.html", "text/html"), ("x.svg", "image/svg+xml")]:
        url = uploaded(member, name=name, data=b"<script>alert(1)</script>", content_type=content_type)
        response = download(member, url)
        assert response["Content-Disposition"].startswith("attachment;"), name
        assert response["X-Content-Type-Options"] == "nosniff"
        assert "sandbox" in response["Content-Security-Policy"]


def test_images_are_inline_and_download_paths_are_attachments(member):
    url = uploaded(member, name="cat.png", data=b"\x89PNG....", content_type="image/png")
    response = download(member, url)
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == 'inline; filename="cat.png"'
    forced = download(member, url.replace("/user_uploads/", "/user_uploads/download/"))
    assert forced["Content-Disposition"] == 'attachment; filename="cat.png"'


def test_a_content_type_is_guessed_when_the_client_sends_none(member):
    url = uploaded(member, name="report.pdf", data=b"%PDF-1.4", content_type="")
    assert download(member, url)["Content-Type"] == "application/pdf"


def test_non_ascii_names_are_sent_encoded(member):
    url = uploaded(member, name="résumé.txt")
    assert download(member, url)["Content-Disposition"] == "inline; filename*=utf-8''r%C3%A9sum%C3%A9.txt"


def test_nobody_else_downloads_a_file_no_message_links(member, admin):
    url = uploaded(member)
    assert_error(download(admin, url), 403, "BAD_REQUEST", "You are not authorized to view this file.")


def test_without_credentials_a_file_is_refused(member, anonymous):
    url = uploaded(member)
    assert_error(anonymous.client.get(url), 401, "UNAUTHORIZED")
    bad = Client().get(url, HTTP_AUTHORIZATION="Basic bm9ib2R5Om5vdGhpbmc=")
    assert bad.status_code == 401


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_files_are_only_read_other_methods_are_a_json_405(member, realm, method):
    """Not Django's CSRF page in HTML (the uploads QA pass), with or without a session or a key."""
    url = uploaded(member)
    paths = [url, "/user_uploads/temporary/x/y", f"/user_avatars/{realm.id}/emoji/images/x.png"]
    for client in (Client(enforce_csrf_checks=True), browser_of(member)):
        for path in paths:
            response = getattr(client, method)(path)
            assert_error(response, 405, "BAD_REQUEST", "Method Not Allowed")
            assert response["Allow"] == "GET, HEAD"
    assert Attachment.objects.count() == 1


def test_unknown_files_are_not_found(member, realm):
    assert_error(download(member, f"/user_uploads/{realm.id}/abcdefghijklmnopqrstuvwx/none.txt"), 404, "BAD_REQUEST")


def test_channel_subscribers_download_what_a_message_links(member, admin, guest, make_stream):
    channel = make_stream("design", member, admin)
    url = uploaded(member)
    send_linking(member, url, channel)
    assert download(admin, url).status_code == 200
    # A guest who is not subscribed sees neither the message nor the file.
    assert download(guest, url).status_code == 403


def test_public_history_lets_later_subscribers_download(member, admin, make_stream):
    channel = make_stream("design", member)
    url = uploaded(member)
    send_linking(member, url, channel)
    assert download(admin, url).status_code == 200  # a public channel's history: anyone not a guest


def test_private_channel_files_stay_private(member, admin, moderator, make_stream):
    channel = make_stream("secret", member, admin, private=True, history_public=False)
    url = uploaded(member)
    send_linking(member, url, channel)
    assert download(admin, url).status_code == 200
    assert download(moderator, url).status_code == 403


def test_direct_message_recipients_download(member, admin, moderator):
    url = uploaded(member)
    send_linking(member, url, [admin])
    assert download(admin, url).status_code == 200
    assert download(moderator, url).status_code == 403


def test_another_organization_never_gets_a_file(member, foreign_user, make_stream, other_realm):
    url = uploaded(member)
    # On their own host the path is not theirs.
    assert_error(download(foreign_user, url), 404, "BAD_REQUEST", "File not found.")
    # On this organization's host, their credentials are not this organization's.
    response = Client().get(url, HTTP_AUTHORIZATION=api_for(foreign_user).headers["HTTP_AUTHORIZATION"])
    assert response.status_code == 401
    # Nor does their own file appear under this organization's id.
    foreign_url = uploaded(foreign_user)
    assert download(member, foreign_url).status_code == 404


def test_a_link_to_someone_elses_file_claims_nothing(member, admin, moderator):
    url = uploaded(member)  # admin may not see it
    send_linking(admin, url, [moderator])
    assert download(moderator, url).status_code == 403
    assert not Attachment.objects.get().messages.exists()


# --- temporary URLs (the mobile app) -----------------------------------------------------------------


def test_a_temporary_url_works_without_credentials(member, anonymous):
    url = uploaded(member, data=b"hello")
    temporary = assert_success(download(member, "/api/v1" + url))["url"]
    assert temporary.startswith("/user_uploads/temporary/")
    assert temporary.endswith("/notes.txt")
    response = anonymous.client.get(temporary)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"hello"


def test_a_temporary_url_expires(member, anonymous, monkeypatch):
    url = uploaded(member)
    temporary = assert_success(download(member, "/api/v1" + url))["url"]
    monkeypatch.setattr("apps.uploads.pages.TEMPORARY_URL_SECONDS", -1)
    assert_error(anonymous.client.get(temporary), 400, "BAD_REQUEST", "Invalid token")


def test_a_temporary_url_names_its_file(member, anonymous):
    url = uploaded(member)
    temporary = assert_success(download(member, "/api/v1" + url))["url"]
    renamed = temporary.rsplit("/", 1)[0] + "/other.txt"
    assert_error(anonymous.client.get(renamed), 400, "BAD_REQUEST", "Invalid filename")
    assert_error(anonymous.client.get("/user_uploads/temporary/forged/notes.txt"), 400, "BAD_REQUEST", "Invalid token")


def test_a_temporary_url_needs_access(member, admin, foreign_user):
    url = uploaded(member)
    assert_error(download(admin, "/api/v1" + url), 403, "BAD_REQUEST")
    assert_error(download(foreign_user, "/api/v1" + url), 404, "BAD_REQUEST")


def test_a_path_no_file_can_have_is_not_found(member, realm):
    for path in (f"/user_uploads/{realm.id}/abc%00/x.txt", f"/user_uploads/{realm.id}/abc/x%00.txt"):
        assert_error(download(member, path), 404, "BAD_REQUEST", "File not found.")
        assert_error(download(member, "/api/v1" + path), 404, "BAD_REQUEST", "File not found.")
