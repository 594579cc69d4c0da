"""Default channels, as Zulip's: POST and DELETE /default_streams (administrators; public channels),
is_default_stream when a channel is created or changed, the default_streams event and the
realm_default_streams state, GET /streams' is_default; people who join the organization join them
(through an invitation link only when the link says so); an archived channel is no default."""

import pytest

from apps.invites.actions.invites import do_create_multiuse_invite
from apps.subscriptions.actions.channels import do_deactivate_stream, do_set_default_channel
from apps.subscriptions.models import Stream
from apps.subscriptions.selectors import subscribed_stream_ids
from apps.users.actions.create_user import do_create_user
from apps.users.models import BotType, User
from tests.api import ApiClient, assert_success
from tests.subscriptions.test_api import db_state, refused
from tests.web.conftest import browser, join_path, submit


@pytest.fixture
def lobby(make_stream, admin):
    return make_stream("lobby", admin)


def defaults(user) -> list[int]:
    state = assert_success(ApiClient(user).post("/register", {"fetch_event_types": '["default_streams"]'}))
    return state["realm_default_streams"]


def test_administrators_make_a_public_channel_default_and_everyone_but_guests_hears(
    lobby, admin, member, guest, capture_events
):
    with capture_events(member, guest, event_types=["default_streams"]) as received:
        assert_success(ApiClient(admin).post("/default_streams", {"stream_id": lobby.id}))
        assert_success(ApiClient(admin).post("/default_streams", {"stream_id": lobby.id}))  # already: nothing
    assert received == {member.id: [{"type": "default_streams", "default_streams": [lobby.id]}], guest.id: []}
    assert (defaults(member), defaults(guest)) == ([lobby.id], [])
    shown = assert_success(ApiClient(member).get("/streams", {"include_default": "true"}))["streams"]
    assert [(s["name"], s["is_default"]) for s in shown] == [("lobby", True)]
    assert_success(ApiClient(admin).delete("/default_streams", {"stream_id": lobby.id}))
    assert defaults(member) == []


def test_who_may_make_which_channel_default(lobby, make_stream, owner, admin, member, foreign_user, other_realm):
    secret = make_stream("secret", admin, private=True)
    theirs = make_stream("theirs", foreign_user, in_realm=other_realm)
    before = db_state()
    refused(ApiClient(member).post("/default_streams", {"stream_id": lobby.id}),
            "Must be an organization administrator", before, "UNAUTHORIZED_PRINCIPAL")  # fmt: skip
    refused(ApiClient(admin).post("/default_streams", {"stream_id": secret.id}),
            "Private channels cannot be made default.", before)  # fmt: skip
    for stream_id in (theirs.id, 987654):
        refused(ApiClient(admin).post("/default_streams", {"stream_id": stream_id}), "Invalid channel ID", before)
    # The member administers the channel they created, but only administrators choose default ones.
    assert_success(ApiClient(member).post("/users/me/subscriptions", {"subscriptions": '[{"name": "mine"}]'}))
    mine = Stream.objects.get(name="mine")
    before = db_state()
    refused(ApiClient(member).patch(f"/streams/{mine.id}", {"is_default_stream": "true"}),
            "Insufficient permission", before)  # fmt: skip


def test_a_default_channel_cannot_be_private(lobby, owner, admin):
    assert_success(ApiClient(admin).patch(f"/streams/{lobby.id}", {"is_default_stream": "true"}))
    before = db_state()
    refused(ApiClient(admin).patch(f"/streams/{lobby.id}", {"is_private": "true"}),
            "A default channel cannot be private.", before)  # fmt: skip
    created = {"subscriptions": '[{"name": "hush"}]', "is_default_stream": "true", "invite_only": "true"}
    refused(ApiClient(admin).post("/users/me/subscriptions", created), "A default channel cannot be private.", before)
    assert_success(ApiClient(admin).patch(f"/streams/{lobby.id}", {"is_default_stream": "false", "is_private": "true"}))


def test_a_channel_created_as_default_by_an_administrator(admin, member):
    made = {"subscriptions": '[{"name": "news"}]', "is_default_stream": "true"}
    assert_success(ApiClient(admin).post("/users/me/subscriptions", made))
    assert Stream.objects.get(name="news").is_default
    before = db_state()
    refused(ApiClient(member).post("/users/me/subscriptions", {**made, "subscriptions": '[{"name": "mine"}]'}),
            "Insufficient permission", before)  # fmt: skip


def test_people_who_join_join_the_default_channels_bots_do_not(lobby, realm, admin, make_stream):
    do_set_default_channel(lobby, True, acting_user=admin)
    person = do_create_user(realm, "new@example.com", "New Person", acting_user=None)
    bot = do_create_user(realm, "helper-bot@example.com", "Helper", bot_type=BotType.GENERIC, bot_owner=admin,
                         acting_user=None)  # fmt: skip
    assert list(subscribed_stream_ids(person)) == [lobby.id]
    assert list(subscribed_stream_ids(bot)) == []


@pytest.mark.parametrize("with_defaults", [True, False])
def test_an_invitation_link_says_whether_its_people_join_them(lobby, realm, admin, make_stream, with_defaults):
    design = make_stream("design", admin)
    do_set_default_channel(lobby, True, acting_user=admin)
    invite = do_create_multiuse_invite(realm, streams=[design], include_realm_default_subscriptions=with_defaults,
                                       acting_user=admin)  # fmt: skip
    form = {"email": "newbie@example.com", "full_name": "New Bie", "password": "a long enough passphrase 42"}
    assert submit(browser(), join_path(invite), form).status_code == 302
    user = User.objects.get(delivery_email="newbie@example.com")
    assert set(subscribed_stream_ids(user)) == ({design.id, lobby.id} if with_defaults else {design.id})


def test_an_archived_channel_is_no_default(lobby, admin, member, capture_events):
    do_set_default_channel(lobby, True, acting_user=admin)
    with capture_events(member, event_types=["default_streams"]) as received:
        do_deactivate_stream(lobby, acting_user=admin)
    assert received[member.id] == [{"type": "default_streams", "default_streams": []}]
    assert defaults(member) == []


def test_staff_choose_them_in_the_django_admin(staff, lobby, make_stream, admin):
    secret = make_stream("secret", admin, private=True)
    ids = [lobby.id, secret.id]
    staff.post("/admin/subscriptions/stream/", {"action": "make_default", "_selected_action": ids})
    assert list(Stream.objects.filter(is_default=True).values_list("name", flat=True)) == ["lobby"]  # public only
    assert "1 channel(s) are default channels." in staff.get("/admin/subscriptions/stream/").content.decode()
    staff.post("/admin/subscriptions/stream/", {"action": "remove_from_defaults", "_selected_action": ids})
    assert not Stream.objects.filter(is_default=True).exists()
