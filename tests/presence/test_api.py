"""The presence endpoints: POST /users/me/presence (legacy and modern answers, ping_only, bad
input), GET /realm/presence, GET /users/{user_id_or_email}/presence, who appears, and the
`presence` state of POST /register."""

import time
from datetime import timedelta

import pytest

from apps.presence.actions import do_update_user_presence
from apps.presence.limits import OFFLINE_THRESHOLD_SECS
from apps.realms.models import EmailVisibility
from apps.users.actions.activation import do_deactivate_user
from apps.users.selectors import fake_email_domain
from tests.api import api_for, assert_error, assert_success
from tests.presence.conftest import stored_state


def ping(user, status="active", **params) -> dict:
    return assert_success(api_for(user).post("/users/me/presence", {"status": status, **params}))


def test_ping_answers_everyone_in_the_legacy_shape(member, admin):
    admin.date_joined = admin.date_joined - timedelta(days=1)
    admin.save()
    ping(admin, "idle")
    body = ping(member)
    now = time.time()
    assert abs(body["server_timestamp"] - now) < 5
    assert set(body["presences"]) == {member.delivery_email, admin.delivery_email}
    mine = body["presences"][member.delivery_email]
    assert mine["website"]["client"] == "website"
    assert mine["website"]["status"] == "active"
    assert mine["website"]["pushable"] is False
    assert abs(mine["website"]["timestamp"] - now) < 5
    assert mine["aggregated"] == {k: mine["website"][k] for k in ("client", "status", "timestamp")}
    # Only ever idle: active counts from when they joined, long before their connection.
    assert body["presences"][admin.delivery_email]["aggregated"]["status"] == "idle"
    assert isinstance(body["presence_last_update_id"], int)


def test_ping_only_answers_nothing_but_records(member, admin):
    body = ping(member, ping_only=True)
    assert set(body) == {"result", "msg"}
    assert member.delivery_email in ping(admin)["presences"]


def test_hidden_email_keys_by_the_fake_address(member, admin, realm):
    member.email_address_visibility = EmailVisibility.ADMINS
    member.save()
    ping(member)
    presences = assert_success(api_for(admin).get("/realm/presence"))["presences"]
    assert f"user{member.id}@{fake_email_domain(realm.host)}" in presences
    assert member.delivery_email not in presences


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"status": "away"}, "BAD_REQUEST", "Invalid status: away"),
        ({"status": ""}, "BAD_REQUEST", "Invalid status: "),
        ({"status": "active", "ping_only": "maybe"}, "REQUEST_VARIABLE_INVALID", "ping_only is not valid JSON"),
        ({"status": "active", "last_update_id": "x"}, "REQUEST_VARIABLE_INVALID", "last_update_id is not valid JSON"),
        (
            {"status": "active", "history_limit_days": "1.5"},
            "REQUEST_VARIABLE_INVALID",
            "history_limit_days is not an integer",
        ),
    ],
)
def test_bad_input_is_refused_and_records_nothing(member, realm, params, code, msg):
    before = stored_state(realm.id)
    assert_error(api_for(member).post("/users/me/presence", params), 400, code, msg)
    assert stored_state(realm.id) == before


def test_missing_status_is_refused(member):
    assert_error(api_for(member).post("/users/me/presence", {}), 400, "REQUEST_VARIABLE_MISSING")


def test_bots_cannot_ping(bot, realm):
    before = stored_state(realm.id)
    response = api_for(bot).post("/users/me/presence", {"status": "active"})
    assert_error(response, 400, "BAD_REQUEST", "This endpoint does not accept bot requests.")
    assert stored_state(realm.id) == before


def test_modern_clients_get_only_what_changed(member, admin, owner):
    ping(admin)
    first = ping(member, last_update_id=-1)
    assert set(first["presences"]) == {str(admin.id), str(member.id)}
    assert set(first["presences"][str(member.id)]) == {"active_timestamp", "idle_timestamp"}
    last = first["presence_last_update_id"]
    assert last >= 1
    # Nothing changed since: nothing, and the same number back (this ping writes nothing so soon).
    again = ping(member, last_update_id=last)
    assert again["presences"] == {}
    assert again["presence_last_update_id"] == last
    ping(owner, ping_only=True)
    changed = ping(member, last_update_id=last)
    assert set(changed["presences"]) == {str(owner.id)}
    assert changed["presence_last_update_id"] > last


def test_slim_presence_keys_by_user_id(member):
    body = ping(member, slim_presence=True)
    assert set(body["presences"]) == {str(member.id)}


@pytest.mark.parametrize("days", [0, -5, 10**30, 2**63])
def test_history_limit_days_never_fails(member, days):
    body = ping(member, last_update_id=-1, history_limit_days=days)
    if days <= 0:
        assert body["presences"] == {}
    else:
        assert set(body["presences"]) == {str(member.id)}


@pytest.mark.parametrize("last_update_id", [-(10**30), 10**30])
def test_extreme_last_update_ids_never_fail(member, last_update_id):
    body = ping(member, last_update_id=last_update_id)
    # What it answers fits in 64 bits (the hostile QA pass: 10**30 echoed back).
    assert -1 <= body["presence_last_update_id"] <= 2**63 - 1


def test_realm_presence_shape_and_who_appears(member, admin, guest, bot, foreign_user, owner):
    for user in (member, admin, guest, foreign_user):
        do_update_user_presence(user, active=True)
    do_update_user_presence(owner, active=True)
    body = assert_success(api_for(guest).get("/realm/presence"))
    assert set(body) == {"result", "msg", "presences", "server_timestamp"}
    # Another organization's people never appear; bots never ping.
    assert set(body["presences"]) == {
        member.delivery_email,
        admin.delivery_email,
        guest.delivery_email,
        owner.delivery_email,
    }
    entry = body["presences"][member.delivery_email]
    assert set(entry) == {"website", "aggregated"}
    assert set(entry["website"]) == {"client", "status", "timestamp", "pushable"}
    assert set(entry["aggregated"]) == {"client", "status", "timestamp"}


def test_deactivated_users_disappear(member, admin):
    do_update_user_presence(member, active=True)
    do_deactivate_user(member, acting_user=None)
    assert member.delivery_email not in assert_success(api_for(admin).get("/realm/presence"))["presences"]


def test_presence_disabled_users_are_not_recorded_and_not_shown(member, admin, realm):
    do_update_user_presence(member, active=True)
    member.presence_enabled = False
    member.save()
    before = stored_state(realm.id)
    ping(member)
    assert stored_state(realm.id) == before
    assert member.delivery_email not in assert_success(api_for(admin).get("/realm/presence"))["presences"]
    assert_error(
        api_for(admin).get(f"/users/{member.id}/presence"), 400, "BAD_REQUEST", f"No presence data for {member.id}"
    )


def test_one_user_by_id_and_by_email(member, admin):
    ping(member)
    by_id = assert_success(api_for(admin).get(f"/users/{member.id}/presence"))["presence"]
    by_email = assert_success(api_for(admin).get(f"/users/{member.delivery_email}/presence"))["presence"]
    assert by_id == by_email
    assert set(by_id) == {"website", "aggregated"}
    assert set(by_id["aggregated"]) == {"status", "timestamp"}
    assert by_id["aggregated"]["status"] == "active"
    slim = assert_success(api_for(admin).get(f"/users/{member.id}/presence", {"slim_presence": True}))["presence"]
    assert set(slim) == {"active_timestamp", "idle_timestamp"}


def test_one_user_is_offline_after_the_threshold(member, admin):
    do_update_user_presence(member, active=True, now=time.time() - OFFLINE_THRESHOLD_SECS - 5)
    presence = assert_success(api_for(admin).get(f"/users/{member.id}/presence"))["presence"]
    assert presence["aggregated"]["status"] == "offline"
    assert presence["website"]["status"] == "active"


def test_bots_may_ask_about_people(bot, member):
    ping(member)
    assert_success(api_for(bot).get(f"/users/{member.id}/presence"))


def test_one_user_errors(member, admin, bot, foreign_user):
    ask = api_for(admin)
    assert_error(ask.get(f"/users/{member.id}/presence"), 400, "BAD_REQUEST", f"No presence data for {member.id}")
    assert_error(ask.get(f"/users/{bot.id}/presence"), 400, "BAD_REQUEST", "Presence is not supported for bot users.")
    do_update_user_presence(foreign_user, active=True)
    for named in (foreign_user.id, 987654321, "nobody@example.com", "not an email"):
        assert_error(ask.get(f"/users/{named}/presence"), 400, "BAD_REQUEST", "No such user")
    do_update_user_presence(member, active=True)
    do_deactivate_user(member, acting_user=None)
    assert_error(ask.get(f"/users/{member.id}/presence"), 400, "BAD_REQUEST", "No such user")


def test_another_organization_sees_its_own(member, foreign_user):
    do_update_user_presence(member, active=True)
    do_update_user_presence(foreign_user, active=True)
    presences = assert_success(api_for(foreign_user).get("/realm/presence"))["presences"]
    assert set(presences) == {foreign_user.delivery_email}


def test_register_has_presence_and_the_realm_keys(member, admin):
    ping(admin)
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["presence", "realm"]}))
    assert set(state["presences"]) == {admin.delivery_email}
    assert isinstance(state["presence_last_update_id"], int)
    assert abs(state["server_timestamp"] - time.time()) < 5
    assert state["server_presence_ping_interval_seconds"] == 60
    assert state["server_presence_offline_threshold_seconds"] == OFFLINE_THRESHOLD_SECS == 200  # Zulip's
    assert state["realm_presence_disabled"] is False
    slim = assert_success(api_for(member).post("/register", {"fetch_event_types": ["presence"], "slim_presence": True}))
    assert set(slim["presences"]) == {str(admin.id)}


def test_a_ping_costs_no_query_with_redis(member, admin, presence_store, django_assert_num_queries):
    """The hot path: with Redis a ping reads nothing from the database (the user authenticated
    lately comes from the credential cache); in the database, their presence row. Answering a
    modern client reads the people who changed, once."""
    api = api_for(member)
    ping(admin, ping_only=True)
    ping(member, ping_only=True)
    with_redis = type(presence_store).__name__ == "RedisStore"
    with django_assert_num_queries(0 if with_redis else 1):
        ping(member, ping_only=True)
    with django_assert_num_queries(1 if with_redis else 3):
        assert_success(api.post("/users/me/presence", {"status": "active", "last_update_id": 0}))


def test_someone_never_active_counts_as_active_when_they_joined(member, admin):
    admin.date_joined = admin.date_joined - timedelta(days=2)
    admin.save()
    ping(admin, "idle")
    modern = ping(member, last_update_id=-1)["presences"][str(admin.id)]
    assert modern["active_timestamp"] == int(admin.date_joined.timestamp())
    assert modern["idle_timestamp"] > modern["active_timestamp"]


def test_redis_down_is_a_503_not_a_500(member, redis_down):
    assert_error(api_for(member).post("/users/me/presence", {"status": "active"}), 503, "SERVICE_UNAVAILABLE")


@pytest.mark.django_db(transaction=True)
def test_a_simplified_presence_event_keeps_its_queue_id(member, admin):
    """The client acknowledges what it received by the events' ids: an event without one would
    leave it nothing to send as last_event_id (the web app registers with this capability)."""
    api = api_for(admin)
    capabilities = {"notification_settings_null": True, "simplified_presence_events": True}
    queue = assert_success(
        api.post("/register", {"event_types": ["presence"], "client_capabilities": capabilities, "slim_presence": True})
    )
    ping(member)
    poll = {"queue_id": queue["queue_id"], "last_event_id": -1, "dont_block": True}
    [event] = assert_success(api.get("/events", poll))["events"]
    assert (event["type"], list(event["presences"])) == ("presence", [str(member.id)])
    assert isinstance(event["id"], int)
    poll["last_event_id"] = event["id"]
    assert assert_success(api.get("/events", poll))["events"] == []


def test_turning_presence_off_and_on_is_shown_at_once(member, admin, capture_events):
    """The drafts QA pass: the change sent no event, and clients showed the user active until their
    presence went stale. As Zulip: off, a presence old enough to be offline; on, active now."""
    ping(member)
    slim = {"notification_settings_null": True, "simplified_presence_events": True}
    with capture_events(admin, client_capabilities=slim) as received:
        before = time.time()
        assert_success(api_for(member).patch("/settings", {"presence_enabled": "false"}))
    [event] = received[admin.id]
    seen = event["presences"][str(member.id)]
    assert seen["active_timestamp"] == seen["idle_timestamp"] <= before - OFFLINE_THRESHOLD_SECS
    assert member.delivery_email not in assert_success(api_for(admin).get("/realm/presence"))["presences"]
    with capture_events(admin, client_capabilities=slim) as received:
        before = int(time.time())
        assert_success(api_for(member).patch("/settings", {"presence_enabled": "true"}))
    [event] = received[admin.id]
    assert event["presences"][str(member.id)]["active_timestamp"] > before - OFFLINE_THRESHOLD_SECS  # online
    shown = assert_success(api_for(admin).get("/realm/presence"))["presences"][member.delivery_email]
    assert shown["aggregated"]["status"] == "active"
    with capture_events(admin) as received:  # unchanged: nothing to tell
        assert_success(api_for(member).patch("/settings", {"presence_enabled": "true"}))
    assert received[admin.id] == []


def test_an_organization_with_presence_off_shows_nobody_online(member, admin, owner, capture_events):
    """Zulip's presence_disabled (the mobile-app QA pass: PATCH /realm ignored it): administrators
    turn it on; then nobody's presence is answered or sent, pings are still recorded, and turned off
    again everyone shows as before."""
    ping(admin)
    assert_error(api_for(member).patch("/realm", {"presence_disabled": "true"}), 400, "UNAUTHORIZED_PRINCIPAL")
    with capture_events(member, event_types=["realm", "presence"]) as received:
        assert_success(api_for(owner).patch("/realm", {"presence_disabled": "true"}))
        ping(admin, "idle")
        ping(owner)
        assert_success(api_for(admin).patch("/settings", {"presence_enabled": "false"}))
        assert_success(api_for(admin).patch("/settings", {"presence_enabled": "true"}))
    assert received[member.id] == [{"type": "realm", "op": "update", "property": "presence_disabled", "value": True}]
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": '["realm", "presence"]'}))
    assert (state["realm_presence_disabled"], state["presences"]) == (True, {})
    assert ping(member)["presences"] == {}
    assert ping(member, last_update_id=-1)["presences"] == {}
    assert assert_success(api_for(member).get("/realm/presence"))["presences"] == {}
    no_data = f"No presence data for {admin.id}"
    assert_error(api_for(member).get(f"/users/{admin.id}/presence"), 400, "BAD_REQUEST", no_data)

    assert_success(api_for(owner).patch("/realm", {"presence_disabled": "false"}))
    shown = assert_success(api_for(member).get("/realm/presence"))["presences"]
    assert set(shown) == {member.delivery_email, admin.delivery_email, owner.delivery_email}
    assert assert_success(api_for(member).get(f"/users/{admin.id}/presence"))["presence"]
