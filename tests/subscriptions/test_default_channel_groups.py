"""Default channel groups (Zulip's default stream groups): /default_stream_groups/... for
administrators, Zulip's words for every refusal (which changes nothing), the
realm_default_stream_groups state and the default_stream_groups event, guests, another
organization, and archived channels leaving their groups."""

import json

import pytest

from apps.events.models import OutboxEvent
from apps.subscriptions.actions.channels import do_deactivate_stream, do_set_default_channel
from apps.subscriptions.models import DefaultChannelGroup
from tests.api import api_for, assert_error, assert_success


def create(user, name="Engineering", description="For engineers", names=("design", "backend")):
    params = {"group_name": name, "description": description, "stream_names": json.dumps(list(names))}
    return api_for(user).post("/default_stream_groups/create", params)


def state(user) -> list[dict]:
    body = assert_success(api_for(user).post("/register", {"fetch_event_types": '["default_stream_groups"]'}))
    return body["realm_default_stream_groups"]


def db_state() -> tuple:
    return (
        list(DefaultChannelGroup.objects.order_by("id").values()),
        list(DefaultChannelGroup.streams.through.objects.order_by("id").values()),
        OutboxEvent.objects.count(),
    )


@pytest.fixture
def channels(make_stream, admin, member):
    return {name: make_stream(name, admin, member) for name in ("design", "backend", "general")}


def test_an_administrator_creates_changes_fills_and_removes_a_group(admin, member, guest, channels, capture_events):
    with capture_events(member, guest) as received:
        assert_success(create(admin))
    group = DefaultChannelGroup.objects.get()
    expected = {"id": group.id, "name": "Engineering", "description": "For engineers",
                "streams": sorted([channels["design"].id, channels["backend"].id])}  # fmt: skip
    assert received[member.id] == [{"type": "default_stream_groups", "default_stream_groups": [expected]}]
    assert received[guest.id] == []
    assert state(member) == [expected]
    assert state(guest) == []
    path = f"/default_stream_groups/{group.id}"
    assert_success(api_for(admin).patch(path, {"new_group_name": "Eng", "new_description": "Builders"}))
    assert_success(api_for(admin).patch(f"{path}/streams", {"op": "remove", "stream_names": '["design"]'}))
    assert_success(api_for(admin).patch(f"{path}/streams", {"op": "add", "stream_names": '["general"]'}))
    [now] = state(member)
    assert (now["name"], now["description"]) == ("Eng", "Builders")
    assert now["streams"] == sorted([channels["backend"].id, channels["general"].id])
    assert_success(create(admin, name="Another", names=["design"]))
    assert [g["name"] for g in state(member)] == ["Another", "Eng"]  # by name
    assert_success(api_for(admin).delete(path))
    assert [g["name"] for g in state(member)] == ["Another"]


@pytest.mark.parametrize(
    ("params", "msg"),
    [
        ({"name": " "}, "Invalid default channel group name ' '"),
        ({"name": "x" * 61}, "Default channel group name too long (limit: 60 characters)"),
        ({"name": "a\x00b"}, None),
        ({"description": "x" * 1025}, "Default channel group description too long (limit: 1024 characters)"),
        ({"names": ["nope"]}, "Invalid channel name 'nope'"),
        ({"names": ["default"]}, "'default' is a default channel and cannot be added to 'Engineering'"),
    ],
)
def test_bad_groups_are_refused(admin, channels, make_stream, params, msg):
    do_set_default_channel(make_stream("default", admin), True, acting_user=None)
    before = db_state()
    response = create(admin, **params)
    body = response.json()
    assert response.status_code == 400, body
    if msg is not None:
        assert body["msg"] == msg
    assert db_state() == before


def test_names_and_channels_once(admin, channels):
    assert_success(create(admin))
    group = DefaultChannelGroup.objects.get()
    path = f"/default_stream_groups/{group.id}"
    before = db_state()
    cases = [
        (create(admin), "Default channel group 'Engineering' already exists"),
        (api_for(admin).patch(path, {"new_group_name": "Engineering"}),
         "This default channel group is already named 'Engineering'"),
        (api_for(admin).patch(path, {}), 'You must pass "new_description" or "new_group_name".'),
        (api_for(admin).patch(f"{path}/streams", {"op": "add", "stream_names": '["design"]'}),
         "Channel 'design' is already present in default channel group 'Engineering'"),
        (api_for(admin).patch(f"{path}/streams", {"op": "remove", "stream_names": '["general"]'}),
         "Channel 'general' is not present in default channel group 'Engineering'"),
        (api_for(admin).patch(f"{path}/streams", {"op": "toggle", "stream_names": '["general"]'}),
         'Invalid value for "op". Specify one of "add" or "remove".'),
        (api_for(admin).delete("/default_stream_groups/999999"),
         "Default channel group with id '999999' does not exist."),
    ]  # fmt: skip
    for response, msg in cases:
        assert_error(response, 400, "BAD_REQUEST", msg)
    assert db_state() == before
    assert_success(create(admin, name="Second", names=["general"]))
    second = DefaultChannelGroup.objects.get(name="Second")
    before = db_state()
    response = api_for(admin).patch(f"/default_stream_groups/{second.id}", {"new_group_name": "Engineering"})
    assert_error(response, 400, "BAD_REQUEST", "Default channel group 'Engineering' already exists")
    assert db_state() == before


def test_only_administrators_and_only_their_organizations(admin, member, moderator, foreign_user, channels):
    assert_success(create(admin))
    group = DefaultChannelGroup.objects.get()
    before = db_state()
    for user in (member, moderator):
        assert_error(create(user, name="Mine"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
        response = api_for(user).delete(f"/default_stream_groups/{group.id}")
        assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL")
    foreign_user.role = admin.role
    foreign_user.save()
    response = api_for(foreign_user).delete(f"/default_stream_groups/{group.id}")
    assert_error(response, 400, "BAD_REQUEST", f"Default channel group with id '{group.id}' does not exist.")
    assert state(foreign_user) == []
    assert db_state() == before


def test_an_archived_channel_leaves_its_groups(admin, member, channels, capture_events):
    assert_success(create(admin))
    with capture_events(member, event_types=["default_stream_groups"]) as received:
        do_deactivate_stream(channels["design"], acting_user=admin)
    [event] = received[member.id]
    assert event["default_stream_groups"][0]["streams"] == [channels["backend"].id]
    assert state(member)[0]["streams"] == [channels["backend"].id]


def test_staff_see_them(staff, admin, channels):
    assert_success(create(admin))
    page = staff.get("/admin/subscriptions/defaultchannelgroup/").content.decode()
    assert "Engineering" in page
    assert "#design" in page
