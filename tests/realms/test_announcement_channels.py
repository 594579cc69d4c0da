"""The organization's announcement channels, as Zulip's: new_stream_announcements_stream (channels
created with `announce` are announced there), signup_announcements_stream (each new person is) and
zulip_update_announcements_stream (kept for clients). None by default; set by administrators with
PATCH /realm (`<name>_id`, -1 for none), shown in /register, cleared when the channel is archived."""

import json

import pytest

from apps.messages.models import Message, UserMessage
from apps.realms.models import Realm
from apps.users.actions.create_user import do_create_user
from apps.users.models import BotType
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import realm_admin_form

NAMES = ("new_stream_announcements_stream", "signup_announcements_stream", "zulip_update_announcements_stream")


def state(user) -> dict:
    return assert_success(ApiClient(user).post("/register", {"fetch_event_types": '["realm"]'}))


def set_channel(admin, name: str, channel_id: int):
    return ApiClient(admin).patch("/realm", {f"{name}_id": channel_id})


def messages_in(stream) -> list[tuple[str, str, str]]:
    rows = Message.objects.filter(stream=stream).order_by("id")
    return [(m.sender.full_name, m.topic, m.content) for m in rows.select_related("sender")]


@pytest.fixture
def lobby(make_stream, admin, member):
    return make_stream("lobby", admin, member)


@pytest.mark.parametrize("name", NAMES)
def test_set_shown_told_and_cleared(name, realm, admin, member, lobby, capture_events):
    assert state(member)[f"realm_{name}_id"] == -1
    with capture_events(member) as received:
        assert assert_success(set_channel(admin, name, lobby.id))[f"{name}_id"] == lobby.id
    assert received[member.id] == [{"type": "realm", "op": "update", "property": f"{name}_id", "value": lobby.id}]
    assert state(member)[f"realm_{name}_id"] == lobby.id
    assert_success(set_channel(admin, name, -1))
    assert getattr(Realm.objects.get(id=realm.id), f"{name}_id") is None


@pytest.mark.parametrize("name", NAMES)
def test_refusals(name, realm, admin, member, make_stream, foreign_user, lobby):
    hidden = make_stream("hidden", member, private=True)  # the administrator cannot read it
    elsewhere = make_stream("elsewhere", foreign_user, in_realm=foreign_user.realm)
    for channel_id in (hidden.id, elsewhere.id, 0, 999999):
        assert_error(set_channel(admin, name, channel_id), 400, "BAD_REQUEST", "Invalid channel ID")
    assert_error(set_channel(member, name, lobby.id), 400, "UNAUTHORIZED_PRINCIPAL")
    assert_error(set_channel(admin, name, "lobby"), 400, "REQUEST_VARIABLE_INVALID")
    assert getattr(Realm.objects.get(id=realm.id), f"{name}_id") is None


def test_archiving_the_channel_clears_the_settings_naming_it(realm, admin, member, lobby, capture_events):
    for name in NAMES[:2]:
        assert_success(set_channel(admin, name, lobby.id))
    with capture_events(member) as received:
        assert_success(ApiClient(admin).delete(f"/streams/{lobby.id}"))
    updates = [e for e in received[member.id] if e["type"] == "realm"]
    assert {(e["property"], e["value"]) for e in updates} == {(f"{n}_id", -1) for n in NAMES[:2]}
    realm = Realm.objects.get(id=realm.id)
    assert realm.new_stream_announcements_stream_id is realm.signup_announcements_stream_id is None


def test_new_channels_announced_when_asked(admin, member, lobby):
    assert_success(set_channel(admin, NAMES[0], lobby.id))
    subscribe = ApiClient(member).post
    assert_success(subscribe("/users/me/subscriptions", {"subscriptions": '[{"name": "quiet"}]'}))
    assert_success(subscribe("/users/me/subscriptions", {"subscriptions": '[{"name": "one"}]', "announce": "true"}))
    two = json.dumps([{"name": "two"}, {"name": "three"}, {"name": "one"}])  # "one" exists: not new
    assert_success(subscribe("/users/me/subscriptions", {"subscriptions": two, "announce": "true"}))
    assert_success(subscribe("/channels/create", {"name": "four", "subscribers": "[]", "announce": "true"}))
    mention = f"@_**{member.full_name}|{member.id}**"
    assert messages_in(lobby) == [
        ("Notification Bot", "new channels", f"{mention} created a new channel #**one**."),
        ("Notification Bot", "new channels", f"{mention} created the following channels: #**two**, #**three**."),
        ("Notification Bot", "new channels", f"{mention} created a new channel #**four**."),
    ]
    # Read for their creator, unread for the others; rendered as channel links.
    rows = UserMessage.objects.filter(message__stream=lobby, user__in=[member, admin])
    assert {(row.user_id, bool(row.flags & UserMessage.READ)) for row in rows} == {(member.id, True), (admin.id, False)}
    assert 'class="stream"' in Message.objects.filter(stream=lobby).first().rendered_content


def test_the_channel_is_announced_to_clients_before_the_message(admin, member, lobby, capture_events):
    assert_success(set_channel(admin, NAMES[0], lobby.id))
    with capture_events(admin) as received:
        assert_success(
            ApiClient(member).post("/channels/create", {"name": "x", "subscribers": "[]", "announce": "true"})
        )
    kinds = [(e["type"], e.get("op")) for e in received[admin.id]]
    assert kinds.index(("stream", "create")) < kinds.index(("message", None))


def test_no_announcement_without_the_channel(realm, member):
    assert_success(ApiClient(member).post("/channels/create", {"name": "x", "subscribers": "[]", "announce": "true"}))
    assert not Message.objects.filter(realm=realm).exists()


def test_new_people_announced(realm, admin, member, lobby):
    assert_success(set_channel(admin, NAMES[1], lobby.id))
    realm = Realm.objects.get(id=realm.id)
    person = do_create_user(realm, "new@example.com", "Nadia New", acting_user=admin)
    do_create_user(realm, "bot@example.com", "Some Bot", bot_type=BotType.GENERIC, bot_owner=member, acting_user=member)
    assert messages_in(lobby) == [
        ("Notification Bot", "signups", f"@_**Nadia New|{person.id}** joined this organization.")
    ]


def test_no_signup_announcement_without_the_channel(realm, admin):
    do_create_user(realm, "new@example.com", "Nadia New", acting_user=admin)
    assert not Message.objects.filter(realm=realm, stream__isnull=False).exists()


def test_the_admin_sets_them(staff, realm, lobby):
    form = realm_admin_form(realm, **dict.fromkeys(NAMES, lobby.id))
    assert staff.post(f"/admin/realms/realm/{realm.id}/change/", form).status_code == 302
    realm = Realm.objects.get(id=realm.id)
    assert [getattr(realm, f"{name}_id") for name in NAMES] == [lobby.id] * 3
