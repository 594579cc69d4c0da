"""The events channel changes send: their exact shapes, order and recipients."""

import functools
import json

import pytest

from apps.subscriptions.models import Stream
from apps.users.actions.create_user import do_create_user
from apps.users.models import Role
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory

# Events leave on commit: these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)

TYPES = ["stream", "subscription", "user_topic", "muted_topics"]


@pytest.fixture
def queue_of(queue_of):
    """The shared `queue_of`, registering for channel events unless told otherwise."""
    return functools.partial(queue_of, event_types=TYPES)


def kinds(events):
    return [(e["type"], e.get("op")) for e in events]


def subscribe(user, names, **params):
    return assert_success(
        ApiClient(user).post("/users/me/subscriptions", {"subscriptions": [{"name": n} for n in names], **params})
    )


def test_creating_a_public_channel_tells_everyone_who_can_see_it(queue_of, owner, admin, member, guest):
    mine, admins, guests = queue_of(member), queue_of(admin), queue_of(guest)
    subscribe(member, ["design"])
    stream = Stream.objects.get(name="design")

    events = mine()
    assert kinds(events) == [("stream", "create"), ("subscription", "add")]
    assert [s["name"] for s in events[0]["streams"]] == ["design"]
    [sub] = events[1]["subscriptions"]
    assert (sub["stream_id"], sub["subscribers"], sub["color"]) == (stream.id, [member.id], "#76ce90")

    events = admins()
    assert kinds(events) == [("stream", "create"), ("subscription", "peer_add")]
    assert (events[1]["stream_ids"], events[1]["user_ids"]) == ([stream.id], [member.id])
    assert guests() == []  # guests see only their own channels


def test_subscribing_many_users_sends_one_peer_event(queue_of, owner, admin, member, moderator, make_stream):
    stream = make_stream("design")
    watching = queue_of(owner)
    queues = {user.id: queue_of(user) for user in (admin, member, moderator)}
    subscribe(admin, ["design"], principals=[admin.id, member.id, moderator.id])

    assert watching() == [
        {
            "type": "subscription",
            "op": "peer_add",
            "stream_ids": [stream.id],
            "user_ids": sorted([admin.id, member.id, moderator.id]),
        }
    ]
    for user_id, events in queues.items():
        events = events()
        assert kinds(events) == [("subscription", "add")], user_id
        assert events[0]["subscriptions"][0]["subscribers"] == sorted([admin.id, member.id, moderator.id])


def test_private_channels_are_announced_only_to_those_who_can_see_them(
    queue_of, owner, admin, member, moderator, make_stream
):
    stream = make_stream("secret", owner, private=True)
    outsider, admins, joining = queue_of(moderator), queue_of(admin), queue_of(member)
    subscribe(owner, ["secret"], principals=[member.id])

    assert outsider() == []
    assert kinds(admins()) == [("subscription", "peer_add")]
    # The new subscriber could not see the channel: it is created for them, then they join it.
    events = joining()
    assert kinds(events) == [("stream", "create"), ("subscription", "add")]
    assert events[0]["streams"][0]["stream_id"] == stream.id


def test_a_guest_added_to_a_public_channel_is_told_it_exists(queue_of, owner, member, guest, make_stream):
    # Guests see only their own channels: before its subscription, the channel is created for the
    # guest (as for a private channel's new subscriber), as Zulip does.
    stream = make_stream("design", owner)
    guests = queue_of(guest)
    subscribe(member, ["design"], principals=[guest.id])
    events = guests()
    assert kinds(events) == [("stream", "create"), ("subscription", "add")]
    assert events[0]["streams"][0]["stream_id"] == stream.id


def test_joining_a_public_channel_tells_everyone_but_the_guests_outside_it(
    queue_of, owner, member, moderator, guest, bot, make_stream
):
    # Everyone sees a public channel but guests not subscribed to it: its peer_add goes to all the
    # organization's queues, bots' too, but those guests' and the joiner's (who has subscription/add).
    stream = make_stream("design", owner)
    inside = UserFactory(realm=owner.realm, role=Role.GUEST)
    make_stream("lobby", owner, inside)
    subscribe(owner, ["design"], principals=[inside.id])
    queues = {user: queue_of(user) for user in (owner, moderator, bot, inside, guest, member)}
    subscribe(member, ["design"])
    peer_add = {"type": "subscription", "op": "peer_add", "stream_ids": [stream.id], "user_ids": [member.id]}
    for user in (owner, moderator, bot, inside):
        assert queues[user]() == [peer_add], user
    assert queues[guest]() == []
    assert kinds(queues[member]()) == [("subscription", "add")]


def test_a_person_created_into_default_channels_is_announced_to_their_viewers(
    queue_of, owner, moderator, guest, make_stream
):
    stream = make_stream("lobby", owner, guest)
    make_stream("design", owner)
    Stream.objects.filter(name__in=["lobby", "design"]).update(is_default=True)
    design = Stream.objects.get(name="design")
    watching, guests = queue_of(moderator), queue_of(guest)
    person = do_create_user(owner.realm, "new@example.com", "New Person", acting_user=None)
    # One event per channel: the guest sees #lobby only.
    peer_add = {"type": "subscription", "op": "peer_add", "user_ids": [person.id]}
    assert watching() == [{**peer_add, "stream_ids": [stream.id]}, {**peer_add, "stream_ids": [design.id]}]
    assert guests() == [{**peer_add, "stream_ids": [stream.id]}]
    counts = dict(Stream.objects.filter(name__in=["lobby", "design"]).values_list("name", "subscriber_count"))
    assert counts == {"lobby": 3, "design": 2}
    joined = assert_success(ApiClient(person).get("/users/me/subscriptions", {"include_subscribers": True}))
    assert {s["name"]: s["subscribers"] for s in joined["subscriptions"]} == {
        "design": sorted([owner.id, person.id]),
        "lobby": sorted([owner.id, guest.id, person.id]),
    }


def test_unsubscribing_sends_remove_and_peer_remove(queue_of, owner, member, make_stream):
    stream = make_stream("design", owner, member)
    mine, others = queue_of(member), queue_of(owner)
    body = assert_success(ApiClient(member).delete("/users/me/subscriptions", {"subscriptions": ["design"]}))
    assert body["removed"] == ["design"]
    assert mine() == [
        {"type": "subscription", "op": "remove", "subscriptions": [{"stream_id": stream.id, "name": "design"}]}
    ]
    assert others() == [
        {"type": "subscription", "op": "peer_remove", "stream_ids": [stream.id], "user_ids": [member.id]}
    ]


def test_leaving_a_channel_one_can_no_longer_see_deletes_it_for_them(
    queue_of, owner, admin, member, guest, make_stream
):
    """As Zulip's bulk_remove_subscriptions: a guest leaving a public channel, or a member leaving
    a private one, can no longer see it at all: stream/delete after subscription/remove. Those
    who still see it (a member leaving a public channel, an administrator a private one) do not."""
    public = make_stream("design", owner, member, guest)
    secret = make_stream("secret", owner, member, admin, private=True)
    guests, members, admins = queue_of(guest), queue_of(member), queue_of(admin)
    ApiClient(owner).delete("/users/me/subscriptions", {"subscriptions": ["design"], "principals": [guest.id]})
    ApiClient(owner).delete(
        "/users/me/subscriptions", {"subscriptions": ["design", "secret"], "principals": [member.id, admin.id]}
    )

    events = guests()
    assert kinds(events) == [("subscription", "remove"), ("stream", "delete")]
    # `streams` as Zulip's since feature level 343 (the wire-conformance QA pass: whole channels).
    assert (events[1]["stream_ids"], events[1]["streams"]) == ([public.id], [{"stream_id": public.id}])
    events = members()
    assert kinds(events) == [
        ("subscription", "peer_remove"),  # the guest left #design
        ("subscription", "remove"),
        ("stream", "delete"),
    ]
    assert {s["stream_id"] for s in events[1]["subscriptions"]} == {public.id, secret.id}
    assert events[2]["stream_ids"] == [secret.id]
    assert ("stream", "delete") not in kinds(admins())
    # Gone for them, as for anyone who cannot see it.
    assert ApiClient(member).get(f"/streams/{secret.id}").json()["result"] == "error"


def test_muting_sends_two_updates_in_zulips_order(queue_of, member, make_stream):
    stream = make_stream("design", member)
    events = queue_of(member)
    assert_success(
        ApiClient(member).patch(f"/users/me/subscriptions/{stream.id}", {"property": "is_muted", "value": True})
    )
    assert events() == [
        {"type": "subscription", "op": "update", "stream_id": stream.id, "property": "in_home_view", "value": False},
        {"type": "subscription", "op": "update", "stream_id": stream.id, "property": "is_muted", "value": True},
    ]
    assert_success(
        ApiClient(member).patch(f"/users/me/subscriptions/{stream.id}", {"property": "color", "value": "#abc"})
    )
    assert events() == [
        {"type": "subscription", "op": "update", "stream_id": stream.id, "property": "color", "value": "#aabbcc"}
    ]


def test_null_notification_settings_only_for_clients_that_take_them(queue_of, member, make_stream):
    """Others get the user's enable_stream_* settings for the four (Zulip's
    handle_stream_notifications_compatibility; wildcard_mentions_notify stays null): the channels
    QA pass (they got fixed defaults, wildcard_mentions_notify true)."""
    make_stream("design")
    make_stream("kitchen")
    assert_success(ApiClient(member).patch("/settings", {"enable_stream_push_notifications": "true"}))
    legacy = queue_of(member)
    modern = queue_of(member, client_capabilities={"notification_settings_null": True})
    subscribe(member, ["design"])
    [old_event], [new_event] = legacy(), modern()
    assert "notification_fallbacks" not in {**old_event, **new_event}
    [old], [new] = old_event["subscriptions"], new_event["subscriptions"]
    keys = ("desktop_notifications", "push_notifications", "wildcard_mentions_notify")
    assert [old[key] for key in keys] == [False, True, None]
    assert [new[key] for key in keys] == [None, None, None]
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": '["subscription"]'}))
    [registered] = state["subscriptions"]
    assert [registered[key] for key in keys] == [False, True, None]


def test_topic_policy_events_and_the_legacy_muted_topics(queue_of, member, make_stream):
    stream = make_stream("design", member)
    both = queue_of(member, event_types=["user_topic", "muted_topics"])
    legacy_only = queue_of(member, event_types=["muted_topics"])
    everything = queue_of(member, event_types=None)
    api = ApiClient(member)
    assert_success(api.post("/user_topics", {"stream_id": stream.id, "topic": "lunch", "visibility_policy": 1}))

    [event] = both()
    assert event["type"] == "user_topic"
    assert (event["stream_id"], event["topic_name"], event["visibility_policy"]) == (stream.id, "lunch", 1)
    [legacy] = legacy_only()
    assert legacy["type"] == "muted_topics"
    assert [row[:2] for row in legacy["muted_topics"]] == [["design", "lunch"]]
    assert [e["type"] for e in everything()] == ["muted_topics", "user_topic"]

    # Setting what is set changes nothing; 0 removes the policy.
    assert_success(api.post("/user_topics", {"stream_id": stream.id, "topic": "lunch", "visibility_policy": 1}))
    assert both() == []
    assert_success(api.post("/user_topics", {"stream_id": stream.id, "topic": "LUNCH", "visibility_policy": 0}))
    [event] = both()
    assert (event["topic_name"], event["visibility_policy"]) == ("lunch", 0)


def test_channel_changes_reach_those_who_see_the_channel(queue_of, owner, admin, member, guest, make_stream):
    stream = make_stream("design", member)
    members, guests = queue_of(owner), queue_of(guest)
    api = ApiClient(admin)
    assert_success(api.patch(f"/streams/{stream.id}", {"description": "**Bold** plans"}))
    assert_success(api.patch(f"/streams/{stream.id}", {"new_name": "Design"}))
    events = members()
    assert events[0] == {
        "type": "stream",
        "op": "update",
        "stream_id": stream.id,
        "name": "design",
        "property": "description",
        "value": "**Bold** plans",
        "rendered_description": "<p><strong>Bold</strong> plans</p>",
    }
    assert (events[1]["property"], events[1]["name"], events[1]["value"]) == ("name", "design", "Design")
    assert_success(api.delete(f"/streams/{stream.id}"))
    [archived] = members()
    assert (archived["op"], archived["stream_ids"]) == ("delete", [stream.id])
    assert guests() == []


KNOWS_ARCHIVED_CHANNELS = {"client_capabilities": json.dumps({"archived_channels": True})}


def test_clients_that_know_archived_channels_keep_them(queue_of, admin, member, make_stream):
    """Zulip's archived_channels capability (the wire-conformance QA pass: ignored, such clients were
    told to forget an archived channel and never listed one): stream/update {is_archived} instead
    of stream/delete and, back from the archive, instead of stream/create and the subscriptions;
    POST /register lists archived channels, marked, with their subscriptions."""
    stream = make_stream("design", member, admin)
    api = ApiClient(admin)
    knowing, unknowing = queue_of(member, **KNOWS_ARCHIVED_CHANNELS), queue_of(member)
    assert_success(api.delete(f"/streams/{stream.id}"))
    update = {"type": "stream", "op": "update", "stream_id": stream.id, "name": "design", "property": "is_archived"}
    assert knowing() == [{**update, "value": True}]
    # Zulip's marks of archiving (for_archiving, for_unarchiving) say which queues show an event,
    # and never reach a client (the verification QA pass: they did).
    assert unknowing() == [{"type": "stream", "op": "delete", "streams": [{"stream_id": stream.id}],
                            "stream_ids": [stream.id]}]  # fmt: skip

    def listed(state: dict) -> tuple:
        return tuple(
            [(s["stream_id"], s["is_archived"]) for s in state[key] if s["stream_id"] == stream.id]
            for key in ("streams", "subscriptions")
        )

    fetch = {"fetch_event_types": json.dumps(["stream", "subscription"])}
    knowing_state = assert_success(ApiClient(member).post("/register", {**fetch, **KNOWS_ARCHIVED_CHANNELS}))
    assert listed(knowing_state) == ([(stream.id, True)], [(stream.id, True)])
    assert listed(assert_success(ApiClient(member).post("/register", fetch))) == ([], [])

    assert_success(api.patch(f"/streams/{stream.id}", {"is_archived": "false"}))
    assert knowing() == [{**update, "value": False}]
    created, added = unknowing()
    assert (created["op"], added["op"]) == ("create", "add")
    assert "for_unarchiving" not in created
    assert "for_unarchiving" not in added


def test_unarchiving_a_channel_tells_those_who_see_it_again(queue_of, owner, admin, member, guest, make_stream):
    # Archiving told their clients to forget the channel (stream/delete): they learn it once more,
    # its subscribers their subscription too, the others who is in it.
    stream = make_stream("design", member, admin)
    api = ApiClient(admin)
    assert_success(api.delete(f"/streams/{stream.id}"))
    subscriber, outsider, guests = queue_of(member), queue_of(owner), queue_of(guest)
    assert_success(api.patch(f"/streams/{stream.id}", {"is_archived": "false"}))
    created, added = subscriber()
    assert (created["op"], [s["stream_id"] for s in created["streams"]]) == ("create", [stream.id])
    assert created["streams"][0]["is_archived"] is False
    assert (added["type"], added["op"]) == ("subscription", "add")
    [sub] = added["subscriptions"]
    assert (sub["stream_id"], sorted(sub["subscribers"])) == (stream.id, sorted([member.id, admin.id]))
    created, peers = outsider()
    assert (created["op"], [s["stream_id"] for s in created["streams"]]) == ("create", [stream.id])
    assert (peers["op"], peers["stream_ids"], peers["user_ids"]) == (
        "peer_add",
        [stream.id],
        sorted([member.id, admin.id]),
    )
    assert guests() == []


def test_making_a_channel_private_hides_it_from_outsiders(queue_of, owner, admin, member, moderator, make_stream):
    stream = make_stream("design", member, admin)  # changing privacy needs access to the content
    outsider, insider = queue_of(moderator), queue_of(member)
    assert_success(ApiClient(admin).patch(f"/streams/{stream.id}", {"is_private": True}))
    assert kinds(outsider()) == [("stream", "delete")]
    [update] = insider()
    assert (update["property"], update["value"], update["history_public_to_subscribers"]) == (
        "invite_only",
        True,
        False,
    )
    assert_success(ApiClient(admin).patch(f"/streams/{stream.id}", {"is_private": False}))
    # Visible again: created, with its subscribers (the outsider's client knows nobody in it), as Zulip does.
    events = outsider()
    assert kinds(events) == [("stream", "create"), ("subscription", "peer_add"), ("stream", "update")]
    assert (events[1]["stream_ids"], events[1]["user_ids"]) == ([stream.id], sorted([member.id, admin.id]))


def test_a_group_setting_that_shows_a_private_channel_sends_its_subscribers(
    queue_of, owner, member, moderator, make_stream
):
    stream = make_stream("secret", owner, member, private=True)
    newcomer = queue_of(moderator)
    value = {"new": {"direct_members": [moderator.id], "direct_subgroups": []}}
    assert_success(ApiClient(owner).patch(f"/streams/{stream.id}", {"can_subscribe_group": value}))
    events = newcomer()
    assert kinds(events) == [("stream", "create"), ("subscription", "peer_add"), ("stream", "update")]
    assert (events[1]["stream_ids"], events[1]["user_ids"]) == ([stream.id], sorted([owner.id, member.id]))


def test_refused_changes_send_nothing(queue_of, owner, member, moderator, make_stream):
    stream = make_stream("design", owner, member)
    watching = queue_of(owner)
    api = ApiClient(moderator)
    response = api.delete("/users/me/subscriptions", {"subscriptions": ["design"], "principals": [member.id]})
    assert response.status_code == 400
    response = api.patch(f"/streams/{stream.id}", {"new_name": "taken over"})
    assert response.status_code == 400
    assert watching() == []


def test_register_state_of_channels(queue_of, owner, member, guest, make_stream):
    joined = make_stream("joined", member)
    left = make_stream("left", member)
    make_stream("secret", owner, private=True)
    make_stream("gone", owner, member, private=True)  # a private channel they leave: no longer theirs to see
    public = make_stream("public")
    assert_success(ApiClient(member).delete("/users/me/subscriptions", {"subscriptions": ["left", "gone"]}))
    state = assert_success(
        ApiClient(member).post(
            "/register", {"fetch_event_types": ["subscription", "stream"], "include_subscribers": "true"}
        )
    )
    assert [s["stream_id"] for s in state["subscriptions"]] == [joined.id]
    assert state["subscriptions"][0]["subscribers"] == [member.id]
    assert [s["stream_id"] for s in state["unsubscribed"]] == [left.id]
    assert [s["stream_id"] for s in state["never_subscribed"]] == [public.id]
    assert sorted(s["name"] for s in state["streams"]) == ["joined", "left", "public"]
    # The stream state alone is the same as beside the subscription state (they share one read).
    alone = assert_success(ApiClient(member).post("/register", {"fetch_event_types": ["stream"]}))
    assert alone["streams"] == state["streams"]
    guest_state = assert_success(ApiClient(guest).post("/register", {"fetch_event_types": ["subscription", "stream"]}))
    assert (guest_state["subscriptions"], guest_state["never_subscribed"], guest_state["streams"]) == ([], [], [])


def test_group_membership_changes_show_and_hide_the_private_channels_the_group_opens(
    queue_of, owner, member, moderator, make_stream
):
    # moderator joins "leads", a subgroup of "devs", the channel's can_subscribe_group: Zulip tells
    # them the channel exists (with its subscribers); leaving the group takes it away again.
    stream = make_stream("secret", owner, member, private=True)
    api = ApiClient(owner)

    devs = assert_success(api.post("/user_groups/create", {"name": "devs", "description": "", "members": []}))[
        "group_id"
    ]
    leads = assert_success(api.post("/user_groups/create", {"name": "leads", "description": "", "members": []}))[
        "group_id"
    ]
    assert_success(api.patch(f"/streams/{stream.id}", {"can_subscribe_group": {"new": devs}}))
    newcomer = queue_of(moderator, event_types=[*TYPES, "user_group"])

    assert_success(api.post(f"/user_groups/{devs}/subgroups", {"add": [leads]}))
    assert kinds(newcomer()) == [("user_group", "add_subgroups")]  # leads is empty: nothing changes
    assert_success(api.post(f"/user_groups/{leads}/members", {"add": [moderator.id]}))
    events = newcomer()
    assert kinds(events) == [("user_group", "add_members"), ("stream", "create"), ("subscription", "peer_add")]
    assert [s["stream_id"] for s in events[1]["streams"]] == [stream.id]
    assert (events[2]["stream_ids"], events[2]["user_ids"]) == ([stream.id], sorted([owner.id, member.id]))

    assert_success(api.post(f"/user_groups/{devs}/subgroups", {"delete": [leads]}))
    events = newcomer()
    assert kinds(events) == [("user_group", "remove_subgroups"), ("stream", "delete")]
    assert events[1]["stream_ids"] == [stream.id]
    assert_success(api.post(f"/user_groups/{devs}/members", {"add": [moderator.id]}))
    assert kinds(newcomer()) == [("user_group", "add_members"), ("stream", "create"), ("subscription", "peer_add")]
    assert_success(api.post(f"/user_groups/{devs}/members", {"delete": [moderator.id]}))
    assert kinds(newcomer()) == [("user_group", "remove_members"), ("stream", "delete")]


def test_group_membership_changes_send_no_channel_events_to_those_who_saw_it_anyway(
    queue_of, owner, admin, member, make_stream
):
    stream = make_stream("secret", owner, member, private=True)
    api = ApiClient(owner)
    devs = assert_success(api.post("/user_groups/create", {"name": "devs", "description": "", "members": []}))[
        "group_id"
    ]
    assert_success(api.patch(f"/streams/{stream.id}", {"can_administer_channel_group": {"new": devs}}))
    queues = [queue_of(user, event_types=[*TYPES, "user_group"]) for user in (admin, member)]
    assert_success(api.post(f"/user_groups/{devs}/members", {"add": [admin.id, member.id]}))
    for events in queues:  # an administrator and a subscriber saw it already
        assert kinds(events()) == [("user_group", "add_members")]


def test_a_role_change_shows_and_hides_channels_as_zulip_does(queue_of, owner, admin, member, make_stream):
    open_channel = make_stream("design", owner)
    joined = make_stream("lunch", owner, member)
    secret = make_stream("secret", owner, private=True)
    mine = queue_of(member)
    api = ApiClient(owner)

    assert_success(api.patch(f"/users/{member.id}", {"role": 600}))  # a guest sees only their channels
    events = mine()
    assert kinds(events) == [("stream", "delete")]
    assert events[0]["stream_ids"] == [open_channel.id]

    assert_success(api.patch(f"/users/{member.id}", {"role": 200}))  # an administrator sees every channel
    events = mine()
    assert kinds(events) == [("stream", "create"), ("subscription", "peer_add"), ("subscription", "peer_add")]
    assert sorted(s["stream_id"] for s in events[0]["streams"]) == sorted([open_channel.id, secret.id])
    assert {e["stream_ids"][0]: e["user_ids"] for e in events[1:]} == {
        open_channel.id: [owner.id],
        secret.id: [owner.id],
    }

    assert_success(api.patch(f"/users/{member.id}", {"role": 400}))
    events = mine()
    assert kinds(events) == [("stream", "delete")]
    assert events[0]["stream_ids"] == [secret.id]
    assert joined.id not in {e.get("stream_ids", [None])[0] for e in events}


def test_deactivating_a_user_takes_them_out_of_subscriber_lists_and_reactivating_puts_them_back(
    queue_of, owner, admin, member, bot, make_stream
):
    # Subscriber lists (register state, GET /streams/{id}/members) hold active users only; clients
    # keep theirs in step through peer_remove and peer_add, as Zulip sends them.
    design = make_stream("design", owner, member, bot)
    make_stream("archived", owner, member)
    Stream.objects.filter(name="archived").update(deactivated=True)
    watching = queue_of(admin)
    assert_success(ApiClient(owner).delete(f"/users/{member.id}"))  # with the bot they own
    events = [e for e in watching() if e["type"] == "subscription"]
    assert events == [
        {
            "type": "subscription",
            "op": "peer_remove",
            "stream_ids": [design.id],
            "user_ids": sorted([member.id, bot.id]),
        }
    ]
    members = assert_success(ApiClient(owner).get(f"/streams/{design.id}/members"))["subscribers"]
    assert members == [owner.id]

    assert_success(ApiClient(owner).post(f"/users/{member.id}/reactivate"))
    events = [e for e in watching() if e["type"] == "subscription"]
    assert events == [{"type": "subscription", "op": "peer_add", "stream_ids": [design.id], "user_ids": [member.id]}]
