"""Channels in folders: `folder_id` when channels are created (POST /users/me/subscriptions) and by
PATCH /streams/{id}, in channel and subscription objects and `stream` update events; archiving a
folder keeps its channels in it."""

from apps.folders.models import ChannelFolder
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.models import Stream
from tests.api import api_for, assert_error, assert_success
from tests.folders.conftest import create_folder, db_state


def subscribe(user, names: list[str], **params):
    return api_for(user).post("/users/me/subscriptions", {"subscriptions": [{"name": n} for n in names], **params})


def channel(user, stream_id: int) -> dict:
    return assert_success(api_for(user).get(f"/streams/{stream_id}"))["stream"]


def subscription(user, stream_id: int) -> dict:
    subs = assert_success(api_for(user).get("/users/me/subscriptions"))["subscriptions"]
    return next(sub for sub in subs if sub["stream_id"] == stream_id)


def test_channels_created_in_a_folder(admin, member, make_stream, capture_events):
    folder_id = create_folder(admin, "Engineering")
    existing = make_stream("existing", member)
    with capture_events(member, event_types=["stream", "subscription"]) as received:
        assert_success(subscribe(member, ["backend", "existing"], folder_id=folder_id))
    backend = Stream.objects.get(name="backend")
    assert backend.folder_id == folder_id
    existing.refresh_from_db()
    assert existing.folder_id is None  # only the channels created go in the folder
    assert channel(member, backend.id)["folder_id"] == folder_id
    assert subscription(member, backend.id)["folder_id"] == folder_id
    assert subscription(member, existing.id)["folder_id"] is None
    [create] = [e for e in received[member.id] if e["type"] == "stream" and e["op"] == "create"]
    assert [s["folder_id"] for s in create["streams"]] == [folder_id]
    [add] = [e for e in received[member.id] if e["type"] == "subscription" and e["op"] == "add"]
    assert {s["name"]: s["folder_id"] for s in add["subscriptions"]} == {"backend": folder_id}


def test_creation_in_a_folder_of_nowhere_creates_nothing(admin, member, foreign_user):
    foreign = create_folder(foreign_user, "Theirs")
    for folder_id in (foreign, 999_999, 0):
        before = db_state()
        assert_error(subscribe(member, ["new"], folder_id=folder_id), 400, "BAD_REQUEST", "Invalid channel folder ID")
        assert db_state() == before
    assert_error(
        subscribe(member, ["new"], folder_id="x"), 400, "REQUEST_VARIABLE_INVALID", "folder_id is not valid JSON"
    )
    assert not Stream.objects.filter(name="new").exists()


def test_move_a_channel_between_folders(admin, member, make_stream, capture_events):
    one, two = create_folder(admin, "One"), create_folder(admin, "Two")
    stream = make_stream("design", member, admin)
    path = f"/streams/{stream.id}"
    with capture_events(member, event_types=["stream"]) as received:
        assert_success(api_for(admin).patch(path, {"folder_id": one}))
        assert_success(api_for(admin).patch(path, {"folder_id": two}))
        assert_success(api_for(admin).patch(path, {"folder_id": two}))  # no change, no event
        assert_success(api_for(admin).patch(path, {"folder_id": "null"}))
        assert_success(api_for(admin).patch(path, {"description": "no folder change"}))

    def update(value) -> dict:
        return {"type": "stream", "op": "update", "stream_id": stream.id, "name": "design", "property": "folder_id",
                "value": value}  # fmt: skip

    assert [e for e in received[member.id] if e["property"] == "folder_id"] == [update(one), update(two), update(None)]
    stream.refresh_from_db()
    assert stream.folder_id is None
    entries = RealmAuditLog.objects.filter(
        modified_stream=stream, event_type=AuditLogEventType.STREAM_PROPERTY_CHANGED, extra_data__property="folder_id"
    ).order_by("id")
    assert [(e.extra_data["old_value"], e.extra_data["new_value"], e.acting_user_id) for e in entries] == [
        (None, one, admin.id),
        (one, two, admin.id),
        (two, None, admin.id),
    ]


def test_only_a_folder_of_the_organization(admin, member, foreign_user, make_stream):
    foreign = create_folder(foreign_user, "Theirs")
    mine = create_folder(admin, "Mine")
    stream = make_stream("design", member)
    for folder_id in (foreign, 999_999, 0):
        before = db_state()
        # Nothing else in the request changes either.
        response = api_for(admin).patch(f"/streams/{stream.id}", {"folder_id": folder_id, "description": "changed"})
        assert_error(response, 400, "BAD_REQUEST", "Invalid channel folder ID")
        assert db_state() == before
    for bad, msg in (("x", "folder_id is not valid JSON"), ('"1"', "folder_id is not an integer")):
        response = api_for(admin).patch(f"/streams/{stream.id}", {"folder_id": bad})
        assert_error(response, 400, "REQUEST_VARIABLE_INVALID", msg)
    # Someone who cannot administer the channel cannot move it.
    before = db_state()
    response = api_for(member).patch(f"/streams/{stream.id}", {"folder_id": mine})
    assert_error(response, 400, "CANNOT_ADMINISTER_CHANNEL")
    assert db_state() == before


def test_a_folder_with_channels_is_not_archived(admin, member, make_stream, capture_events):
    """As in Zulip, archived channels included (the QA pass: archived with a channel in it, clients
    listing folders did not know the folder the channel named)."""
    folder_id = create_folder(admin, "Old")
    stream = make_stream("legacy", member)
    assert_success(api_for(admin).patch(f"/streams/{stream.id}", {"folder_id": folder_id}))
    refusal = "You need to remove all the channels from this folder to archive it."
    assert_error(
        api_for(admin).patch(f"/channel_folders/{folder_id}", {"is_archived": True}), 400, "BAD_REQUEST", refusal
    )
    assert_success(api_for(admin).delete(f"/streams/{stream.id}"))  # archived, still in the folder
    assert_error(
        api_for(admin).patch(f"/channel_folders/{folder_id}", {"is_archived": True}), 400, "BAD_REQUEST", refusal
    )
    assert ChannelFolder.objects.get(id=folder_id).is_archived is False
    Stream.objects.filter(id=stream.id).update(folder=None)
    with capture_events(member, event_types=["stream", "channel_folder"]) as received:
        assert_success(api_for(admin).patch(f"/channel_folders/{folder_id}", {"is_archived": True}))
    assert [e["type"] for e in received[member.id]] == ["channel_folder"]
    # A channel can still be put in an archived folder, as in Zulip.
    other = make_stream("other", member)
    assert_success(api_for(admin).patch(f"/streams/{other.id}", {"folder_id": folder_id}))
