"""The /channel_folders endpoints: listing in order, creating, changing, archiving and reordering,
who may do it, their events, and `channel_folders` in POST /register."""

import pytest

from apps.folders.models import ChannelFolder
from apps.folders.serializers import channel_folder_to_dict
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.actions.activation import do_deactivate_user
from tests.api import api_for, assert_error, assert_success
from tests.factories import UserFactory
from tests.folders.conftest import create_folder, db_state, listed


def folder_dict(folder_id: int) -> dict:
    """The folder as the API shows it (the first test spells the shape out)."""
    return channel_folder_to_dict(ChannelFolder.objects.get(id=folder_id))


def refused(user, method: str, path: str, params: dict, status: int, code: str, msg: str) -> None:
    before = db_state()
    api = api_for(user)
    response = api.get(path, params) if method == "GET" else api.request(method, path, params)
    assert_error(response, status, code, msg)
    assert db_state() == before


# --- creating and listing -------------------------------------------------------------------------


def test_create_and_list_in_order(admin, member, guest, bot):
    frontend = create_folder(admin, "Frontend", "Web and **mobile** apps")
    backend = create_folder(admin, "  Backend  ")
    assert listed(member) == [
        {
            "id": frontend,
            "name": "Frontend",
            "description": "Web and **mobile** apps",
            "rendered_description": "<p>Web and <strong>mobile</strong> apps</p>",
            "order": 0,
            "date_created": folder_dict(frontend)["date_created"],
            "creator_id": admin.id,
            "is_archived": False,
        },
        {**folder_dict(backend), "name": "Backend", "order": 1, "description": "", "rendered_description": ""},
    ]
    assert listed(guest) == listed(bot) == listed(member)
    entry = RealmAuditLog.objects.filter(event_type=AuditLogEventType.CHANNEL_FOLDER_CREATED).first()
    assert (entry.acting_user_id, entry.extra_data) == (admin.id, {"channel_folder_id": frontend, "name": "Frontend"})


def test_creation_is_announced_to_the_organization(admin, member, guest, bot, foreign_user, realm, capture_events):
    gone = UserFactory(realm=realm)
    with capture_events(admin, member, guest, bot, foreign_user, gone, event_types=["channel_folder"]) as received:
        do_deactivate_user(gone, acting_user=None)
        folder_id = create_folder(admin, "Ops", "Servers")
    expected = [{"type": "channel_folder", "op": "add", "channel_folder": folder_dict(folder_id)}]
    for user in (admin, member, guest, bot):
        assert received[user.id] == expected
    assert received[foreign_user.id] == received[gone.id] == []


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_administrators_manage_folders(request, role):
    user = request.getfixturevalue(role)
    folder_id = create_folder(user, "Managed")
    assert_success(api_for(user).patch(f"/channel_folders/{folder_id}", {"name": "Renamed"}))
    assert_success(api_for(user).patch("/channel_folders", {"order": [folder_id]}))


@pytest.mark.parametrize("role", ["moderator", "member", "guest", "bot"])
def test_others_may_not_manage_folders(request, role, admin):
    user = request.getfixturevalue(role)
    folder_id = create_folder(admin, "Kept")
    msg = "Must be an organization administrator"
    refused(
        user, "POST", "/channel_folders/create", {"name": "New", "description": ""}, 400, "UNAUTHORIZED_PRINCIPAL", msg
    )
    refused(user, "PATCH", f"/channel_folders/{folder_id}", {"name": "Mine"}, 400, "UNAUTHORIZED_PRINCIPAL", msg)
    refused(user, "PATCH", "/channel_folders", {"order": [folder_id]}, 400, "UNAUTHORIZED_PRINCIPAL", msg)


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"description": ""}, "REQUEST_VARIABLE_MISSING", "Missing 'name' argument"),
        ({"name": "x"}, "REQUEST_VARIABLE_MISSING", "Missing 'description' argument"),
        ({"name": "   ", "description": ""}, "BAD_REQUEST", "Channel folder name can't be empty."),
        (
            {"name": "a\x07b", "description": ""},
            "BAD_REQUEST",
            "Invalid character in channel folder name, at position 2.",
        ),
        ({"name": "x" * 61, "description": ""}, "REQUEST_VARIABLE_INVALID", "name is too long (limit: 60 characters)"),
        (
            {"name": "x", "description": "d" * 1025},
            "REQUEST_VARIABLE_INVALID",
            "description is too long (limit: 1024 characters)",
        ),
        ({"name": "frontend", "description": ""}, "BAD_REQUEST", "Channel folder name already in use"),
        ({"name": "a\x00", "description": ""}, "REQUEST_VARIABLE_INVALID", "name must not contain null bytes"),
    ],
)
def test_bad_folders_are_refused(admin, params, code, msg):
    create_folder(admin, "Frontend")
    refused(admin, "POST", "/channel_folders/create", params, 400, code, msg)


def test_a_name_is_free_again_once_its_folder_is_archived(admin):
    old = create_folder(admin, "Design")
    assert_success(api_for(admin).patch(f"/channel_folders/{old}", {"is_archived": True}))
    new = create_folder(admin, "design")
    assert [f["id"] for f in listed(admin)] == [new]
    assert [f["id"] for f in listed(admin, include_archived=True)] == [old, new]
    # The old one cannot come back under a name in use.
    refused(admin, "PATCH", f"/channel_folders/{old}", {"is_archived": False}, 400, "BAD_REQUEST",
            "Channel folder name already in use")  # fmt: skip
    assert_success(api_for(admin).patch(f"/channel_folders/{old}", {"name": "Old design", "is_archived": False}))
    assert {f["name"] for f in listed(admin)} == {"Old design", "design"}


def test_other_organizations_folders_do_not_exist(admin, foreign_user):
    foreign = create_folder(foreign_user, "Theirs")
    mine = create_folder(admin, "Mine")
    assert [f["id"] for f in listed(admin, include_archived=True)] == [mine]
    for folder_id in (foreign, 999_999, 0):
        path = f"/channel_folders/{folder_id}"
        refused(admin, "PATCH", path, {"name": "Taken"}, 400, "BAD_REQUEST", "Invalid channel folder ID")
    refused(
        admin, "PATCH", "/channel_folders", {"order": [mine, foreign]}, 400, "BAD_REQUEST", "Invalid order mapping."
    )
    assert ChannelFolder.objects.get(id=foreign).name == "Theirs"


# --- changing -------------------------------------------------------------------------------------


def test_change_name_description_and_archive(admin, member, capture_events):
    folder_id = create_folder(admin, "Frontend", "Old")
    path = f"/channel_folders/{folder_id}"
    with capture_events(member) as received:
        assert_success(api_for(admin).patch(path, {"name": "Front end", "description": "New *text*"}))
        assert_success(api_for(admin).patch(path, {"name": "Front end", "description": "New *text*"}))  # no change
        assert_success(api_for(admin).patch(path, {"name": "FRONT END"}))  # its own name in another case
        assert_success(api_for(admin).patch(path, {"is_archived": True}))
        assert_success(api_for(admin).patch(path, {"is_archived": False}))

    def update(data: dict) -> dict:
        return {"type": "channel_folder", "op": "update", "channel_folder_id": folder_id, "data": data}

    assert received[member.id] == [
        update({"name": "Front end"}),
        update({"description": "New *text*", "rendered_description": "<p>New <em>text</em></p>"}),
        update({"name": "FRONT END"}),
        update({"is_archived": True}),
        update({"is_archived": False}),
    ]
    entries = RealmAuditLog.objects.filter(extra_data__channel_folder_id=folder_id).order_by("id")
    assert [e.event_type for e in entries] == [
        AuditLogEventType.CHANNEL_FOLDER_CREATED,
        AuditLogEventType.CHANNEL_FOLDER_NAME_CHANGED,
        AuditLogEventType.CHANNEL_FOLDER_DESCRIPTION_CHANGED,
        AuditLogEventType.CHANNEL_FOLDER_NAME_CHANGED,
        AuditLogEventType.CHANNEL_FOLDER_ARCHIVED,
        AuditLogEventType.CHANNEL_FOLDER_UNARCHIVED,
    ]
    assert entries[1].extra_data == {
        "channel_folder_id": folder_id,
        "property": "name",
        "old_value": "Frontend",
        "new_value": "Front end",
    }


def test_a_refused_change_changes_nothing(admin):
    create_folder(admin, "Taken")
    folder_id = create_folder(admin, "Mine", "kept")
    path = f"/channel_folders/{folder_id}"
    # The description is valid but the name is not: neither changes.
    params = {"name": "taken", "description": "changed"}
    refused(admin, "PATCH", path, params, 400, "BAD_REQUEST", "Channel folder name already in use")
    refused(admin, "PATCH", path, {"name": ""}, 400, "BAD_REQUEST", "Channel folder name can't be empty.")
    refused(
        admin, "PATCH", path, {"is_archived": "yes"}, 400, "REQUEST_VARIABLE_INVALID", "is_archived is not valid JSON"
    )
    refused(admin, "PATCH", path, {"description": "d" * 1025}, 400, "REQUEST_VARIABLE_INVALID",
            "description is too long (limit: 1024 characters)")  # fmt: skip


# --- order ----------------------------------------------------------------------------------------


def test_reorder(admin, member, capture_events):
    a, b, c = (create_folder(admin, name) for name in "ABC")
    assert_success(api_for(admin).patch(f"/channel_folders/{b}", {"is_archived": True}))
    with capture_events(member) as received:
        assert_success(api_for(admin).patch("/channel_folders", {"order": [c, b, a]}))
    assert received[member.id] == [{"type": "channel_folder", "op": "reorder", "order": [c, b, a]}]
    assert [(f["id"], f["order"]) for f in listed(member, include_archived=True)] == [(c, 0), (b, 1), (a, 2)]
    assert [f["id"] for f in listed(member)] == [c, a]
    d = create_folder(admin, "D")
    assert [f["id"] for f in listed(member)] == [c, a, d]
    entry = RealmAuditLog.objects.get(event_type=AuditLogEventType.CHANNEL_FOLDERS_REORDERED)
    assert entry.extra_data == {"order": [c, b, a]}


@pytest.mark.parametrize("order", ["none", "missing", "duplicate", "unknown"])
def test_bad_orders_are_refused(admin, order):
    a, b = create_folder(admin, "A"), create_folder(admin, "B")
    order = {"none": [], "missing": [a], "duplicate": [a, b, b], "unknown": [a, b, b + 1000]}[order]
    refused(admin, "PATCH", "/channel_folders", {"order": order}, 400, "BAD_REQUEST", "Invalid order mapping.")


@pytest.mark.parametrize(
    ("order", "msg"),
    [("[1,", "order is not valid JSON"), ('["1"]', "order[0] is not an integer"), ("[0]", "order[0] is too small")],
)
def test_malformed_orders_are_refused(admin, order, msg):
    create_folder(admin, "A")
    refused(admin, "PATCH", "/channel_folders", {"order": order}, 400, "REQUEST_VARIABLE_INVALID", msg)


# --- POST /register -------------------------------------------------------------------------------


def test_register_has_every_folder(admin, member):
    a = create_folder(admin, "A")
    b = create_folder(admin, "B")
    assert_success(api_for(admin).patch(f"/channel_folders/{a}", {"is_archived": True}))
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["channel_folders"]}))
    assert state["channel_folders"] == [folder_dict(a), folder_dict(b)]
    assert state["channel_folders"][0]["is_archived"] is True
