"""Who may unsubscribe others and administer channels (roles, bots, group settings through nested
subgroups), private channels that do not exist for outsiders, organizations that never see each
other, and concurrent subscription changes of one user."""

import pytest
from django.conf import settings

from apps.groups.actions.groups import check_add_user_group
from apps.groups.models import SystemGroups
from apps.groups.selectors import system_groups
from apps.groups.serializers import AnonymousGroupValue, GroupSettingChange
from apps.subscriptions.actions.channel_settings import do_change_stream_group_setting
from apps.subscriptions.models import Stream, Subscription, UserTopic
from apps.users.models import Role
from tests.api import ApiClient, assert_error, assert_success
from tests.concurrency import at_once
from tests.factories import BotFactory, UserFactory

INSUFFICIENT = "Insufficient permission"
CANNOT_ADMINISTER = "You do not have permission to administer this channel."
NOT_ADMIN = "CANNOT_ADMINISTER_CHANNEL"


def db_state() -> dict:
    return {
        "streams": list(Stream.objects.order_by("id").values()),
        "subscriptions": list(Subscription.objects.order_by("id").values()),
        "user_topics": list(UserTopic.objects.order_by("id").values()),
    }


def unsubscribe(user, names, principals=None):
    params = {"subscriptions": names}
    if principals is not None:
        params["principals"] = principals
    return ApiClient(user).delete("/users/me/subscriptions", params)


def set_setting(stream, name, value, acting_user):
    do_change_stream_group_setting(stream, name, GroupSettingChange(new=value, old=None), acting_user=acting_user)


def active(user, stream) -> bool:
    return Subscription.objects.filter(user=user, stream=stream, active=True).exists()


@pytest.fixture
def target(realm):
    """A member the tests try to remove."""
    return UserFactory(realm=realm, role=Role.MEMBER, full_name="Tess Target")


@pytest.fixture
def design(make_stream, target, member, moderator, guest, bot):
    """A public channel with no creator, everyone in it."""
    return make_stream("design", target, member, moderator, guest, bot)


# --- unsubscribing others -------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["member", "guest", "moderator", "bot"])
def test_unsubscribe_self_is_always_allowed(request, design, who):
    user = request.getfixturevalue(who)
    assert assert_success(unsubscribe(user, ["design"], [user.id]))["removed"] == ["design"]
    assert not active(user, design)


def test_unsubscribe_own_bot_is_allowed(member, bot, design):
    assert assert_success(unsubscribe(member, ["design"], [bot.id]))["removed"] == ["design"]
    assert not active(bot, design)


def test_unsubscribe_someone_elses_bot_is_refused(moderator, bot, design):
    before = db_state()
    assert_error(unsubscribe(moderator, ["design"], [bot.id]), 400, "BAD_REQUEST", INSUFFICIENT)
    assert db_state() == before


@pytest.mark.parametrize("who", ["admin", "owner"])
def test_unsubscribe_others_as_administrator(request, design, target, who):
    user = request.getfixturevalue(who)
    assert assert_success(unsubscribe(user, ["design"], [target.id]))["removed"] == ["design"]
    assert not active(target, design)


@pytest.mark.parametrize("who", ["member", "moderator", "guest", "bot"])
def test_unsubscribe_others_without_permission_is_refused(request, design, target, who):
    user = request.getfixturevalue(who)
    before = db_state()
    assert_error(unsubscribe(user, ["design"], [target.id]), 400, "BAD_REQUEST", INSUFFICIENT)
    assert_error(unsubscribe(user, ["design"], [user.id, target.id]), 400, "BAD_REQUEST", INSUFFICIENT)
    assert db_state() == before


def test_unsubscribe_others_as_member_of_can_remove_subscribers_group(realm, admin, member, target, design):
    team = check_add_user_group(realm, "team", [member.id], acting_user=admin)
    set_setting(design, "can_remove_subscribers_group", team.id, admin)
    assert assert_success(unsubscribe(member, ["design"], [target.id]))["removed"] == ["design"]


def test_unsubscribe_others_through_nested_subgroup_of_can_remove_subscribers_group(
    realm, admin, member, moderator, target, design
):
    inner = check_add_user_group(realm, "inner", [member.id], acting_user=admin)
    middle = check_add_user_group(realm, "middle", [], subgroup_ids=[inner.id], acting_user=admin)
    outer = check_add_user_group(realm, "outer", [], subgroup_ids=[middle.id], acting_user=admin)
    set_setting(design, "can_remove_subscribers_group", outer.id, admin)
    assert assert_success(unsubscribe(member, ["design"], [target.id]))["removed"] == ["design"]
    before = db_state()
    assert_error(unsubscribe(moderator, ["design"], [member.id]), 400, "BAD_REQUEST", INSUFFICIENT)
    assert db_state() == before


def test_unsubscribe_others_through_subgroup_of_anonymous_setting(realm, admin, member, target, design):
    inner = check_add_user_group(realm, "inner", [member.id], acting_user=admin)
    set_setting(design, "can_remove_subscribers_group", AnonymousGroupValue((admin.id,), (inner.id,)), admin)
    assert assert_success(unsubscribe(member, ["design"], [target.id]))["removed"] == ["design"]


def test_unsubscribe_others_as_member_of_can_administer_channel_group(realm, admin, member, target, design):
    set_setting(design, "can_administer_channel_group", AnonymousGroupValue((member.id,), ()), admin)
    assert assert_success(unsubscribe(member, ["design"], [target.id]))["removed"] == ["design"]


def test_unsubscribe_others_as_channel_creator(member, target):
    assert_success(ApiClient(member).post("/users/me/subscriptions", {"subscriptions": [{"name": "mine"}]}))
    mine = Stream.objects.get(name="mine")
    assert_success(
        ApiClient(member).post(
            "/users/me/subscriptions", {"subscriptions": [{"name": "mine"}], "principals": [target.id]}
        )
    )
    assert assert_success(unsubscribe(member, ["mine"], [target.id]))["removed"] == ["mine"]
    assert not active(target, mine)


def test_unsubscribe_others_as_guest_in_can_remove_subscribers_group_is_refused(realm, admin, guest, target, design):
    team = check_add_user_group(realm, "team", [guest.id], acting_user=admin)
    set_setting(design, "can_remove_subscribers_group", team.id, admin)
    before = db_state()
    assert_error(unsubscribe(guest, ["design"], [target.id]), 400, "BAD_REQUEST", INSUFFICIENT)
    assert db_state() == before


def test_unsubscribe_permission_is_checked_for_every_channel(realm, admin, member, target, make_stream):
    allowed = make_stream("allowed", target)
    other = make_stream("other", target)
    team = check_add_user_group(realm, "team", [member.id], acting_user=admin)
    set_setting(allowed, "can_remove_subscribers_group", team.id, admin)
    before = db_state()
    assert_error(unsubscribe(member, ["allowed", "other"], [target.id]), 400, "BAD_REQUEST", INSUFFICIENT)
    assert db_state() == before
    assert active(target, other)


def test_unsubscribe_others_from_private_channel_as_administrator_not_subscribed(admin, target, make_stream):
    secret = make_stream("secret", target, private=True)
    assert assert_success(unsubscribe(admin, ["secret"], [target.id]))["removed"] == ["secret"]
    assert not active(target, secret)


def test_unsubscribe_others_from_private_channel_as_its_administrator_not_subscribed(
    realm, admin, member, target, make_stream
):
    secret = make_stream("secret", target, private=True)
    set_setting(secret, "can_administer_channel_group", AnonymousGroupValue((member.id,), ()), admin)
    assert assert_success(unsubscribe(member, ["secret"], [target.id]))["removed"] == ["secret"]


def test_unsubscribe_from_private_channel_caller_cannot_see_is_like_a_missing_one(
    realm, admin, member, target, make_stream
):
    secret = make_stream("secret", target, private=True)
    team = check_add_user_group(realm, "team", [member.id], acting_user=admin)
    set_setting(secret, "can_remove_subscribers_group", team.id, admin)  # gives no sight of the channel
    before = db_state()
    hidden = assert_error(unsubscribe(member, ["secret"], [target.id]), 400, "STREAM_DOES_NOT_EXIST")
    missing = assert_error(unsubscribe(member, ["absent"], [target.id]), 400, "STREAM_DOES_NOT_EXIST")
    assert hidden == {**missing, "msg": "Channel 'secret' does not exist", "stream": "secret"}
    assert assert_error(unsubscribe(member, ["secret"]), 400, "STREAM_DOES_NOT_EXIST")["stream"] == "secret"
    assert db_state() == before


# --- administering a channel (PATCH and DELETE /streams/{id}) ----------------------------------


def patch_stream(user, stream_id, **params):
    return ApiClient(user).patch(f"/streams/{stream_id}", params)


@pytest.mark.parametrize("who", ["admin", "owner"])
def test_administer_channel_as_administrator(request, design, who):
    user = request.getfixturevalue(who)
    assert_success(patch_stream(user, design.id, description=f"by {who}"))
    design.refresh_from_db()
    assert design.description == f"by {who}"


def test_administer_channel_as_its_creator(member, moderator):
    assert_success(ApiClient(member).post("/users/me/subscriptions", {"subscriptions": [{"name": "mine"}]}))
    mine = Stream.objects.get(name="mine")
    assert_success(patch_stream(member, mine.id, new_name="still mine"))
    before = db_state()
    assert_error(
        patch_stream(moderator, mine.id, new_name="theirs"), 400, "CANNOT_ADMINISTER_CHANNEL", CANNOT_ADMINISTER
    )
    assert db_state() == before


def test_administer_channel_through_nested_subgroup(realm, admin, member, design):
    inner = check_add_user_group(realm, "inner", [member.id], acting_user=admin)
    outer = check_add_user_group(realm, "outer", [], subgroup_ids=[inner.id], acting_user=admin)
    set_setting(design, "can_administer_channel_group", outer.id, admin)
    assert_success(patch_stream(member, design.id, new_name="renamed"))
    assert_success(ApiClient(member).delete(f"/streams/{design.id}"))
    design.refresh_from_db()
    assert (design.name, design.deactivated) == ("renamed", True)


@pytest.mark.parametrize("who", ["member", "moderator", "guest", "bot"])
def test_administer_visible_channel_without_permission_is_refused(request, design, who):
    user = request.getfixturevalue(who)
    before = db_state()
    assert_error(patch_stream(user, design.id, description="mine"), 400, NOT_ADMIN, CANNOT_ADMINISTER)
    assert_error(ApiClient(user).delete(f"/streams/{design.id}"), 400, NOT_ADMIN, CANNOT_ADMINISTER)
    assert db_state() == before


def test_administer_channel_guest_in_can_administer_channel_group_is_refused(realm, admin, guest, design):
    set_setting(design, "can_administer_channel_group", AnonymousGroupValue((guest.id,), ()), admin)
    before = db_state()
    assert_error(
        patch_stream(guest, design.id, description="mine"), 400, "CANNOT_ADMINISTER_CHANNEL", CANNOT_ADMINISTER
    )
    assert db_state() == before


@pytest.mark.parametrize("who", ["member", "moderator", "guest"])
def test_administer_invisible_channel_is_like_a_missing_one(request, admin, make_stream, who):
    user = request.getfixturevalue(who)
    secret = make_stream("secret", admin, private=True)
    public_unseen_by_guests = make_stream("lobby", admin)
    hidden = [secret.id] + ([public_unseen_by_guests.id] if who == "guest" else [])
    before = db_state()
    for stream_id in [*hidden, 999_999]:
        assert_error(patch_stream(user, stream_id, description="x"), 400, "BAD_REQUEST", "Invalid channel ID")
        assert_error(ApiClient(user).delete(f"/streams/{stream_id}"), 400, "BAD_REQUEST", "Invalid channel ID")
    assert db_state() == before


def test_administer_private_channel_without_content_access_keeps_privacy(realm, admin, member, make_stream):
    secret = make_stream("secret", admin, private=True)
    set_setting(secret, "can_administer_channel_group", AnonymousGroupValue((member.id,), ()), admin)
    assert_success(patch_stream(member, secret.id, description="administered from outside"))
    before = db_state()
    body = patch_stream(member, secret.id, is_private=False)
    assert_error(body, 400, "BAD_REQUEST", "Channel content access is required.")
    moderators = system_groups(realm.id)[SystemGroups.MODERATORS].id
    body = patch_stream(member, secret.id, can_subscribe_group={"new": moderators})
    assert_error(body, 400, "BAD_REQUEST", "Channel content access is required.")
    assert db_state() == before


# --- private channels do not exist for outsiders ------------------------------------------------


@pytest.fixture
def secret(make_stream, admin, owner):
    return make_stream("secret", admin, owner, private=True)


def register_state(user) -> dict:
    return assert_success(ApiClient(user).post("/register", {"fetch_event_types": ["subscription", "stream"]}))


@pytest.mark.parametrize("who", ["member", "moderator", "guest"])
def test_private_channel_missing_from_lists_of_outsiders(request, secret, who):
    user = request.getfixturevalue(who)
    api = ApiClient(user)
    for params in ({}, {"include_all": True}, {"include_public": False}, {"exclude_archived": False}):
        assert "secret" not in [s["name"] for s in assert_success(api.get("/streams", params))["streams"]]
    assert assert_success(api.get("/users/me/subscriptions"))["subscriptions"] == []
    state = register_state(user)
    assert "secret" not in [s["name"] for s in state["never_subscribed"] + state["streams"]]


def test_private_channel_left_is_gone_from_register_state(member, admin, make_stream):
    make_stream("secret", member, admin, private=True)
    make_stream("lobby", member, admin)
    for user in (member, admin):
        assert_success(unsubscribe(user, ["secret", "lobby"]))
    state = register_state(member)
    assert [s["name"] for s in state["unsubscribed"]] == ["lobby"]
    assert "secret" not in [s["name"] for s in state["subscriptions"] + state["never_subscribed"] + state["streams"]]
    assert sorted(s["name"] for s in register_state(admin)["unsubscribed"]) == ["lobby", "secret"]


def test_guest_who_left_public_channel_no_longer_sees_it(guest, admin, make_stream):
    make_stream("lobby", guest, admin)
    assert_success(unsubscribe(guest, ["lobby"]))
    state = register_state(guest)
    assert (state["subscriptions"], state["unsubscribed"], state["never_subscribed"], state["streams"]) == (
        [],
        [],
        [],
        [],
    )


@pytest.mark.parametrize("who", ["member", "moderator", "guest"])
def test_private_channel_answers_outsiders_like_a_missing_one(request, admin, secret, who):
    user = request.getfixturevalue(who)
    api = ApiClient(user)
    requests = [
        lambda sid: api.get(f"/streams/{sid}"),
        lambda sid: api.get(f"/streams/{sid}/members"),
        lambda sid: api.get(f"/users/me/subscriptions/{sid}"),
        lambda sid: api.get(f"/users/{admin.id}/subscriptions/{sid}"),
        lambda sid: api.patch(f"/users/me/subscriptions/{sid}", {"property": "is_muted", "value": True}),
        lambda sid: api.post("/user_topics", {"stream_id": sid, "topic": "t", "visibility_policy": 1}),
        lambda sid: api.post("/user_topics", {"stream_id": sid, "topic": "t", "visibility_policy": 0}),
        lambda sid: api.patch("/users/me/subscriptions/muted_topics", {"stream_id": sid, "topic": "t", "op": "add"}),
        lambda sid: patch_stream(user, sid, description="x"),
        lambda sid: api.delete(f"/streams/{sid}"),
    ]
    before = db_state()
    for send in requests:
        assert send(secret.id).json() == send(999_999).json() == {
            "result": "error", "msg": "Invalid channel ID", "code": "BAD_REQUEST",
        }  # fmt: skip
    hidden = assert_error(api.get("/get_stream_id", {"stream": "secret"}), 400, "BAD_REQUEST")
    assert hidden["msg"] == "Invalid channel name 'secret'"
    muted = api.patch("/users/me/subscriptions/muted_topics", {"stream": "secret", "topic": "t", "op": "add"})
    assert_error(muted, 400, "BAD_REQUEST", "Invalid channel name 'secret'")
    assert db_state() == before


def test_private_channel_metadata_is_visible_to_administrators(admin, owner, member, make_stream):
    secret = make_stream("secret", owner, private=True)
    api = ApiClient(admin)
    assert "secret" not in [s["name"] for s in assert_success(api.get("/streams"))["streams"]]
    assert "secret" in [s["name"] for s in assert_success(api.get("/streams", {"include_all": True}))["streams"]]
    assert "secret" in [s["name"] for s in register_state(admin)["never_subscribed"]]
    assert assert_success(api.get(f"/streams/{secret.id}"))["stream"]["name"] == "secret"
    assert assert_success(api.get(f"/streams/{secret.id}/members"))["subscribers"] == [owner.id]
    # Its id by name needs access to the content, as in Zulip.
    assert_error(api.get("/get_stream_id", {"stream": "secret"}), 400, "BAD_REQUEST", "Invalid channel name 'secret'")
    assert assert_success(api.get(f"/users/me/subscriptions/{secret.id}"))["is_subscribed"] is False
    # ... but not its content: joining needs an invitation, topic policies need access.
    before = db_state()
    assert_error(
        api.post("/users/me/subscriptions", {"subscriptions": [{"name": "secret"}]}), 400, "BAD_REQUEST",
        "Unable to access channel (secret).",
    )  # fmt: skip
    body = api.post("/user_topics", {"stream_id": secret.id, "topic": "t", "visibility_policy": 1})
    assert_error(body, 400, "BAD_REQUEST", "Invalid channel ID")
    assert db_state() == before


def test_private_channel_visible_to_members_of_groups_granting_metadata_access(realm, admin, member, make_stream):
    secret = make_stream("secret", admin, private=True)
    set_setting(secret, "can_add_subscribers_group", AnonymousGroupValue((member.id,), ()), admin)
    api = ApiClient(member)
    assert assert_success(api.get(f"/streams/{secret.id}"))["stream"]["name"] == "secret"
    assert "secret" in [s["name"] for s in register_state(member)["never_subscribed"]]
    body = assert_success(api.post("/users/me/subscriptions", {"subscriptions": [{"name": "secret"}]}))
    assert body["subscribed"] == {str(member.id): ["secret"]}


def test_private_channel_subscriber_sees_it(member, admin, make_stream):
    secret = make_stream("secret", admin, member, private=True)
    api = ApiClient(member)
    assert [s["name"] for s in assert_success(api.get("/streams"))["streams"]] == ["secret"]
    assert assert_success(api.get(f"/streams/{secret.id}/members"))["subscribers"] == sorted([admin.id, member.id])


# --- organizations never see each other ---------------------------------------------------------


@pytest.fixture
def foreign_stream(make_stream, other_realm, foreign_user):
    return make_stream("elsewhere", foreign_user, in_realm=other_realm)


def test_other_organizations_channel_answers_like_a_missing_one(member, admin, foreign_stream):
    api = ApiClient(admin)
    sid = foreign_stream.id
    requests = [
        lambda sid: api.get(f"/streams/{sid}"),
        lambda sid: api.get(f"/streams/{sid}/members"),
        lambda sid: api.get(f"/users/me/subscriptions/{sid}"),
        lambda sid: api.get(f"/users/{member.id}/subscriptions/{sid}"),
        lambda sid: api.patch(f"/users/me/subscriptions/{sid}", {"property": "is_muted", "value": True}),
        lambda sid: api.post(
            "/users/me/subscriptions/properties",
            {"subscription_data": [{"stream_id": sid, "property": "pin_to_top", "value": True}]},
        ),
        lambda sid: api.post("/user_topics", {"stream_id": sid, "topic": "t", "visibility_policy": 1}),
        lambda sid: api.post("/user_topics", {"stream_id": sid, "topic": "t", "visibility_policy": 0}),
        lambda sid: api.patch(f"/streams/{sid}", {"new_name": "mine now"}),
        lambda sid: api.delete(f"/streams/{sid}"),
    ]
    before = db_state()
    for send in requests:
        assert send(sid).json() == send(999_999).json() == {
            "result": "error", "msg": "Invalid channel ID", "code": "BAD_REQUEST",
        }  # fmt: skip
    assert_error(
        api.get("/get_stream_id", {"stream": "elsewhere"}), 400, "BAD_REQUEST", "Invalid channel name 'elsewhere'"
    )
    body = assert_error(
        unsubscribe(admin, ["elsewhere"]), 400, "STREAM_DOES_NOT_EXIST", "Channel 'elsewhere' does not exist"
    )
    assert body["stream"] == "elsewhere"
    assert "elsewhere" not in [s["name"] for s in assert_success(api.get("/streams", {"include_all": True}))["streams"]]
    assert db_state() == before


def test_subscribing_to_other_organizations_channel_name_creates_own_channel(member, foreign_stream, realm):
    body = assert_success(ApiClient(member).post("/users/me/subscriptions", {"subscriptions": [{"name": "elsewhere"}]}))
    assert body["subscribed"] == {str(member.id): ["elsewhere"]}
    mine = Stream.objects.get(realm=realm, name="elsewhere")
    assert mine.id != foreign_stream.id
    assert not Subscription.objects.filter(user=member, stream=foreign_stream).exists()


def test_other_organizations_users_are_no_such_user(admin, member, make_stream, other_realm):
    make_stream("design", member)
    stranger = UserFactory(realm=other_realm, delivery_email="stranger@example.com")
    stranger_bot = BotFactory(realm=other_realm, bot_owner=stranger)
    before = db_state()
    for principals in ([stranger.id], [stranger_bot.id], ["stranger@example.com"]):
        subscribe = {"subscriptions": [{"name": "design"}], "principals": principals}
        assert_error(ApiClient(admin).post("/users/me/subscriptions", subscribe), 400, "BAD_REQUEST", "No such user")
        assert_error(unsubscribe(admin, ["design"], principals), 400, "BAD_REQUEST", "No such user")
    response = ApiClient(admin).get(f"/users/{stranger.id}/subscriptions/{Stream.objects.get(name='design').id}")
    assert_error(response, 400, "BAD_REQUEST", "No such user")
    assert db_state() == before


def test_same_channel_name_in_two_organizations(member, foreign_user, other_realm, realm):
    assert_success(ApiClient(member).post("/users/me/subscriptions", {"subscriptions": [{"name": "shared"}]}))
    foreign = ApiClient(foreign_user, host="zephyr.testserver")
    assert_success(foreign.post("/users/me/subscriptions", {"subscriptions": [{"name": "SHARED"}]}))
    assert Stream.objects.filter(name__iexact="shared").count() == 2
    assert [s["name"] for s in assert_success(foreign.get("/users/me/subscriptions"))["subscriptions"]] == ["SHARED"]


# --- concurrent changes of one user's subscription (PostgreSQL) ---------------------------------


POSTGRES = settings.DATABASES["default"]["ENGINE"] != "apps.core.sqlite"


@pytest.mark.skipif(not POSTGRES, reason="needs PostgreSQL: SQLite has no concurrent writers")
@pytest.mark.django_db(transaction=True)
def test_concurrent_subscribe_and_unsubscribe_leave_one_consistent_row(realm, member, make_stream):
    stream = make_stream("race")
    api = ApiClient(member)
    for _ in range(8):
        responses = at_once(
            lambda: api.post("/users/me/subscriptions", {"subscriptions": [{"name": "race"}]}),
            lambda: api.delete("/users/me/subscriptions", {"subscriptions": ["race"]}),
        )
        bodies = [assert_success(response) for response in responses]
        rows = list(Subscription.objects.filter(user=member, stream=stream))
        assert len(rows) == 1
        # The unsubscribe ran either before the subscribe (nothing to remove) or after it.
        removed = bodies[1]["removed"] == ["race"]
        assert rows[0].active is not removed
        assert_success(api.delete("/users/me/subscriptions", {"subscriptions": ["race"]}))


@pytest.mark.skipif(not POSTGRES, reason="needs PostgreSQL: SQLite has no concurrent writers")
@pytest.mark.django_db(transaction=True)
def test_concurrent_subscribes_create_one_row(realm, member, admin, make_stream):
    make_stream("race")
    for round_number in range(5):
        name = f"race {round_number}"
        make_stream(name)
        responses = at_once(
            lambda name=name: ApiClient(member).post("/users/me/subscriptions", {"subscriptions": [{"name": name}]}),
            lambda name=name: ApiClient(admin).post(
                "/users/me/subscriptions", {"subscriptions": [{"name": name}], "principals": [member.id]}
            ),
        )
        bodies = [assert_success(response) for response in responses]
        subscribed = [body["subscribed"] for body in bodies]
        assert sorted(subscribed, key=len) == [{}, {str(member.id): [name]}]
        assert Subscription.objects.filter(user=member, stream__name=name, active=True).count() == 1


@pytest.mark.skipif(not POSTGRES, reason="needs PostgreSQL: SQLite has no concurrent writers")
@pytest.mark.django_db(transaction=True)
def test_concurrent_creation_of_one_channel_gives_one_channel(realm, member, admin):
    for round_number in range(5):
        name = f"new {round_number}"
        responses = at_once(
            lambda name=name: ApiClient(member).post("/users/me/subscriptions", {"subscriptions": [{"name": name}]}),
            lambda name=name: ApiClient(admin).post(
                "/users/me/subscriptions", {"subscriptions": [{"name": name.upper()}]}
            ),
        )
        assert Stream.objects.filter(name__iexact=name).count() == 1
        for response, requested in zip(responses, (name, name.upper()), strict=True):
            # Either request may win; the other joins the channel or finds the name taken, never a 500.
            if response.status_code != 200:
                assert_error(response, 400, "BAD_REQUEST", f"Channel '{requested}' already exists")


@pytest.mark.skipif(not POSTGRES, reason="needs PostgreSQL: SQLite has no concurrent writers")
@pytest.mark.django_db(transaction=True)
def test_concurrent_policies_for_one_new_topic_give_one_row(realm, member, make_stream):
    # A client that sends its request twice (a double click, a retry): one row, never a 500.
    stream = make_stream("race")
    api = ApiClient(member)
    for round_number in range(5):
        topic = f"topic {round_number}"
        responses = at_once(
            lambda topic=topic: api.post(
                "/user_topics", {"stream_id": stream.id, "topic": topic, "visibility_policy": 1}
            ),
            lambda topic=topic: api.post(
                "/user_topics", {"stream_id": stream.id, "topic": topic.upper(), "visibility_policy": 3}
            ),
        )
        for response in responses:
            assert_success(response)
        assert UserTopic.objects.filter(user=member, stream=stream, topic_name__iexact=topic).count() == 1
