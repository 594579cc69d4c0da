"""The channel folders admin page: staff create, rename, archive and order folders through the
actions (their events and audit entries), and never delete one."""

from apps.folders.actions import check_add_channel_folder
from apps.folders.models import ChannelFolder
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.models import Stream

URL = "/admin/folders/channelfolder/"


def add(realm, name: str, description: str = "") -> ChannelFolder:
    return check_add_channel_folder(realm, name=name, description=description, acting_user=None)


def test_staff_create_a_folder_through_the_action(staff, owner, realm, member, capture_events):
    with capture_events(member, event_types=["channel_folder"]) as received:
        response = staff.post(f"{URL}add/", {"realm": realm.id, "name": " Ops ", "description": "*Servers*"})
    assert response.status_code == 302, response.content.decode()
    folder = ChannelFolder.objects.get()
    assert (folder.name, folder.rendered_description, folder.creator_id) == ("Ops", "<p><em>Servers</em></p>", owner.id)
    assert [e["op"] for e in received[member.id]] == ["add"]
    assert RealmAuditLog.objects.get(event_type=AuditLogEventType.CHANNEL_FOLDER_CREATED).acting_user_id == owner.id


def test_names_follow_the_rules(staff, realm):
    add(realm, "Taken")
    for name, error in (("taken", "Channel folder name already in use"), ("   ", "This field is required.")):
        response = staff.post(f"{URL}add/", {"realm": realm.id, "name": name, "description": ""})
        assert response.status_code == 200
        assert error in response.content.decode()
    assert ChannelFolder.objects.count() == 1


def test_staff_rename_and_archive_through_the_actions(staff, realm, member, owner, capture_events):
    folder = add(realm, "Old name", "kept")
    with capture_events(member, event_types=["channel_folder"]) as received:
        response = staff.post(
            f"{URL}{folder.id}/change/", {"name": "New name", "description": "kept", "is_archived": "on"}
        )
        assert response.status_code == 302, response.content.decode()
    assert [e["data"] for e in received[member.id]] == [{"name": "New name"}, {"is_archived": True}]
    folder.refresh_from_db()
    assert (folder.name, folder.is_archived) == ("New name", True)
    renamed = RealmAuditLog.objects.get(event_type=AuditLogEventType.CHANNEL_FOLDER_NAME_CHANGED)
    assert renamed.acting_user_id == owner.id


def test_staff_order_folders_on_the_list(staff, realm, member, capture_events):
    a, b, c = add(realm, "A"), add(realm, "B"), add(realm, "C")
    assert staff.get(URL).status_code == 200
    rows = {"form-TOTAL_FORMS": "3", "form-INITIAL_FORMS": "3", "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000"}
    for index, (folder, order) in enumerate(((a, 0), (b, 1), (c, -1))):
        rows.update({f"form-{index}-id": str(folder.id), f"form-{index}-order": str(order)})
    with capture_events(member, event_types=["channel_folder"]) as received:
        response = staff.post(URL, {**rows, "_save": "Save"})
        assert response.status_code == 302, response.content.decode()
    assert list(ChannelFolder.objects.order_by("order").values_list("id", "order")) == [(c.id, 0), (a.id, 1), (b.id, 2)]
    assert received[member.id] == [{"type": "channel_folder", "op": "reorder", "order": [c.id, a.id, b.id]}]


def test_archive_and_unarchive_actions(staff, realm):
    kept, taken = add(realm, "Kept"), add(realm, "Name")
    staff.post(URL, {"action": "archive", "_selected_action": [kept.id, taken.id]})
    assert set(ChannelFolder.objects.values_list("is_archived", flat=True)) == {True}
    add(realm, "name")
    staff.post(URL, {"action": "unarchive", "_selected_action": [kept.id, taken.id]})
    assert dict(ChannelFolder.objects.values_list("id", "is_archived")) == {
        kept.id: False,
        taken.id: True,
        ChannelFolder.objects.get(name="name").id: False,
    }


def test_folders_are_never_deleted(staff, realm):
    folder = add(realm, "Forever")
    assert staff.post(f"{URL}{folder.id}/delete/", {"post": "yes"}).status_code == 403
    assert ChannelFolder.objects.filter(id=folder.id).exists()


def test_a_channels_page_shows_its_folder(staff, realm, make_stream):
    folder = add(realm, "Engineering")
    stream = make_stream("backend")
    Stream.objects.filter(id=stream.id).update(folder=folder)
    page = staff.get(f"/admin/subscriptions/stream/{stream.id}/change/").content.decode()
    assert "Engineering" in page
    assert 'name="folder"' not in page  # read-only: the API moves channels


def test_a_folder_with_channels_is_not_archived_from_the_admin(staff, realm, make_stream, member):
    used, empty = add(realm, "Used"), add(realm, "Empty")
    Stream.objects.filter(id=make_stream("in it", member).id).update(folder=used)
    response = staff.post(f"{URL}{used.id}/change/", {"name": "Used", "description": "", "is_archived": "on"})
    assert response.status_code == 200
    assert "You need to remove all the channels from this folder to archive it." in response.content.decode()
    page = staff.post(URL, {"action": "archive", "_selected_action": [used.id, empty.id]}, follow=True)
    assert "Not archived, channels in them: Used" in page.content.decode()
    assert dict(ChannelFolder.objects.values_list("name", "is_archived")) == {"Used": False, "Empty": True}
