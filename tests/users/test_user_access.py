"""What guests see of people: the organization's can_access_all_users_group (Zulip's). At role:members
a guest sees themselves, bots, and the people they share a channel or a direct message conversation
with; the others are unknown users to them, in lists, lookups, direct messages, presence and events."""

import pytest

from apps.groups.models import SystemGroups
from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions, bulk_remove_subscriptions
from apps.subscriptions.models import Stream
from apps.users.access import INACCESSIBLE_USER_NAME, MEMBERS_GROUP
from apps.users.actions.create_user import do_create_user
from apps.users.actions.user_settings import do_change_full_name
from apps.users.selectors import api_email
from tests.api import api_for, assert_error, assert_success
from tests.factories import UserFactory, create_stream
from tests.messages.conftest import db_state, post_message

NO_ACCESS = "You do not have permission to access some of the recipients."


@pytest.fixture
def limited(realm, sys_groups, admin):
    """The organization limits what guests see."""
    members = sys_groups[SystemGroups.MEMBERS].id
    assert_success(api_for(admin).patch("/realm", {"can_access_all_users_group": {"new": members}}))
    realm.refresh_from_db()  # (the people made after this use it, as a request's would)
    return realm


@pytest.fixture
def stranger(realm):
    return UserFactory(realm=realm, full_name="Stranger Danger")


@pytest.fixture
def channelmate(realm, make_stream, guest):
    person = UserFactory(realm=realm, full_name="Channel Mate")
    make_stream("shared", guest, person)
    return person


def register_users(user, **params):
    state = assert_success(api_for(user).post("/register", {"fetch_event_types": ["realm_user"], **params}))
    return {person["user_id"]: person for person in state["realm_users"]}


def test_the_setting_takes_everyone_or_members_only(realm, sys_groups, admin, make_group, member):
    api = api_for(admin)
    state = assert_success(api.post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_can_access_all_users_group"] == sys_groups[SystemGroups.EVERYONE].id
    assert MEMBERS_GROUP == SystemGroups.MEMBERS  # (what apps.users.access reads by name)
    friends = make_group(admin, "Friends", members=[member]).id
    before = db_state()
    refusal = "'can_access_all_users_group' setting cannot be set to '{}' group."
    system_only = "'can_access_all_users_group' must be a system user group."
    for value, msg in [
        (sys_groups[SystemGroups.ADMINISTRATORS].id, refusal.format(SystemGroups.ADMINISTRATORS)),
        (sys_groups[SystemGroups.NOBODY].id, refusal.format(SystemGroups.NOBODY)),
        (friends, system_only),
        ({"direct_members": [member.id], "direct_subgroups": []}, system_only),
    ]:
        assert_error(api.patch("/realm", {"can_access_all_users_group": {"new": value}}), 400, "BAD_REQUEST", msg)
    assert db_state() == before
    members = sys_groups[SystemGroups.MEMBERS].id
    assert_success(api.patch("/realm", {"can_access_all_users_group": {"new": members}}))
    state = assert_success(api.post("/register", {"fetch_event_types": ["realm"]}))
    assert state["realm_can_access_all_users_group"] == members


def test_by_default_guests_see_everyone(realm, guest, stranger):
    assert register_users(guest)[stranger.id]["full_name"] == "Stranger Danger"
    assert_success(api_for(guest).get(f"/users/{stranger.id}"))


def test_a_limited_guest_sees_others_as_unknown_users(limited, guest, stranger, channelmate, bot, member):
    people = register_users(guest)
    assert people[channelmate.id]["full_name"] == "Channel Mate"
    assert people[bot.id]["full_name"] == bot.full_name
    assert people[guest.id]["full_name"] == guest.full_name
    unknown = people[stranger.id]
    assert unknown["full_name"] == INACCESSIBLE_USER_NAME
    assert stranger.delivery_email not in str(unknown)
    assert unknown["email"] == f"user{stranger.id}@{unknown['email'].split('@')[1]}"
    assert unknown["avatar_url"].endswith("unknown-user-avatar.png")
    # With Zulip's user_list_incomplete capability they are left out.
    people = register_users(guest, client_capabilities={"user_list_incomplete": True})
    assert stranger.id not in people
    assert channelmate.id in people
    # GET /users the same; members still see everyone.
    members = assert_success(api_for(guest).get("/users"))["members"]
    assert {m["user_id"]: m["full_name"] for m in members}[stranger.id] == INACCESSIBLE_USER_NAME
    assert register_users(member)[stranger.id]["full_name"] == "Stranger Danger"


def test_a_limited_guest_cannot_look_up_or_message_others(limited, guest, stranger, channelmate):
    api = api_for(guest)
    assert_error(api.get(f"/users/{stranger.id}"), 400, "BAD_REQUEST", "Insufficient permission")
    assert_error(api.get(f"/users/{stranger.delivery_email}"), 400, "BAD_REQUEST", "Insufficient permission")
    assert_success(api.get(f"/users/{channelmate.id}"))
    before = db_state()
    for to in ([stranger.id], [stranger.delivery_email], [channelmate.id, stranger.id]):
        response = post_message(guest, type="private", to=to, content="hi")
        assert_error(response, 400, "BAD_REQUEST", NO_ACCESS)
    assert db_state() == before
    assert_success(post_message(guest, type="private", to=[channelmate.id], content="hi"))


def test_a_direct_message_conversation_gives_access(limited, guest, stranger, member):
    assert_error(api_for(guest).get(f"/users/{stranger.id}"), 400, "BAD_REQUEST", "Insufficient permission")
    assert_success(post_message(stranger, type="private", to=[guest.id], content="welcome"))
    assert_success(api_for(guest).get(f"/users/{stranger.id}"))
    assert register_users(guest)[stranger.id]["full_name"] == "Stranger Danger"
    # A group conversation too.
    assert_success(post_message(member, type="private", to=[guest.id, stranger.id], content="all of us"))
    assert register_users(guest)[member.id]["full_name"] == member.full_name


def test_events_about_others_do_not_reach_a_limited_guest(
    limited, guest, stranger, channelmate, capture_events, member
):
    with capture_events(guest, member) as received:
        do_change_full_name(stranger, "Renamed Stranger", acting_user=stranger)
        do_change_full_name(channelmate, "Renamed Mate", acting_user=channelmate)
    names = [
        (e["person"]["user_id"], e["person"].get("full_name")) for e in received[guest.id] if e["type"] == "realm_user"
    ]
    assert names == [(channelmate.id, "Renamed Mate")]
    assert len([e for e in received[member.id] if e["type"] == "realm_user"]) == 2


def test_presence_and_status_of_others_are_hidden_from_a_limited_guest(limited, guest, stranger, channelmate, bot):
    for person in (stranger, channelmate):
        assert_success(api_for(person).post("/users/me/presence", {"status": "active", "slim_presence": "true"}))
        assert_success(api_for(person).post("/users/me/status", {"status_text": "busy"}))
    assert_success(api_for(bot).post("/users/me/status", {"status_text": "on duty"}))  # every bot is seen
    state = assert_success(
        api_for(guest).post("/register", {"fetch_event_types": ["presence", "user_status"], "slim_presence": "true"})
    )
    assert set(state["presences"]) == {str(channelmate.id)}
    assert set(state["user_status"]) == {str(channelmate.id), str(bot.id)}
    presences = assert_success(api_for(guest).get("/realm/presence", {"slim_presence": "true"}))["presences"]
    assert set(presences) == {channelmate.delivery_email}
    ask = api_for(guest)
    assert_success(ask.get(f"/users/{channelmate.id}/presence"))
    for named in (stranger.id, api_email(stranger)):  # as /users/{id}/status answers, and Zulip
        assert_error(ask.get(f"/users/{named}/presence"), 400, "BAD_REQUEST", "Insufficient permission")
    assert_error(ask.get(f"/users/{stranger.id}/status"), 400, "BAD_REQUEST", "Insufficient permission")


def test_a_limited_guest_is_told_of_people_as_they_come_and_go(
    limited, guest, stranger, member, make_stream, capture_events
):
    stream = make_stream("new", stranger)
    with capture_events(guest, member) as received:
        bulk_add_subscriptions(limited, [stream], [guest], acting_user=None)
    added = [e for e in received[guest.id] if e["type"] == "realm_user"]
    assert [(e["op"], e["person"]["user_id"], e["person"]["full_name"]) for e in added] == [
        ("add", stranger.id, "Stranger Danger")
    ]
    assert not [e for e in received[member.id] if e["type"] == "realm_user"]
    assert register_users(guest)[stranger.id]["full_name"] == "Stranger Danger"
    with capture_events(guest) as received:
        bulk_remove_subscriptions(limited, [stranger], [stream], acting_user=None)
    assert [e for e in received[guest.id] if e["type"] == "realm_user"] == [
        {"type": "realm_user", "op": "remove", "person": {"user_id": stranger.id, "full_name": INACCESSIBLE_USER_NAME}}
    ]
    assert register_users(guest)[stranger.id]["full_name"] == INACCESSIBLE_USER_NAME
    # A first direct message introduces its sender before it arrives.
    with capture_events(guest) as received:
        assert_success(post_message(stranger, type="private", to=[guest.id], content="hello"))
    assert [(e["type"], e.get("op")) for e in received[guest.id]][:2] == [("realm_user", "add"), ("message", None)]
    assert received[guest.id][0]["person"]["full_name"] == "Stranger Danger"


def test_messages_of_people_a_limited_guest_may_not_see_are_from_an_unknown_user(
    limited, guest, stranger, channelmate, capture_events
):
    shared = Stream.objects.get(name="shared")
    with capture_events(guest, channelmate) as received:
        # From outside the channel (a public one takes messages from anyone), then from inside.
        assert_success(post_message(stranger, type="stream", to=shared.id, topic="t", content="from outside"))
        assert_success(post_message(channelmate, type="stream", to=shared.id, topic="t", content="from inside"))
    messages = {
        user_id: [e["message"] for e in events if e["type"] == "message"] for user_id, events in received.items()
    }
    senders = [(m["sender_id"], m["sender_full_name"]) for m in messages[guest.id]]
    assert senders == [(stranger.id, INACCESSIBLE_USER_NAME), (channelmate.id, "Channel Mate")]
    assert messages[guest.id][0]["avatar_url"].endswith("unknown-user-avatar.png")
    assert stranger.delivery_email not in str(received[guest.id])
    assert messages[channelmate.id][0]["sender_full_name"] == "Stranger Danger"
    api = api_for(guest)
    found = assert_success(api.get("/messages", {"anchor": "newest", "num_before": 10, "num_after": 0}))["messages"]
    assert [(m["sender_id"], m["sender_full_name"]) for m in found] == senders
    one = assert_success(api.get(f"/messages/{found[0]['id']}"))["message"]
    assert (one["sender_full_name"], one["sender_email"]) == (INACCESSIBLE_USER_NAME, found[0]["sender_email"])
    assert stranger.delivery_email not in str(found)


def test_a_person_made_is_an_unknown_user_to_a_limited_guest(limited, guest, member, capture_events, sys_groups):
    with capture_events(guest, member) as received:
        made = do_create_user(limited, "newbie@example.com", "New Bie", acting_user=None)
    [added] = [e for e in received[guest.id] if e["type"] == "realm_user"]
    assert added["op"] == "add"
    assert "inaccessible_user" not in added  # the server's mark, not the client's (as Zulip)
    assert added["person"]["full_name"] == INACCESSIBLE_USER_NAME
    assert "newbie" not in str(added)
    assert [e["person"]["full_name"] for e in received[member.id] if e["type"] == "realm_user"] == ["New Bie"]
    # Clients that leave unknown users out are not told.
    with capture_events(guest, client_capabilities={"user_list_incomplete": True}) as received:
        do_create_user(limited, "other@example.com", "Other One", acting_user=None)
    assert not [e for e in received[guest.id] if e["type"] == "realm_user"]
    assert made.id


def test_a_limited_guest_hears_of_a_new_channelmate_before_they_are_named_a_subscriber(
    limited, guest, stranger, capture_events
):
    room = create_stream(limited, "room", guest)
    with capture_events(guest) as received:
        bulk_add_subscriptions(limited, [room], [stranger], acting_user=None)
    kinds = [(e["type"], e.get("op")) for e in received[guest.id]]
    assert kinds.index(("realm_user", "add")) < kinds.index(("subscription", "peer_add"))


def test_typing_reactions_mentions_and_pictures_of_hidden_people(limited, guest, stranger, channelmate, capture_events):
    # A guest cannot type to someone hidden; someone hidden typing to them is an unknown user.
    refused = api_for(guest).post("/typing", {"op": "start", "to": f"[{stranger.id}]"})
    assert_error(refused, 400, "BAD_REQUEST", NO_ACCESS)
    with capture_events(guest) as received:
        assert_success(api_for(stranger).post("/typing", {"op": "start", "to": f"[{guest.id}]"}))
    [typing] = received[guest.id]
    assert typing["sender"] == {"user_id": stranger.id, "email": typing["sender"]["email"]}
    assert stranger.delivery_email not in str(typing)
    # Reactions from someone hidden (reacting to a channel message from outside it).
    shared = Stream.objects.get(name="shared")
    message_id = assert_success(post_message(channelmate, type="stream", to=shared.id, topic="t", content="hi"))["id"]
    with capture_events(guest, channelmate) as received:
        assert_success(api_for(stranger).post(f"/messages/{message_id}/reactions", {"emoji_name": "tada"}))
    [reaction] = [e for e in received[guest.id] if e["type"] == "reaction"]
    assert reaction["user"]["full_name"] == INACCESSIBLE_USER_NAME
    assert stranger.delivery_email not in str(reaction)
    assert [e["user"]["full_name"] for e in received[channelmate.id] if e["type"] == "reaction"] == ["Stranger Danger"]
    # A guest's mention of someone hidden stays text (no id, no name confirmed, nobody notified).
    rendered = assert_success(
        api_for(guest).post("/messages/render", {"content": "@**Stranger Danger** and @**Channel Mate**"})
    )["rendered"]
    assert f'data-user-id="{stranger.id}"' not in rendered
    assert f'data-user-id="{channelmate.id}"' in rendered
    # Their picture is the unknown user's.
    client = api_for(guest)
    picture = client.client.get(f"/avatar/{stranger.id}", **client.headers)
    assert picture.status_code == 302
    assert picture["Location"].endswith("unknown-user-avatar.png")
