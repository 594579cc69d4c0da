"""The uploads admin pages (attachments: look and delete through the action; custom emoji: look and
deactivate through the action) and the command deleting old files no message links."""

import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.scheduled_messages.models import ScheduledMessage
from apps.uploads.models import Attachment, RealmEmoji
from tests.api import api_for, assert_success
from tests.uploads.conftest import image_bytes, uploaded
from tests.uploads.test_attachments import send
from tests.uploads.test_custom_emoji import add_emoji


def test_attachment_admin_lists_and_deletes_through_the_action(staff, member, uploads_dir):
    uploaded(member, name="findable.txt")
    attachment = Attachment.objects.get()
    page = staff.get("/admin/uploads/attachment/?q=findable")
    assert page.status_code == 200
    assert "findable.txt" in page.content.decode()
    detail = staff.get(f"/admin/uploads/attachment/{attachment.id}/change/")
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content
    assert staff.get("/admin/uploads/attachment/add/").status_code == 403
    response = staff.post(
        "/admin/uploads/attachment/",
        {"action": "delete_files", "confirmed": "yes", "_selected_action": [attachment.id]},
        follow=True,
    )
    assert response.status_code == 200
    assert not Attachment.objects.exists()


def test_attachment_admin_shows_an_image_and_its_messages_and_deletes_its_files(
    staff, member, admin, make_stream, uploads_dir, django_capture_on_commit_callbacks
):
    url = uploaded(member, name="chart.png", data=image_bytes(size=(30, 20)), content_type="image/png")
    message_id = send(member, make_stream("design", member, admin), f"[chart]({url})")
    attachment = Attachment.objects.get()
    page = staff.get(f"/admin/uploads/attachment/{attachment.id}/change/").content.decode()
    assert "840x560.webp" in page  # its thumbnails
    assert ">30<" in page  # its width
    assert ">20<" in page
    assert f"message {message_id} from {member.id}" in page
    stored = [uploads_dir / "files" / attachment.path_id, uploads_dir / "thumbnails" / attachment.path_id]
    assert all(path.exists() for path in stored)
    with django_capture_on_commit_callbacks(execute=True):
        staff.post(
            "/admin/uploads/attachment/",
            {"action": "delete_files", "confirmed": "yes", "_selected_action": [attachment.id]},
        )
    assert not Attachment.objects.exists()
    assert not (uploads_dir / "files" / attachment.path_id).exists()
    assert not (uploads_dir / "thumbnails" / attachment.path_id / "840x560.webp").exists()


def test_emoji_admin_lists_and_deactivates(staff, member):
    assert_success(add_emoji(member, "findme", image_bytes()))
    emoji = RealmEmoji.objects.get()
    assert "findme" in staff.get("/admin/uploads/realmemoji/?q=findme").content.decode()
    assert staff.get("/admin/uploads/realmemoji/add/").status_code == 403
    staff.post("/admin/uploads/realmemoji/", {"action": "deactivate", "_selected_action": [emoji.id]}, follow=True)
    emoji.refresh_from_db()
    assert emoji.deactivated


def test_old_unclaimed_files_are_deleted_only_for_real(member, make_stream, django_capture_on_commit_callbacks):
    channel = make_stream("design", member)
    old_unclaimed, old_claimed = uploaded(member, name="old.txt"), uploaded(member, name="claimed.txt")
    uploaded(member, name="new.txt")
    send(member, channel, f"[c]({old_claimed})")
    # A file only a message still to be sent links is kept, as in Zulip (the uploads QA pass: a
    # message scheduled weeks ahead would have been sent with a dead link).
    scheduled, sent_later = uploaded(member, name="scheduled.txt"), uploaded(member, name="sent.txt")
    later = {"type": "stream", "to": channel.id, "topic": "t", "scheduled_delivery_timestamp": int(time.time()) + 3600}
    assert_success(api_for(member).post("/scheduled_messages", {**later, "content": f"[s]({scheduled})"}))
    delivered = assert_success(api_for(member).post("/scheduled_messages", {**later, "content": f"[s]({sent_later})"}))
    ScheduledMessage.objects.filter(id=delivered["scheduled_message_id"]).update(delivered=True)
    Attachment.objects.exclude(file_name="new.txt").update(create_time=timezone.now() - timedelta(weeks=6))
    out = StringIO()
    call_command("delete_old_unclaimed_attachments", stdout=out)
    assert "would delete" in out.getvalue()
    assert old_unclaimed.removeprefix("/user_uploads/") in out.getvalue()
    assert Attachment.objects.count() == 5
    with django_capture_on_commit_callbacks(execute=True):
        call_command("delete_old_unclaimed_attachments", "--for-real", stdout=StringIO())
    assert sorted(Attachment.objects.values_list("file_name", flat=True)) == ["claimed.txt", "new.txt", "scheduled.txt"]
    with pytest.raises(CommandError):
        call_command("delete_old_unclaimed_attachments", "--weeks", "-1", stdout=StringIO())
