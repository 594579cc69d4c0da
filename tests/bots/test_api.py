"""Bots through the API, as Zulip's /bots: POST and GET /bots, PATCH and DELETE /bots/{id}, the bot's
API key (GET /bots/{id}/api_key, POST .../regenerate); who may make which kind
(can_create_bots_group, can_create_write_only_bots_group) and administer which bot; the realm_bots
state of POST /register and the realm_bot events (feature level 474's shapes)."""

import json

import pytest

from apps.messages.models import Message
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.models import BotService, BotType, Role, User
from apps.users.selectors import fake_email_domain
from tests.api import api_for, assert_error, assert_success
from tests.factories import BotFactory, UserFactory

api = api_for


def create(user, **params) -> dict:
    return assert_success(api(user).post("/bots", {"full_name": "Build Bot", "short_name": "build", **params}))


def realm_bots(user) -> list[dict]:
    return assert_success(api(user).post("/register", {"fetch_event_types": '["realm_bot"]'}))["realm_bots"]


def db_state() -> dict:
    return {
        "users": list(User.objects.order_by("id").values()),
        "services": list(BotService.objects.order_by("id").values()),
        "audit": RealmAuditLog.objects.count(),
    }


def refused(user, method: str, path: str, params: dict, msg: str, status: int = 400, code: str = "BAD_REQUEST"):
    before = db_state()
    assert_error(api(user).request(method, path, params), status, code, msg)
    assert db_state() == before


@pytest.fixture
def other_member(realm):
    return UserFactory(realm=realm, role=Role.MEMBER, full_name="Otto Other", delivery_email="otto@example.com")


# --- making bots ----------------------------------------------------------------------------------


def test_a_member_makes_a_bot_its_administrators_hear_of_it(realm, member, admin, owner, other_member, capture_events):
    with capture_events(member, admin, other_member, event_types=["realm_bot", "realm_user"]) as received:
        answer = create(member)
    bot = User.objects.get(id=answer["user_id"])
    assert (bot.bot_type, bot.bot_owner_id, bot.role, bot.full_name) == (BotType.GENERIC, member.id, Role.MEMBER,
                                                                         "Build Bot")  # fmt: skip
    assert bot.delivery_email == f"build-bot@{fake_email_domain(realm.host)}"
    assert answer["api_key"] == bot.api_key
    assert (answer["default_sending_stream"], answer["default_all_public_streams"]) == (None, False)
    expected = {"user_id": bot.id, "default_sending_stream": None, "default_events_register_stream": None,
                "default_all_public_streams": False, "services": []}  # fmt: skip
    for user in (member, admin):
        assert {"type": "realm_bot", "op": "add", "bot": expected} in received[user.id]
    assert [e["op"] for e in received[other_member.id]] == ["add"]  # realm_user/add only
    assert received[other_member.id][0]["type"] == "realm_user"
    # The owner lists it (with its key); administrators and its owner administer it.
    [listed] = assert_success(api(member).get("/bots"))["bots"]
    assert (listed["user_id"], listed["username"], listed["api_key"]) == (bot.id, bot.delivery_email, bot.api_key)
    assert assert_success(api(admin).get("/bots"))["bots"] == []  # GET /bots: one's own
    assert realm_bots(member) == [expected]
    assert realm_bots(owner) == [expected]
    assert realm_bots(other_member) == []
    assert RealmAuditLog.objects.filter(modified_user=bot, event_type=AuditLogEventType.USER_CREATED).exists()


def test_an_outgoing_webhook_bot_has_its_service(member):
    answer = create(member, bot_type=BotType.OUTGOING_WEBHOOK, payload_url=json.dumps("https://bots.example.com/hook"),
                    interface_type=2, service_name="hook")  # fmt: skip
    service = BotService.objects.get(bot_id=answer["user_id"])
    assert (service.base_url, service.interface, service.name) == ("https://bots.example.com/hook", 2, "hook")
    [shape] = realm_bots(member)
    assert shape["services"] == [{"base_url": "https://bots.example.com/hook", "interface": 2, "token": service.token}]


def test_making_a_bot_is_refused_with_zulips_words(make_stream, realm, member, guest, bot, admin):
    make_stream("secret", admin, private=True)
    refused(guest, "POST", "/bots", {"full_name": "Bo", "short_name": "b"}, "Not allowed for guest users")
    refused(bot, "POST", "/bots", {"full_name": "Bo", "short_name": "b"}, "This endpoint does not accept bot requests.")
    cases = [
        ({"short_name": "  "}, "Bad name or username"),
        ({"short_name": "a b"}, "Bad name or username"),
        ({"full_name": ""}, "Name too short!"),
        ({"full_name": "Mel Member"}, "Name is already in use."),
        ({"bot_type": 4}, "Embedded bots are not enabled."),
        ({"bot_type": 7}, "Invalid bot type"),
        ({"interface_type": 9}, "Invalid interface type"),
        ({"default_sending_stream": "secret"}, "Invalid channel name 'secret'"),
        ({"default_events_register_stream": "nowhere"}, "Invalid channel name 'nowhere'"),
        ({"bot_type": 3, "payload_url": "not a url"}, "Invalid payload_url: Value error, Not a URL"),
        (
            {"bot_type": 3, "payload_url": json.dumps("http://example.com:99999/")},
            "Invalid payload_url: Value error, Not a URL",
        ),  # no such port (the hostile QA pass)
        (
            {"bot_type": 3, "payload_url": json.dumps("http://example.com:0/")},
            "Invalid payload_url: Value error, Not a URL",
        ),
        ({"bot_type": 2, "service_name": "github"}, "Invalid integration 'github'."),
    ]
    for params, msg in cases:
        refused(member, "POST", "/bots", {"full_name": "Build Bot", "short_name": "build", **params}, msg)
    # An outgoing webhook bot without its URL (the bots QA pass: it said "Not a URL").
    for params in ({"bot_type": 3}, {"bot_type": 3, "payload_url": '""'}):
        refused(member, "POST", "/bots", {"full_name": "Build Bot", "short_name": "build", **params},
                "Missing 'payload_url' argument", code="REQUEST_VARIABLE_MISSING")  # fmt: skip
    create(member)
    refused(member, "POST", "/bots", {"full_name": "Another", "short_name": "build"}, "Email is already in use.")


def test_who_may_make_which_kind_is_the_organizations_setting(member, admin, sys_groups):
    for name, group in (("can_create_bots_group", "role:administrators"),
                        ("can_create_write_only_bots_group", "role:nobody")):  # fmt: skip
        assert_success(api(admin).patch("/realm", {name: json.dumps({"new": sys_groups[group].id})}))
    refused(member, "POST", "/bots", {"full_name": "Bo", "short_name": "b"}, "Insufficient permission")
    create(admin)
    assert_success(api(admin).patch("/realm", {"can_create_write_only_bots_group": json.dumps(
        {"new": sys_groups["role:members"].id})}))  # fmt: skip
    refused(member, "POST", "/bots", {"full_name": "Bo", "short_name": "b"}, "Insufficient permission")
    assert create(member, full_name="Hook", short_name="hook", bot_type=BotType.INCOMING_WEBHOOK)["user_id"]
    state = assert_success(api(member).post("/register", {"fetch_event_types": '["realm"]'}))
    assert state["realm_can_create_bots_group"] == sys_groups["role:administrators"].id


# --- administering them ---------------------------------------------------------------------------


def test_its_owner_renames_it_and_changes_its_address(realm, member, admin, capture_events):
    bot_id = create(member)["user_id"]
    with capture_events(member, event_types=["realm_user", "realm_bot"]) as received:
        answer = assert_success(
            api(member).patch(f"/bots/{bot_id}", {"full_name": "Deploy Bot", "short_name": "deploy"})
        )
    bot = User.objects.get(id=bot_id)
    assert (bot.full_name, bot.delivery_email) == ("Deploy Bot", f"deploy-bot@{fake_email_domain(realm.host)}")
    assert answer["full_name"] == "Deploy Bot"
    assert answer["bot_owner"] == member.delivery_email
    people = [e["person"] for e in received[member.id]]
    assert {"user_id": bot_id, "full_name": "Deploy Bot"} in people
    assert {"user_id": bot_id, "new_email": bot.delivery_email} in people
    assert not [e for e in received[member.id] if e["type"] == "realm_bot"]  # feature level 474: names are users'
    refused(member, "PATCH", f"/bots/{bot_id}", {"full_name": "Adam Admin"}, "Name is already in use.")
    refused(member, "PATCH", f"/bots/{bot_id}", {"short_name": ""}, "Bad name or username")
    create(member, full_name="Other Bot", short_name="other")
    refused(member, "PATCH", f"/bots/{bot_id}", {"short_name": "other"}, "Email address already in use")
    assert_success(api(member).patch(f"/bots/{bot_id}", {"full_name": " Deploy Bot "}))  # the same: nothing


def test_default_channels_and_services_are_told_to_its_administrators(
    make_stream, member, admin, owner, capture_events
):
    design = make_stream("design", member, admin)
    lab = make_stream("lab", member, private=True)
    bot_id = create(member, bot_type=BotType.OUTGOING_WEBHOOK, payload_url="https://a.example.com/")["user_id"]
    with capture_events(member, admin, event_types=["realm_bot"]) as received:
        assert_success(api(member).patch(f"/bots/{bot_id}", {
            "default_sending_stream": "design", "default_all_public_streams": "true",
            "service_payload_url": json.dumps("https://b.example.com/"), "service_interface": "2"}))  # fmt: skip
        assert_success(api(member).patch(f"/bots/{bot_id}", {"default_events_register_stream": "lab"}))
    updates = [e["bot"] for e in received[admin.id]]
    token = BotService.objects.get(bot_id=bot_id).token
    assert {"user_id": bot_id, "default_sending_stream": "design"} in updates
    assert {"user_id": bot_id, "default_all_public_streams": True} in updates
    service = {"base_url": "https://b.example.com/", "interface": 2, "token": token}
    assert {"user_id": bot_id, "services": [service]} in updates
    # A private default channel: its owner alone hears of it (the administrator may not know it).
    assert {"user_id": bot_id, "default_events_register_stream": "lab"} not in updates
    assert {"user_id": bot_id, "default_events_register_stream": "lab"} in [e["bot"] for e in received[member.id]]
    [shape] = realm_bots(member)
    assert (shape["default_sending_stream"], shape["default_events_register_stream"]) == (design.name, lab.name)
    assert_success(api(member).patch(f"/bots/{bot_id}", {"default_sending_stream": ""}))
    assert realm_bots(member)[0]["default_sending_stream"] is None
    refused(admin, "PATCH", f"/bots/{bot_id}", {"default_sending_stream": "lab"}, "Invalid channel name 'lab'")


def test_giving_a_bot_away(member, other_member, admin, guest, capture_events):
    bot_id = create(member)["user_id"]
    with capture_events(member, other_member, admin, event_types=["realm_bot", "realm_user"]) as received:
        answer = assert_success(api(member).patch(f"/bots/{bot_id}", {"bot_owner_id": other_member.id}))
    assert answer["bot_owner"] == other_member.delivery_email
    assert User.objects.get(id=bot_id).bot_owner_id == other_member.id
    owner_update = {
        "type": "realm_user",
        "op": "update",
        "person": {"user_id": bot_id, "bot_owner_id": other_member.id},
    }
    assert owner_update in received[admin.id]
    assert {"type": "realm_bot", "op": "delete", "bot": {"user_id": bot_id}} in received[member.id]
    assert [e["op"] for e in received[other_member.id] if e["type"] == "realm_bot"] == ["add"]
    assert not [e for e in received[admin.id] if e["type"] == "realm_bot"]  # administrators administer it still
    assert realm_bots(member) == []
    refused(member, "PATCH", f"/bots/{bot_id}", {"full_name": "Mine"}, "Insufficient permission")
    deactivated = UserFactory(realm=admin.realm, full_name="Gone", delivery_email="gone@example.com", is_active=False)
    for owner_id, msg in ((10**9, "Failed to change owner, no such user"),
                          (deactivated.id, "Failed to change owner, user is deactivated"),
                          (bot_id, "Failed to change owner, bots can't own other bots")):  # fmt: skip
        refused(admin, "PATCH", f"/bots/{bot_id}", {"bot_owner_id": owner_id}, msg)


def test_a_bot_given_away_leaves_the_private_channels_its_new_owner_is_not_in(
    member, other_member, admin, make_stream, capture_events
):
    """Its key would otherwise show the new owner those channels (Zulip's
    remove_bot_from_inaccessible_private_streams)."""
    bot = User.objects.get(id=create(member)["user_id"])
    secret = make_stream("secret", member, bot, private=True)
    shared = make_stream("shared", member, other_member, bot, private=True)
    public = make_stream("public", member, bot)
    with capture_events(bot, member, event_types=["subscription"]) as received:
        assert_success(api(member).patch(f"/bots/{bot.id}", {"bot_owner_id": other_member.id}))
    assert {s["name"] for s in assert_success(api(bot).get("/users/me/subscriptions"))["subscriptions"]} == {
        shared.name, public.name}  # fmt: skip
    assert received[bot.id] == [
        {"type": "subscription", "op": "remove", "subscriptions": [{"stream_id": secret.id, "name": "secret"}]}
    ]
    assert {"type": "subscription", "op": "peer_remove", "stream_ids": [secret.id], "user_ids": [bot.id]} in received[
        member.id
    ]
    # An administrator given it keeps no more than what they are subscribed to either.
    assert_success(api(admin).patch(f"/bots/{bot.id}", {"bot_owner_id": admin.id}))
    assert [s["name"] for s in assert_success(api(bot).get("/users/me/subscriptions"))["subscriptions"]] == ["public"]


def test_a_bot_whose_owner_left_becomes_its_reactivators(member, admin, make_stream, capture_events):
    """As Zulip's do_reactivate_user: reactivated by an administrator while its owner is deactivated,
    the bot is theirs (audited, announced, and out of the private channels they are not in)."""
    bot = User.objects.get(id=create(member)["user_id"])
    secret = make_stream("secret", member, bot, private=True)
    assert_success(api(admin).delete(f"/users/{member.id}"))  # the bot goes with its owner
    with capture_events(admin, event_types=["realm_user", "realm_bot"]) as received:
        assert_success(api(admin).post(f"/users/{bot.id}/reactivate"))
    bot.refresh_from_db()
    assert (bot.is_active, bot.bot_owner_id) == (True, admin.id)
    assert {"type": "realm_user", "op": "update", "person": {"user_id": bot.id, "bot_owner_id": admin.id}} in received[
        admin.id
    ]
    changed = RealmAuditLog.objects.filter(modified_user=bot, event_type=AuditLogEventType.USER_BOT_OWNER_CHANGED)
    assert changed.get().acting_user == admin
    assert not assert_success(api(bot).get("/users/me/subscriptions"))["subscriptions"]
    assert api(bot).get(f"/streams/{secret.id}").status_code == 400
    # Reactivated while its owner is active, it stays theirs.
    assert_success(api(admin).post(f"/users/{member.id}/reactivate"))
    assert_success(api(admin).patch(f"/bots/{bot.id}", {"bot_owner_id": member.id}))
    assert_success(api(member).delete(f"/bots/{bot.id}"))
    assert_success(api(admin).post(f"/users/{bot.id}/reactivate"))
    assert User.objects.get(id=bot.id).bot_owner_id == member.id


def test_only_its_administrators_reach_a_bot(member, other_member, admin, owner, guest, foreign_user, bot):
    bot_id = create(member)["user_id"]
    notification_bot = User.objects.filter(realm=member.realm, bot_owner__isnull=True, bot_type__isnull=False).first()
    foreign_bot = BotFactory(realm=foreign_user.realm, bot_owner=foreign_user)
    for target in (member.id, foreign_bot.id, 10**9, *([notification_bot.id] if notification_bot else [])):
        refused(admin, "PATCH", f"/bots/{target}", {"full_name": "X"}, "No such bot")
        refused(admin, "GET", f"/bots/{target}/api_key", {}, "No such bot")
    refused(other_member, "PATCH", f"/bots/{bot_id}", {"full_name": "X"}, "Insufficient permission")
    refused(other_member, "DELETE", f"/bots/{bot_id}", {}, "Insufficient permission")
    refused(other_member, "POST", f"/bots/{bot_id}/api_key/regenerate", {}, "Insufficient permission")
    refused(guest, "GET", f"/bots/{bot_id}/api_key", {}, "Not allowed for guest users")
    # Administrators administer every bot with an owner; only they change its role.
    assert assert_success(api(admin).get(f"/bots/{bot_id}/api_key"))["api_key"] == User.objects.get(id=bot_id).api_key
    refused(member, "PATCH", f"/bots/{bot_id}", {"role": Role.ADMINISTRATOR}, "Must be an organization administrator",
            code="UNAUTHORIZED_PRINCIPAL")  # fmt: skip
    refused(admin, "PATCH", f"/bots/{bot_id}", {"role": Role.OWNER}, "Must be an organization owner",
            code="UNAUTHORIZED_PRINCIPAL")  # fmt: skip
    assert_success(api(admin).patch(f"/bots/{bot_id}", {"role": Role.MODERATOR}))
    assert User.objects.get(id=bot_id).role == Role.MODERATOR


def test_a_new_key_works_and_the_old_one_no_longer(realm, member):
    answer = create(member)
    bot = User.objects.get(id=answer["user_id"])
    new_key = assert_success(api(member).post(f"/bots/{bot.id}/api_key/regenerate"))["api_key"]
    assert new_key != answer["api_key"]
    assert assert_success(api(member).get(f"/bots/{bot.id}/api_key"))["api_key"] == new_key
    bot.refresh_from_db()
    assert assert_success(api(bot).get("/users/me"))["user_id"] == bot.id
    bot.api_key = answer["api_key"]
    assert api(bot).get("/users/me").status_code == 401


def test_deactivating_a_bot_twice_is_fine_and_administrators_still_list_it(member, admin, capture_events):
    bot_id = create(member)["user_id"]
    with capture_events(admin, event_types=["realm_user", "realm_bot"]) as received:
        assert_success(api(member).delete(f"/bots/{bot_id}"))
    assert not User.objects.get(id=bot_id).is_active
    assert {"type": "realm_user", "op": "update", "person": {"user_id": bot_id, "is_active": False}} in (
        received[admin.id])  # fmt: skip
    # Feature level 474: bot objects have no is_active, and no realm_bot event says it (the bots QA pass).
    assert [e for e in received[admin.id] if e["type"] == "realm_bot"] == []
    assert_success(api(member).delete(f"/bots/{bot_id}"))
    assert assert_success(api(member).get("/bots"))["bots"] == []
    assert [shape["user_id"] for shape in realm_bots(admin)] == [bot_id]  # deactivated ones too
    assert [shape["user_id"] for shape in realm_bots(member)] == [bot_id]


def test_a_bots_queues_take_its_defaults_where_its_registration_says_nothing(
    make_stream, member, admin, capture_events
):
    design, random = make_stream("design", admin), make_stream("random", admin)
    answer = create(member, default_all_public_streams="true", default_events_register_stream="design")
    bot = User.objects.get(id=answer["user_id"])
    with capture_events(bot, event_types=["message"]) as received:
        for stream in (design, random):
            assert_success(api(admin).post("/messages", {"type": "stream", "to": stream.id, "topic": "t",
                                                         "content": f"in {stream.name}"}))  # fmt: skip
    assert [e["message"]["content"] for e in received[bot.id]] == ["in design"]  # not subscribed to either
    assert_success(api(member).patch(f"/bots/{bot.id}", {"default_events_register_stream": ""}))
    with capture_events(bot, event_types=["message"]) as received:
        assert_success(api(admin).post("/messages", {"type": "stream", "to": random.id, "topic": "t", "content": "x"}))
    assert [e["message"]["content"] for e in received[bot.id]] == ["x"]
    with capture_events(bot, event_types=["message"], all_public_streams="false") as received:
        assert_success(api(admin).post("/messages", {"type": "stream", "to": random.id, "topic": "t", "content": "y"}))
    assert received[bot.id] == []  # what the registration says wins


def test_a_bot_posts_to_its_default_channel_when_it_names_none(make_stream, member, admin):
    design = make_stream("design", member)
    bot = User.objects.get(id=create(member, default_sending_stream="design")["user_id"])
    sent = assert_success(api(bot).post("/messages", {"type": "stream", "topic": "t", "content": "hi"}))
    assert Message.objects.get(id=sent["id"]).stream_id == design.id  # as its owner is subscribed
    assert_success(api(member).patch(f"/bots/{bot.id}", {"default_sending_stream": ""}))
    assert_error(api(bot).post("/messages", {"type": "stream", "topic": "t", "content": "hi"}), 400, "BAD_REQUEST",
                 "Missing channel")  # fmt: skip
    assert_error(api(member).post("/messages", {"type": "direct", "content": "hi"}), 400, "REQUEST_VARIABLE_MISSING",
                 "Missing 'to' argument")  # fmt: skip


def test_what_does_not_fit_is_refused_not_stored(member):
    long_url = json.dumps("https://example.com/" + "a" * 2000)
    cases = [
        ({"short_name": "x" * 250}, "Bad name or username"),  # an address past 254 characters
        ({"bot_type": 3, "payload_url": long_url}, "Invalid payload_url: Value error, Not a URL"),
        ({"bot_type": 3, "payload_url": "https://a.example.com/", "service_name": "s" * 101},
         "service_name is too long (limit: 100 characters)"),
    ]  # fmt: skip
    for params, msg in cases:
        refused(member, "POST", "/bots", {"full_name": "Build Bot", "short_name": "build", **params}, msg)
    # A service named after a long short name is cut to fit.
    answer = create(member, bot_type=3, payload_url="https://a.example.com/", short_name="s" * 150)
    assert BotService.objects.get(bot_id=answer["user_id"]).name == "s" * 100
    refused(member, "PATCH", f"/bots/{answer['user_id']}", {"service_payload_url": long_url},
            "Invalid service_payload_url: Value error, Not a URL")  # fmt: skip


def test_its_owner_reactivates_it_while_allowed_to_make_its_kind(member, other_member, admin, sys_groups):
    bot_id = create(member)["user_id"]
    assert_success(api(member).delete(f"/bots/{bot_id}"))
    refused(other_member, "POST", f"/users/{bot_id}/reactivate", {}, "Insufficient permission")
    refused(member, "POST", f"/users/{other_member.id}/reactivate", {}, "Insufficient permission")  # a person
    assert_success(api(admin).patch("/realm", {"can_create_bots_group": json.dumps(
        {"new": sys_groups["role:administrators"].id})}))  # fmt: skip
    refused(member, "POST", f"/users/{bot_id}/reactivate", {}, "Insufficient permission")
    assert_success(api(admin).patch("/realm", {"can_create_bots_group": json.dumps(
        {"new": sys_groups["role:members"].id})}))  # fmt: skip
    assert_success(api(member).post(f"/users/{bot_id}/reactivate"))
    assert User.objects.get(id=bot_id).is_active


def test_a_bot_is_reactivated_only_while_its_name_is_free(member, admin):
    old_id = create(member, full_name="Twin")["user_id"]
    assert_success(api(member).delete(f"/bots/{old_id}"))
    create(member, full_name="Twin", short_name="twin2")
    refused(admin, "POST", f"/users/{old_id}/reactivate", {},
            'There is already an active bot named "Twin" in this organization. To reactivate this bot, you must '
            "rename or deactivate the other one first.")  # fmt: skip
    assert not User.objects.get(id=old_id).is_active


def test_deactivating_and_reactivating_a_bot_tell_everyone_by_its_user(member, admin, capture_events):
    """As Zulip since feature level 474 (the bots QA pass: a realm_bot/update {is_active} came too)."""
    bot_id = create(member)["user_id"]
    with capture_events(member, admin, event_types=json.dumps(["realm_bot", "realm_user"])) as received:
        assert_success(api(member).delete(f"/bots/{bot_id}"))
        assert_success(api(member).post(f"/users/{bot_id}/reactivate"))
    for user in (member, admin):
        assert received[user.id] == [
            {"type": "realm_user", "op": "update", "person": {"user_id": bot_id, "is_active": False}},
            {"type": "realm_user", "op": "update", "person": {"user_id": bot_id, "is_active": True}},
        ]
