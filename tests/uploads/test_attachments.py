"""Attachments: messages sent or edited claim the files they link (and release those they stop
linking), GET /attachments and DELETE /attachments/{id}, the attachment events, the has:attachment
and has:image narrows, and a page of messages linking files costing no more queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.messages.models import Message
from apps.uploads.models import Attachment
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once, done_or_refused
from tests.messages.conftest import message_ids, post_message
from tests.uploads.conftest import download, uploaded


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def send(user, channel, content, topic="files"):
    return assert_success(post_message(user, type="stream", to=channel.name, topic=topic, content=content))["id"]


def attachments_of(user) -> dict:
    return assert_success(api_for(user).get("/attachments"))


def test_sending_a_link_claims_the_file(member, design):
    url = uploaded(member)
    message_id = send(member, design, f"here: [notes]({url})")
    attachment = Attachment.objects.get()
    assert list(attachment.messages.values_list("id", flat=True)) == [message_id]
    message = Message.objects.get(id=message_id)
    assert message.has_attachment
    assert not message.has_image


def test_absolute_links_claim_too(member, design):
    url = uploaded(member)
    send(member, design, f"http://testserver{url}")
    assert Attachment.objects.get().messages.count() == 1


def test_an_image_file_makes_the_message_have_an_image(member, design):
    url = uploaded(member, name="cat.png", content_type="image/png", data=b"\x89PNG")
    message = Message.objects.get(id=send(member, design, f"[cat.png]({url})"))
    assert (message.has_attachment, message.has_image) == (True, True)


def test_a_message_without_links_claims_nothing(member, design):
    uploaded(member)
    message = Message.objects.get(id=send(member, design, "no files here"))
    assert not message.has_attachment
    assert not Attachment.objects.get().messages.exists()


def test_text_that_only_looks_like_a_link_claims_nothing(member, design, realm):
    message = Message.objects.get(id=send(member, design, f"/user_uploads/{realm.id}/abcdefghijklmnopqrstuvwx/x.txt"))
    assert not message.has_attachment


def test_editing_claims_new_links_and_releases_old_ones(member, design):
    first, second = uploaded(member, name="a.txt"), uploaded(member, name="b.txt")
    message_id = send(member, design, f"[a]({first})")
    assert_success(api_for(member).patch(f"/messages/{message_id}", {"content": f"[b]({second})"}))
    by_name = {a.file_name: list(a.messages.values_list("id", flat=True)) for a in Attachment.objects.all()}
    assert by_name == {"a.txt": [], "b.txt": [message_id]}
    assert Message.objects.get(id=message_id).has_attachment
    assert_success(api_for(member).patch(f"/messages/{message_id}", {"content": "nothing now"}))
    assert not Message.objects.get(id=message_id).has_attachment
    assert not Attachment.objects.filter(messages__isnull=False).exists()


def test_an_edit_answers_the_files_it_detached(member, admin, design):
    kept, dropped, shared = (uploaded(member, name=name) for name in ("kept.txt", "dropped.txt", "shared.txt"))
    message_id = send(member, design, f"[k]({kept}) [d]({dropped}) [s]({shared})")
    send(admin, design, f"[s]({shared})")  # admin links member's file too: it stays linked
    body = assert_success(api_for(member).patch(f"/messages/{message_id}", {"content": f"[k]({kept})"}))
    dropped_file = Attachment.objects.get(file_name="dropped.txt")
    assert body["detached_uploads"] == [
        {
            "id": dropped_file.id,
            "name": "dropped.txt",
            "path_id": dropped_file.path_id,
            "size": dropped_file.size,
            "create_time": int(dropped_file.create_time.timestamp() * 1000),
            "messages": [],
        }
    ]
    # An edit that detaches nothing, or changes only the topic, answers an empty list.
    assert (
        assert_success(api_for(member).patch(f"/messages/{message_id}", {"content": f"[k]({kept}) again"}))[
            "detached_uploads"
        ]
        == []
    )
    assert (
        assert_success(api_for(member).patch(f"/messages/{message_id}", {"topic": "moved"}))["detached_uploads"] == []
    )


def test_forwarding_a_file_one_can_see_claims_it(member, admin, design, moderator):
    url = uploaded(member)
    send(member, design, f"[f]({url})")
    # admin sees the file through the first message, and passes it on in a direct message.
    assert_success(post_message(admin, type="private", to=[moderator.id], content=f"[f]({url})"))
    assert Attachment.objects.get().messages.count() == 2
    assert download(moderator, url).status_code == 200


def test_has_attachment_and_has_image_narrows(member, design):
    plain = send(member, design, f"[n]({uploaded(member)})")
    image = send(member, design, f"[c]({uploaded(member, name='c.png', content_type='image/png')})")
    send(member, design, "nothing")
    assert message_ids(member, [{"operator": "has", "operand": "attachment"}]) == [plain, image]
    assert message_ids(member, [{"operator": "has", "operand": "image"}]) == [image]


def test_list_attachments_answers_zulips_shape(member, admin, design):
    url = uploaded(member, data=b"12345")
    message_id = send(member, design, f"[n]({url})")
    uploaded(admin, data=b"123")
    body = attachments_of(member)
    assert body["upload_space_used"] == 8  # the organization's
    [attachment] = body["attachments"]
    assert set(attachment) == {"id", "name", "path_id", "size", "create_time", "messages"}
    assert attachment["name"] == "notes.txt"
    assert attachment["path_id"] == url.removeprefix("/user_uploads/")
    assert attachment["size"] == 5
    assert isinstance(attachment["create_time"], int)
    assert [m["id"] for m in attachment["messages"]] == [message_id]
    date_sent = Message.objects.get(id=message_id).date_sent
    assert attachment["messages"][0]["date_sent"] == int(date_sent.timestamp() * 1000)


def test_other_organizations_files_are_not_counted_or_listed(member, foreign_user):
    uploaded(foreign_user, data=b"x" * 10)
    assert attachments_of(member) == {"result": "success", "msg": "", "attachments": [], "upload_space_used": 0}


def test_delete_attachment_removes_row_and_file(member, uploads_dir, django_capture_on_commit_callbacks):
    url = uploaded(member)
    attachment = Attachment.objects.get()
    stored = uploads_dir / "files" / attachment.path_id
    assert stored.exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert_success(api_for(member).delete(f"/attachments/{attachment.id}"))
    assert not Attachment.objects.exists()
    assert not stored.exists()
    assert download(member, url).status_code == 404


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_deletions_of_one_attachment_at_once_delete_it_once(member, uploads_dir):
    """The hostile-input QA pass: 8 of 20 deletions at once answered 200, each with its event."""
    uploaded(member)
    attachment = Attachment.objects.get()
    answers = at_once(*[lambda: api_for(member).delete(f"/attachments/{attachment.id}")] * 4)
    assert sorted(answer.status_code for answer in answers) == [200, 400, 400, 400]
    done_or_refused(answers, 400, "BAD_REQUEST", "Invalid attachment")
    assert not Attachment.objects.exists()


def test_only_the_owner_deletes_an_attachment(member, admin, foreign_user):
    uploaded(member)
    attachment = Attachment.objects.get()
    for other in (admin, foreign_user):
        assert_error(api_for(other).delete(f"/attachments/{attachment.id}"), 400, "BAD_REQUEST", "Invalid attachment")
    assert_error(api_for(member).delete("/attachments/999999"), 400, "BAD_REQUEST", "Invalid attachment")
    assert Attachment.objects.count() == 1


def test_attachment_events_go_to_the_owner(member, admin, design, capture_events):
    with capture_events(member, admin, event_types=["attachment"]) as received:
        url = uploaded(member, data=b"abc")
    attachment = Attachment.objects.get()
    [added] = received[member.id]
    assert added["type"] == "attachment"
    assert added["op"] == "add"
    assert added["upload_space_used"] == 3
    assert added["attachment"]["id"] == attachment.id
    assert added["attachment"]["messages"] == []
    assert received[admin.id] == []

    with capture_events(member, admin, event_types=["attachment"]) as received:
        message_id = send(member, design, f"[a]({url})")
    [updated] = received[member.id]
    assert updated["op"] == "update"
    assert [m["id"] for m in updated["attachment"]["messages"]] == [message_id]
    assert received[admin.id] == []

    with capture_events(member, event_types=["attachment"]) as received:
        assert_success(api_for(member).delete(f"/attachments/{attachment.id}"))
    assert received[member.id] == [
        {"type": "attachment", "op": "remove", "attachment": {"id": attachment.id}, "upload_space_used": 0}
    ]


def test_a_page_of_messages_with_files_costs_no_more_queries(member, design):
    for _ in range(3):
        send(member, design, "plain")
    plain = api_for(member)
    with CaptureQueriesContext(connection) as without:
        assert_success(plain.get("/messages", {"anchor": "newest", "num_before": 100, "num_after": 0}))
    for _ in range(3):
        send(member, design, f"[f]({uploaded(member)})")
    with CaptureQueriesContext(connection) as with_files:
        assert_success(plain.get("/messages", {"anchor": "newest", "num_before": 100, "num_after": 0}))
    assert len(with_files) == len(without)


def test_sending_without_links_adds_no_query(member, design):
    send(member, design, "warm up")
    with CaptureQueriesContext(connection) as first:
        send(member, design, "plain text")
    with CaptureQueriesContext(connection) as second:
        send(member, design, "more plain text")
    assert len(first) == len(second)
    assert not any("uploads_attachment" in q["sql"] for q in second.captured_queries)


def test_deleting_a_message_releases_its_files(member, admin, design):
    url = uploaded(member)
    message_id = send(member, design, f"[a]({url})")
    assert_success(api_for(member).delete(f"/messages/{message_id}"))
    attachment = Attachment.objects.get()
    assert not attachment.messages.exists()
    assert download(member, url).status_code == 200
    assert download(admin, url).status_code == 403
