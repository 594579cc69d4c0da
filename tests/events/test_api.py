"""POST /register, GET /events, DELETE /events over HTTP, and the events the user actions send."""

import json
import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from apps.core.redis_client import get_redis
from apps.core.version import PARLEY_VERSION
from apps.events.actions import do_register_queue, do_sweep_event_queues, queue_options
from apps.events.backends import get_backend
from apps.events.models import OutboxEvent, RealmEventSequence
from apps.events.publish import publish_in_order, write_outbox_event
from apps.events.serializers import RegisterParams
from apps.realms.actions import do_set_realm_deactivated
from apps.users.actions.activation import do_deactivate_user, do_reactivate_user
from apps.users.actions.bot_owner import do_change_bot_owner
from apps.users.actions.create_user import do_create_user
from apps.users.actions.profile_data import check_remove_user_custom_profile_data, check_update_user_custom_profile_data
from apps.users.actions.realm_defaults import do_set_realm_user_defaults
from apps.users.actions.roles import do_change_user_role
from apps.users.actions.settings import check_update_settings
from apps.users.actions.user_settings import (
    do_change_full_name,
    do_change_user_delivery_email,
    do_refresh_avatar,
    do_regenerate_api_key,
)
from apps.users.models import CustomProfileField, Role, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import CustomProfileFieldFactory, UserFactory

# Events leave on commit: these tests commit for real.
pytestmark = pytest.mark.django_db(transaction=True)


def register(api: ApiClient, **params) -> dict:
    return assert_success(api.post("/register", params))


def poll(api: ApiClient, queue_id: str, last_event_id: int = -1) -> list[dict]:
    return assert_success(
        api.get("/events", {"queue_id": queue_id, "last_event_id": last_event_id, "dont_block": True})
    )["events"]


@pytest.fixture
def queue_of(event_backend):
    """`queue_of(user, **register_params)`: the id of a queue registered for `user`."""

    def make(user, **params) -> str:
        return register(ApiClient(user), **params)["queue_id"]

    return make


def test_register_response(event_backend, member, admin):
    body = register(ApiClient(member))
    assert isinstance(body["queue_id"], str)
    assert body["last_event_id"] == -1
    assert (body["zulip_feature_level"], body["zulip_version"], body["zulip_merge_base"]) == (
        496,
        PARLEY_VERSION,
        PARLEY_VERSION,
    )
    assert body["event_queue_longpoll_timeout_seconds"] == 90
    assert body["max_topic_length"] == 60
    assert body["realm_empty_topic_display_name"] == "general chat"
    assert body["realm_name"] == "Parley Test"
    assert {u["user_id"] for u in body["realm_users"]} == {member.id, admin.id}
    assert body["user_id"] == member.id
    assert body["custom_profile_fields"] == []
    assert body["custom_profile_field_types"]["SELECT"] == {"id": 3, "name": "List of options"}


def test_the_organizations_description_is_its_markdown_as_events_carry_it(event_backend, owner, member):
    """As Zulip's register (Realm.property_types); GET /server_settings shows it rendered."""
    assert_success(ApiClient(owner).patch("/realm", {"description": "Welcome **all**"}))
    assert register(ApiClient(member), fetch_event_types=["realm"])["realm_description"] == "Welcome **all**"


def test_fetch_event_types_selects_the_state(event_backend, member):
    body = register(ApiClient(member), fetch_event_types=["realm"])
    assert "max_topic_length" in body
    assert "realm_users" not in body
    body = register(ApiClient(member), event_types=["custom_profile_fields"])
    assert "custom_profile_fields" in body
    assert "realm_users" not in body
    assert "max_topic_length" not in body
    body = register(ApiClient(member), event_types=["realm_user"], fetch_event_types="null")
    assert {"realm_users", "max_topic_length", "custom_profile_fields"} <= set(body)
    body = register(ApiClient(member), fetch_event_types=["no_such_type", "realm_user"])
    assert "realm_users" in body


def test_register_state_shows_users_as_the_requester_may_see_them(event_backend, member, realm):
    hidden = UserFactory(realm=realm, email_address_visibility=3)
    inactive = UserFactory(realm=realm, is_active=False)
    body = register(ApiClient(member), client_gravatar=False)
    users = {u["user_id"]: u for u in body["realm_users"]}
    assert users[hidden.id]["delivery_email"] is None
    assert users[member.id]["avatar_url"].startswith("https://secure.gravatar.com/avatar/")
    assert [u["user_id"] for u in body["realm_non_active_users"]] == [inactive.id]


@pytest.mark.parametrize(
    ("params", "var_name", "msg"),
    [
        ({"event_types": "realm_user"}, "event_types", "event_types is not valid JSON"),
        ({"event_types": '"realm_user"'}, "event_types", "event_types is not a list"),
        ({"narrow": '[["stream"]]'}, "narrow", "narrow[0] is not a valid narrow term"),
        ({"narrow": '{"stream": "x"}'}, "narrow", "narrow is not a list"),
        ({"queue_lifespan_secs": "-1"}, "queue_lifespan_secs", "queue_lifespan_secs is too small"),
        ({"queue_lifespan_secs": str(8 * 24 * 3600)}, "queue_lifespan_secs", "queue_lifespan_secs is too large"),
        ({"include_subscribers": "sometimes"}, "include_subscribers", "include_subscribers is not valid JSON"),
        ({"include_subscribers": "3"}, "include_subscribers", "Invalid include_subscribers"),
        # Nested too deep to read (the hostile QA pass: json's RecursionError, a 500).
        ({"include_subscribers": "[" * 1500}, "include_subscribers", "include_subscribers is not valid JSON"),
        ({"client_capabilities": '{"notification_settings_null": 1}'}, "client_capabilities", None),
        ({"apply_markdown": "yes"}, "apply_markdown", "apply_markdown is not valid JSON"),
    ],
)
def test_register_refuses_bad_parameters(event_backend, member, params, var_name, msg):
    body = assert_error(ApiClient(member).post("/register", params), 400, "REQUEST_VARIABLE_INVALID", msg)
    assert body["var_name"] == var_name
    assert event_backend.queue_ids_of_user(member.id) == []


# What a queue keeps is bounded (a narrow of 60,000 terms once held 12 MB in each server process).
OVERSIZED = [
    ({"narrow": [["stream", "x"]] * 101}, "narrow", "narrow has too many items (limit: 100)"),
    ({"narrow": [["topic", "x" * 255]]}, "narrow", "narrow[0][1] is too long (limit: 254 characters)"),
    (
        {"narrow": [["stream", "x"], {"operator": "sender", "operand": "x" * 255}]},
        "narrow",
        'narrow[1]["operand"] is too long (limit: 254 characters)',
    ),
    ({"narrow": [{"operator": "x" * 255, "operand": "x"}]}, "narrow", 'narrow[0]["operator"] is too long'),
    ({"event_types": ["message"] * 101}, "event_types", "event_types has too many items (limit: 100)"),
    ({"event_types": ["message", "x" * 65]}, "event_types", "event_types[1] is too long (limit: 64 characters)"),
    ({"fetch_event_types": ["x"] * 101}, "fetch_event_types", "fetch_event_types has too many items (limit: 100)"),
    ({"fetch_event_types": ["x" * 65]}, "fetch_event_types", "fetch_event_types[0] is too long (limit: 64 characters)"),
    (
        {"client_capabilities": {f"capability_{i}": True for i in range(51)}},
        "client_capabilities",
        "client_capabilities has too many items (limit: 50)",
    ),
    (
        {"client_capabilities": {"x" * 65: True}},
        "client_capabilities",
        "client_capabilities has a name longer than 64 characters",
    ),
]


@pytest.mark.parametrize(("params", "var_name", "msg"), OVERSIZED)
def test_register_refuses_oversized_options(event_backend, member, params, var_name, msg):
    body = assert_error(ApiClient(member).post("/register", params), 400, "REQUEST_VARIABLE_INVALID")
    assert (body["var_name"], body["msg"][: len(msg)]) == (var_name, msg)
    assert event_backend.queue_ids_of_user(member.id) == []


@pytest.mark.parametrize(("params", "var_name", "msg"), [case for case in OVERSIZED if case[1] != "fetch_event_types"])
def test_get_events_without_a_queue_refuses_oversized_options(event_backend, member, params, var_name, msg):
    response = ApiClient(member).get("/events", {"dont_block": True, **params})
    body = assert_error(response, 400, "REQUEST_VARIABLE_INVALID")
    assert (body["var_name"], body["msg"][: len(msg)]) == (var_name, msg)
    assert event_backend.queue_ids_of_user(member.id) == []


def test_register_accepts_options_up_to_the_bounds(event_backend, member):
    narrow = [["sender", "x" * 254]] + [{"operator": "stream", "operand": f"c{i}", "negated": True} for i in range(99)]
    queue = register(
        ApiClient(member),
        narrow=narrow,
        event_types=[f"type_{i}" for i in range(99)] + ["x" * 64],
        fetch_event_types=["realm"] * 100,
        client_capabilities={f"capability_{i:02}" + "x" * 50: True for i in range(50)},
    )["queue_id"]
    assert len(event_backend.get_events(queue, member.id, -1).options.narrow) == 100


def test_register_accepts_zulip_encodings(event_backend, member):
    api = ApiClient(member)
    for params in (
        {"narrow": [["stream", "design"]]},
        {"narrow": [{"operator": "is", "operand": "dm", "negated": True}]},
        {"include_subscribers": "partial"},
        {"include_subscribers": '"partial"'},  # JSON, as Zulip reads it
        {"include_subscribers": True},
        {"client_capabilities": {"notification_settings_null": True, "user_settings_object": True}},
        {"queue_lifespan_secs": 3600, "slim_presence": True, "apply_markdown": True},
    ):
        register(api, **params)


def test_all_public_streams_is_not_for_guests(event_backend, guest, member):
    assert_error(
        ApiClient(guest).post("/register", {"all_public_streams": True}),
        400,
        "BAD_REQUEST",
        "User not authorized for this query",
    )
    register(ApiClient(member), all_public_streams=True)


def test_register_needs_authentication(event_backend, realm):
    assert_error(ApiClient().post("/register"), 401, "UNAUTHORIZED")


# --- GET /events and DELETE /events -----------------------------------------------------------


def test_events_of_a_name_change(queue_of, member, admin):
    queue = queue_of(member, event_types=["realm_user"])
    assert_success(ApiClient(admin).patch(f"/users/{member.id}", {"full_name": "Mel Renamed"}))
    body = assert_success(
        ApiClient(member).get("/events", {"queue_id": queue, "last_event_id": -1, "dont_block": True})
    )
    assert body["events"] == [
        {"id": 0, "type": "realm_user", "op": "update", "person": {"user_id": member.id, "full_name": "Mel Renamed"}}
    ]
    assert body["queue_id"] == queue
    assert poll(ApiClient(member), queue, 0) == []


def test_get_events_parameters(queue_of, member):
    queue = queue_of(member)
    api = ApiClient(member)
    # Zulip's fetch_events raises these as plain errors (the client QA pass: they had var_name).
    body = assert_error(api.get("/events", {"queue_id": queue}), 400, "BAD_REQUEST", "Missing 'last_event_id' argument")
    assert "var_name" not in body
    assert_error(api.get("/events"), 400, "BAD_REQUEST", "Missing 'queue_id' argument")
    assert_error(api.get("/events", {"queue_id": queue, "last_event_id": "x"}), 400, "REQUEST_VARIABLE_INVALID")
    assert_error(
        api.get("/events", {"queue_id": queue, "last_event_id": 5, "dont_block": True}),
        400,
        "BAD_REQUEST",
        "Event 5 was not in this queue",
    )


def test_get_events_without_a_queue_registers_one(event_backend, member):
    body = assert_success(ApiClient(member).get("/events", {"dont_block": True, "event_types": ["realm_user"]}))
    assert body["events"] == []
    assert event_backend.queue_ids_of_user(member.id) == [body["queue_id"]]


def test_another_users_queue_is_like_no_queue(queue_of, member, admin, foreign_user):
    queue = queue_of(member)
    for user in (admin, foreign_user):
        host = "zephyr.testserver" if user is foreign_user else "testserver"
        api = ApiClient(user, host=host)
        body = assert_error(
            api.get("/events", {"queue_id": queue, "last_event_id": -1, "dont_block": True}),
            400,
            "BAD_EVENT_QUEUE_ID",
            f"Bad event queue id: {queue}",
        )
        assert body["queue_id"] == queue
        assert_error(api.delete("/events", {"queue_id": queue}), 400, "BAD_EVENT_QUEUE_ID")
    assert poll(ApiClient(member), queue) == []


def test_delete_queue(queue_of, member):
    queue = queue_of(member)
    api = ApiClient(member)
    assert_success(api.delete("/events", {"queue_id": queue}))
    assert_error(api.delete("/events", {"queue_id": queue}), 400, "BAD_EVENT_QUEUE_ID")
    assert_error(api.get("/events", {"queue_id": queue, "last_event_id": -1}), 400, "BAD_EVENT_QUEUE_ID")
    assert_error(api.delete("/events"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'queue_id' argument")


@pytest.mark.parametrize("method", ["post", "options"])
@pytest.mark.parametrize("prefix", ["/api/v1", "/json"])
def test_events_answers_other_methods_with_405(member, method, prefix):
    """OPTIONS too (the fuzz QA pass: Django's empty text/html 200, without credentials)."""
    response = Client().generic(method.upper(), f"{prefix}/events")
    body = assert_error(response, 405, "BAD_REQUEST")
    assert body["allowed_methods"] == ["GET", "HEAD", "DELETE"]


def test_blocking_poll_over_http_ends_with_a_heartbeat(queue_of, member, settings):
    settings.EVENTS_HEARTBEAT_SECONDS = (0.2, 0.3)
    queue = queue_of(member)
    started = time.monotonic()
    body = assert_success(ApiClient(member).get("/events", {"queue_id": queue, "last_event_id": -1}))
    assert body["events"] == [{"id": 0, "type": "heartbeat"}]
    assert time.monotonic() - started >= 0.2


def test_polls_are_rate_limited(queue_of, member, settings):
    """Polls have their own budget per user, RATE_LIMIT_EVENTS_BY_USER, apart from the other requests'
    (shared by every server process with Redis: see tests/e2e/test_poll_rate_limit_e2e.py)."""
    queue = queue_of(member)
    settings.RATE_LIMIT_EVENTS_BY_USER = (2, 60)
    settings.RATE_LIMIT_API_BY_USER = (1, 60)
    ApiClient(member).get("/users/me")  # the general budget spent (if the queue's register had not)
    assert_error(ApiClient(member).get("/users/me"), 429, "RATE_LIMIT_HIT")
    params = {"queue_id": queue, "last_event_id": -1, "dont_block": True}
    first = ApiClient(member).get("/events", params)
    assert (first["X-RateLimit-Limit"], first["X-RateLimit-Remaining"]) == ("2", "1")
    assert ApiClient(member).get("/events", params)["X-RateLimit-Remaining"] == "0"
    response = ApiClient(member).get("/events", params)
    assert_error(response, 429, "RATE_LIMIT_HIT")
    assert int(response["Retry-After"]) > 0


def test_refused_polls_count_against_the_limit_too(queue_of, member, settings):
    queue = queue_of(member)
    settings.RATE_LIMIT_EVENTS_BY_USER = (3, 60)
    api = ApiClient(member)
    assert_error(api.get("/events", {"queue_id": queue}), 400, "BAD_REQUEST", "Missing 'last_event_id' argument")
    response = api.get("/events", {"queue_id": "x", "last_event_id": -1, "dont_block": True})
    assert_error(response, 400, "BAD_EVENT_QUEUE_ID")
    assert response["X-RateLimit-Remaining"] == "1"
    assert_success(api.get("/events", {"dont_block": True}))  # registers a queue
    assert_error(api.get("/events", {"dont_block": True}), 429, "RATE_LIMIT_HIT")
    assert_error(api.get("/events", {"queue_id": queue}), 429, "RATE_LIMIT_HIT")
    assert len(get_backend().queue_ids_of_user(member.id)) == 2


# --- the events of each user action ------------------------------------------------------------


def person_updates(user, queue) -> list[dict]:
    return [e["person"] for e in poll(ApiClient(user), queue) if e["type"] == "realm_user" and e["op"] == "update"]


def test_each_person_change_sends_its_form(queue_of, owner, admin, member, bot, realm):
    queue = queue_of(owner, event_types=["realm_user"])
    field = CustomProfileFieldFactory(realm=realm, field_type=CustomProfileField.FieldType.LONG_TEXT)
    do_change_full_name(member, "Mel M", acting_user=admin)
    do_change_user_role(member, Role.MODERATOR, acting_user=admin)
    check_update_user_custom_profile_data(member, [(field.id, "**hi**")], acting_user=member)
    check_update_user_custom_profile_data(member, [(field.id, "**hi**")], acting_user=member)  # unchanged
    check_remove_user_custom_profile_data(member, [field.id], acting_user=member)
    check_update_settings(member, changes={"timezone": "Europe/Berlin"}, acting_user=member)
    do_change_bot_owner(bot, admin, acting_user=owner)
    do_refresh_avatar(member, acting_user=member)
    do_deactivate_user(member, acting_user=admin)
    do_reactivate_user(member, acting_user=admin)
    updates = person_updates(owner, queue)
    assert updates[:6] == [
        {"user_id": member.id, "full_name": "Mel M"},
        {"user_id": member.id, "role": 300},
        {
            "user_id": member.id,
            "custom_profile_field": {"id": field.id, "value": "**hi**", "rendered_value": "<p><strong>hi</strong></p>"},
        },
        {"user_id": member.id, "custom_profile_field": {"id": field.id, "value": None}},
        {"user_id": member.id, "email": "member@example.com", "timezone": "Europe/Berlin"},
        {"user_id": bot.id, "bot_owner_id": admin.id},
    ]
    assert updates[6]["user_id"] == member.id
    assert updates[6]["avatar_version"] == 2
    assert set(updates[6]) == {"user_id", "avatar_source", "avatar_url", "avatar_url_medium", "avatar_version"}
    # Deactivation takes the member's bots along (none left: the bot now belongs to the admin).
    assert updates[7:] == [{"user_id": member.id, "is_active": False}, {"user_id": member.id, "is_active": True}]


def test_deactivating_a_user_announces_their_bots_too(queue_of, owner, admin, member, bot):
    queue = queue_of(owner, event_types=["realm_user"])
    do_deactivate_user(member, acting_user=admin)
    assert person_updates(owner, queue) == [
        {"user_id": bot.id, "is_active": False},
        {"user_id": member.id, "is_active": False},
    ]


def test_delivery_email_change_is_sent_as_each_may_see_it(queue_of, owner, member, realm):
    target = UserFactory(realm=realm, email_address_visibility=3, delivery_email="old@example.com")
    admin_queue = queue_of(owner, event_types=["realm_user"])
    member_queue = queue_of(member, event_types=["realm_user"])
    do_change_user_delivery_email(target, "new@example.com", acting_user=owner)
    assert person_updates(owner, admin_queue)[0] == {"user_id": target.id, "delivery_email": "new@example.com"}
    assert person_updates(member, member_queue)[0] == {"user_id": target.id, "delivery_email": None}
    # The API email is the hidden one either way, so no new_email event; the Gravatar changes.
    assert not any("new_email" in p for p in person_updates(member, member_queue))


def test_api_email_change_is_announced(queue_of, owner, member):
    queue = queue_of(member, event_types=["realm_user"])
    do_change_user_delivery_email(owner, "boss@example.com", acting_user=owner)
    assert {"user_id": owner.id, "new_email": "boss@example.com"} in person_updates(member, queue)


def test_new_users_are_announced_with_what_each_may_see(queue_of, owner, member, realm):
    do_set_realm_user_defaults(realm, {"email_address_visibility": 3}, acting_user=None)
    admin_queue = queue_of(owner, event_types=["realm_user"])
    member_queue = queue_of(member, event_types=["realm_user"], client_gravatar=False)
    user = do_create_user(realm, "newbie@example.com", "New Bie", acting_user=None)
    [admin_event] = poll(ApiClient(owner), admin_queue)
    [member_event] = poll(ApiClient(member), member_queue)
    assert admin_event["op"] == member_event["op"] == "add"
    assert admin_event["person"]["user_id"] == user.id
    assert admin_event["person"]["delivery_email"] == "newbie@example.com"
    assert member_event["person"]["delivery_email"] is None
    assert member_event["person"]["email"] == f"user{user.id}@parley.invalid"
    assert member_event["person"]["avatar_url"].startswith("https://secure.gravatar.com/avatar/")


def test_client_gravatar_fills_in_avatar_urls_only_for_clients_without_it(queue_of, owner, member, realm):
    # Everyone: only then may a client compute the Gravatar.
    do_set_realm_user_defaults(realm, {"email_address_visibility": 1}, acting_user=None)
    with_gravatar = queue_of(member, event_types=["realm_user"], client_gravatar=True)
    without = queue_of(member, event_types=["realm_user"], client_gravatar=False)
    do_create_user(realm, "visible@example.com", "Vis Ible", acting_user=None)
    assert poll(ApiClient(member), with_gravatar)[0]["person"]["avatar_url"] is None
    assert poll(ApiClient(member), without)[0]["person"]["avatar_url"].startswith("https://secure.gravatar.com/")


def test_profile_field_definitions_are_announced(queue_of, admin, member):
    queue = queue_of(member, event_types=["custom_profile_fields"])
    field_id = assert_success(ApiClient(admin).post("/realm/profile_fields", {"name": "Team", "field_type": 1}))["id"]
    assert_success(ApiClient(admin).delete(f"/realm/profile_fields/{field_id}"))
    events = poll(ApiClient(member), queue)
    assert [e["type"] for e in events] == ["custom_profile_fields", "custom_profile_fields"]
    assert [f["name"] for f in events[0]["fields"]] == ["Team"]
    assert events[1]["fields"] == []


def test_refused_requests_send_no_events(queue_of, admin, member, owner):
    queue = queue_of(owner)
    assert_error(
        ApiClient(admin).patch(f"/users/{member.id}", {"full_name": "Fine", "role": 100}), 400, "UNAUTHORIZED_PRINCIPAL"
    )
    assert poll(ApiClient(owner), queue) == []


def test_other_organizations_hear_nothing(queue_of, foreign_user, admin, member):
    queue = register(ApiClient(foreign_user, host="zephyr.testserver"))["queue_id"]
    do_change_full_name(member, "Mel M", acting_user=admin)
    assert poll(ApiClient(foreign_user, host="zephyr.testserver"), queue) == []


# --- registering without races -----------------------------------------------------------------


def _name_change(user, name: str) -> dict:
    return {"type": "realm_user", "op": "update", "person": {"user_id": user.id, "full_name": name}}


def test_an_event_already_in_the_state_is_not_delivered_again(event_backend, owner, member, admin):
    # A change is committed with its outbox row (what send_event_on_commit writes), but its publish
    # is still on the way when a client registers.
    with transaction.atomic():
        User.objects.filter(id=member.id).update(full_name="In The State")
        late = write_outbox_event(owner.realm_id, _name_change(member, "In The State"), [owner.id])
    queue_id, state = do_register_queue(owner, queue_options(RegisterParams(), lifespan_secs=0), None)
    assert {u["user_id"]: u["full_name"] for u in state["realm_users"]}[member.id] == "In The State"
    publish_in_order(event_backend, late)
    # The state has it, so the queue must not; a later change does reach the queue.
    do_change_full_name(member, "After The State", acting_user=admin)
    assert [e["person"].get("full_name") for e in poll(ApiClient(owner), queue_id)] == ["After The State"]


def test_register_reads_the_users_own_fields_from_its_snapshot(event_backend, member):
    loaded_earlier = User.objects.get(id=member.id)  # as the request loaded it
    User.objects.filter(id=member.id).update(full_name="Changed Meanwhile")
    _, state = do_register_queue(loaded_earlier, queue_options(RegisterParams(), lifespan_secs=0), None)
    assert state["full_name"] == "Changed Meanwhile"


def test_an_event_whose_publish_never_happened_goes_out_before_the_next(queue_of, owner, member, admin):
    queue = queue_of(owner)
    do_change_full_name(member, "Zero", acting_user=admin)
    # Committed, but the process died before publishing it.
    with transaction.atomic():
        write_outbox_event(owner.realm_id, _name_change(member, "First"), [owner.id])
    do_change_full_name(member, "Second", acting_user=admin)
    assert [e["person"]["full_name"] for e in poll(ApiClient(owner), queue)] == ["Zero", "First", "Second"]


def test_the_sweep_publishes_events_whose_publish_failed(queue_of, owner, member, admin):
    queue = queue_of(owner)
    do_change_full_name(member, "Zero", acting_user=admin)
    with transaction.atomic():
        write_outbox_event(owner.realm_id, _name_change(member, "Lost"), [owner.id])
    assert [e["person"]["full_name"] for e in poll(ApiClient(owner), queue)] == ["Zero"]
    do_sweep_event_queues(exclusive=False)
    assert [e["person"]["full_name"] for e in poll(ApiClient(owner), queue, 0)] == ["Lost"]
    do_sweep_event_queues(exclusive=False)  # published once only
    assert poll(ApiClient(owner), queue, 1) == []


def test_the_sweep_warns_only_of_events_left_unpublished_a_while(queue_of, owner, member, caplog):
    """With Redis, an event the sweep publishes is a failed publish only when it was made a while
    ago: one made just before has its own publish on its way (the race QA pass: a busy server's
    sweep warned of those)."""
    queue = queue_of(owner)
    with transaction.atomic():
        write_outbox_event(owner.realm_id, _name_change(member, "Just Now"), [owner.id])
    with caplog.at_level("DEBUG", logger="apps.events.actions"):
        do_sweep_event_queues(exclusive=False)
        assert [e["person"]["full_name"] for e in poll(ApiClient(owner), queue)] == ["Just Now"]
        assert "had not reached the event queues" not in caplog.text
        with transaction.atomic():
            row = write_outbox_event(owner.realm_id, _name_change(member, "Long Ago"), [owner.id])
        OutboxEvent.objects.filter(id=row.id).update(created=timezone.now() - timedelta(minutes=1))
        caplog.clear()
        do_sweep_event_queues(exclusive=False)
    if settings.REDIS_URL:
        assert "published 1 committed event(s) that had not reached the event queues" in caplog.text
    else:  # routine: what other processes (or the process before this one) made
        assert "passed on 1 event(s) made by another process or before this one started" in caplog.text


def test_the_sweep_publishes_an_organizations_first_event_if_its_publish_failed(event_backend, queue_of, owner, member):
    queue = queue_of(owner)
    with transaction.atomic():  # the organization's first event; its publish never happened
        write_outbox_event(owner.realm_id, _name_change(member, "First Ever"), [owner.id])
    assert poll(ApiClient(owner), queue) == []
    do_sweep_event_queues(exclusive=False)
    assert [e["person"]["full_name"] for e in poll(ApiClient(owner), queue)] == ["First Ever"]
    # The backend forgets what it published (Redis emptied, or a restart of the in-process
    # backend): a queue registered afterwards has the change in its initial state, and the sweep
    # publishing the outbox again does not send it to that queue a second time.
    later = queue_of(owner)
    forget_published_events(event_backend, owner.realm_id)
    do_sweep_event_queues(exclusive=False)
    assert poll(ApiClient(owner), later) == []


def queue_before_a_restore(queue_of, owner, member, admin) -> tuple[str, int]:
    """The owner's queue, registered after a backup of the database and given two events, then the
    restore: the database's counter and outbox as they were at the backup. Returns the queue's id
    and the counter backed up."""
    do_change_full_name(member, "Before the backup", acting_user=admin)
    backed_up = RealmEventSequence.objects.get(realm_id=owner.realm_id).seq
    queue = queue_of(owner)
    do_change_full_name(member, "Lost with the restore", acting_user=admin)
    do_change_full_name(member, "Also lost", acting_user=admin)
    RealmEventSequence.objects.filter(realm_id=owner.realm_id).update(seq=backed_up)
    OutboxEvent.objects.filter(realm_id=owner.realm_id, seq__gt=backed_up).delete()
    return queue, backed_up


def assert_queue_gone(user, queue_id: str) -> None:
    assert_error(ApiClient(user).get("/events", {"queue_id": queue_id, "last_event_id": -1}), 400,
                 "BAD_EVENT_QUEUE_ID", f"Bad event queue id: {queue_id}")  # fmt: skip


def test_a_database_restored_from_a_backup_restarts_the_event_numbering(
    event_backend, queue_of, owner, member, admin, foreign_user
):
    """The production QA pass: after a restore the database numbered events again from its older
    counter, the queues' storage (Redis) took each for one already published, and nothing reached
    any client. The sweep (also run when a server starts) deletes the organization's queues (they
    hold what the restored database no longer knows) and publishes again from the database's."""
    queue, backed_up = queue_before_a_restore(queue_of, owner, member, admin)
    stranger_queue = register(ApiClient(foreign_user, host="zephyr.testserver"))["queue_id"]

    do_sweep_event_queues(exclusive=False)
    assert_queue_gone(owner, queue)
    assert event_backend.last_published_seqs([owner.realm_id]) == {owner.realm_id: backed_up}
    fresh = queue_of(owner)
    do_change_full_name(member, "After the restore", acting_user=admin)
    assert [e["person"]["full_name"] for e in poll(ApiClient(owner), fresh)] == ["After the restore"]
    do_sweep_event_queues(exclusive=False)  # in step again: nothing more is deleted
    assert len(poll(ApiClient(owner), fresh, -1)) == 1
    assert event_backend.queue_ids_of_user(foreign_user.id) == [stranger_queue]  # another organization's stay


def test_a_restore_under_a_running_server_is_found_out_by_the_next_event(event_backend, queue_of, owner, member, admin):
    """The verification QA pass: restored under a running server, a busy organization's new events
    closed the gap before any sweep (each dropped meanwhile, old queues kept). The first new event,
    numbered no further than what the queues were given, finds it out: the organization's queues
    start again, and the events after reach the queues registered again."""
    old_queue, _ = queue_before_a_restore(queue_of, owner, member, admin)

    do_change_full_name(member, "First after the restore", acting_user=admin)
    assert_queue_gone(owner, old_queue)
    fresh = queue_of(owner)
    do_change_full_name(member, "Second after the restore", acting_user=admin)
    do_change_full_name(member, "Third after the restore", acting_user=admin)
    names = [e["person"]["full_name"] for e in poll(ApiClient(owner), fresh)]
    assert names == ["Second after the restore", "Third after the restore"]


def forget_published_events(backend, realm_id: int) -> None:
    if settings.REDIS_URL:
        get_redis().delete(f"{settings.REDIS_KEY_PREFIX}:eq:rseq:{realm_id}")
    else:
        backend._published_seq.pop(realm_id)


def test_events_are_numbered_in_commit_order(realm, member):
    """Two transactions: the one that writes its event first but commits last is numbered last."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite runs one writing transaction at a time")
    first_written, second_committed = threading.Event(), threading.Event()
    rows = {}

    def first() -> None:
        try:
            with transaction.atomic():
                rows["first"] = write_outbox_event(realm.id, _name_change(member, "first"), [member.id])
                first_written.set()
                second_committed.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=first)
    thread.start()
    assert first_written.wait(10)
    with transaction.atomic():
        rows["second"] = write_outbox_event(realm.id, _name_change(member, "second"), [member.id])
    second_committed.set()
    thread.join(10)
    seqs = dict(OutboxEvent.objects.values_list("id", "seq"))
    assert rows["first"].id < rows["second"].id
    assert seqs[rows["second"].id] + 1 == seqs[rows["first"].id]


# --- lifecycle -------------------------------------------------------------------------------------


def test_sweep_and_cleanup_command(event_backend, member, settings, capsys):
    from io import StringIO

    from django.core.management import call_command

    expired = register(ApiClient(member), queue_lifespan_secs=1)["queue_id"]
    kept = register(ApiClient(member))["queue_id"]
    time.sleep(1.1)
    out = StringIO()
    call_command("cleanup_event_queues", "--dry-run", stdout=out)
    assert expired in out.getvalue()
    assert "Dry run" in out.getvalue()
    assert len(event_backend.queue_ids_of_user(member.id)) == 2
    call_command("cleanup_event_queues", stdout=out)
    assert event_backend.queue_ids_of_user(member.id) == [kept]
    assert_error(
        ApiClient(member).get("/events", {"queue_id": expired, "last_event_id": -1, "dont_block": True}),
        400,
        "BAD_EVENT_QUEUE_ID",
    )
    assert do_sweep_event_queues(exclusive=False) == []


def test_queue_json_roundtrip_of_narrow(event_backend, member):
    narrow = [["stream", "design"], {"operator": "sender", "operand": "x@example.com", "negated": True}]
    queue = register(ApiClient(member), narrow=narrow)["queue_id"]
    options = event_backend.get_events(queue, member.id, -1).options
    assert options.narrow == (("stream", "design", False), ("sender", "x@example.com", True))
    assert json.loads(json.dumps(options.to_json()))["narrow"] == [
        ["stream", "design", False],
        ["sender", "x@example.com", True],
    ]


# --- the long-poll's credential cache --------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "code", "msg"),
    [
        (lambda user, realm: do_regenerate_api_key(user, acting_user=None), "UNAUTHORIZED", "Invalid API key"),
        (
            lambda user, realm: do_deactivate_user(user, acting_user=None),
            "USER_DEACTIVATED",
            "Account is deactivated",
        ),
        (
            lambda user, realm: do_change_user_delivery_email(user, "moved@example.com", acting_user=None),
            "UNAUTHORIZED",
            "Invalid API key",
        ),
        (
            lambda user, realm: do_set_realm_deactivated(realm, True, acting_user=None),
            "REALM_DEACTIVATED",
            "This organization has been deactivated",
        ),
    ],
)
def test_cached_poll_credentials_are_dropped_when_they_change(queue_of, owner, member, realm, change, code, msg):
    queue = queue_of(member)
    api = ApiClient(member)  # keeps sending the credentials it started with
    assert poll(api, queue) == []  # authenticated from the database, now cached
    assert poll(api, queue) == []  # from the cache
    change(member, realm)
    response = api.get("/events", {"queue_id": queue, "last_event_id": -1, "dont_block": True})
    assert_error(response, 401, code, msg)


def test_idle_queue_timeout_sets_the_queues_lifespan(event_backend, member, settings):
    api = ApiClient(member)
    default = register(api)
    assert default["idle_queue_timeout_secs"] == settings.EVENT_QUEUE_LIFESPAN_SECONDS
    mobile = register(api, idle_queue_timeout="mobile")
    assert mobile["idle_queue_timeout_secs"] == settings.EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS
    options = event_backend.get_events(mobile["queue_id"], member.id, -1).options
    assert options.lifespan_secs == settings.EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS
    assert register(api, idle_queue_timeout=json.dumps("mobile"))["idle_queue_timeout_secs"] == (
        settings.EVENT_QUEUE_MOBILE_LIFESPAN_SECONDS
    )
    # It wins over the older queue_lifespan_secs.
    assert register(api, idle_queue_timeout=3600, queue_lifespan_secs=60)["idle_queue_timeout_secs"] == 3600
    for bad in (0, -5, 8 * 24 * 3600, "desktop", True, 1.5, "[" * 1100):  # the last was a 500
        response = api.post("/register", {"idle_queue_timeout": bad})
        assert_error(response, 400, "BAD_REQUEST", "Invalid idle_queue_timeout")


def test_a_queue_with_a_short_idle_timeout_is_swept(event_backend, member):
    expired = register(ApiClient(member), idle_queue_timeout=1)["queue_id"]
    kept = register(ApiClient(member), idle_queue_timeout="mobile")["queue_id"]
    time.sleep(1.1)
    do_sweep_event_queues(exclusive=False)
    assert event_backend.queue_ids_of_user(member.id) == [kept]
    assert expired != kept
