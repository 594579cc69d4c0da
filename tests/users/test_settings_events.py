"""What settings changes tell clients: `user_settings` events to the user's own queues, what Zulip
sends others for a time zone or an email visibility, `/register`'s `user_settings` (in the shape the
Zulip mobile app requires), the legacy top-level keys, and the user_settings_changed hook."""

import pytest

from apps.users.hooks import user_settings_changed
from apps.users.settings_models import USER_SETTINGS
from apps.users.settings_values import NOTIFICATION_SOUNDS
from tests.api import ApiClient, api_for, assert_error, assert_success


def patch(user, **params):
    return assert_success(ApiClient(user).patch("/settings", params))


def register(user, **params) -> dict:
    return assert_success(api_for(user).post("/register", params))


def settings_events(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "user_settings"]


def person_updates(events: list[dict]) -> list[dict]:
    return [e["person"] for e in events if e["type"] == "realm_user" and e["op"] == "update"]


def test_each_changed_setting_is_an_event_to_its_user_only(member, admin, capture_events):
    with capture_events(member, admin) as received:
        patch(member, enter_sends=True, color_scheme=2, emojiset="text", default_language="de", enable_sounds=True)
    # In the settings' order; enable_sounds was already on: no event.
    assert settings_events(received[member.id]) == [
        {"type": "user_settings", "op": "update", "property": "enter_sends", "value": True},
        {
            "type": "user_settings",
            "op": "update",
            "property": "default_language",
            "value": "de",
            "language_name": "German",
        },
        {"type": "user_settings", "op": "update", "property": "color_scheme", "value": 2},
        {"type": "user_settings", "op": "update", "property": "emojiset", "value": "text"},
    ]
    assert received[admin.id] == []


def test_a_refused_request_sends_nothing(member, capture_events):
    with capture_events(member) as received:
        ApiClient(member).patch("/settings", {"enter_sends": True, "color_scheme": 7})
    assert received[member.id] == []


def test_a_time_zone_is_announced_to_everyone(member, admin, guest, capture_events):
    with capture_events(member, admin, guest) as received:
        patch(member, timezone="America/New_York")
    expected = {"user_id": member.id, "email": member.delivery_email, "timezone": "America/New_York"}
    for user in (admin, guest):
        assert person_updates(received[user.id]) == [expected]
    assert settings_events(received[member.id]) == [
        {"type": "user_settings", "op": "update", "property": "timezone", "value": "America/New_York"}
    ]


def test_hiding_a_public_address(member, admin, moderator, guest, capture_events):
    """From everyone to administrators only: the others lose the real address, everyone gets the new
    API email and the avatar (no longer computable from a public address)."""
    with capture_events(member, admin, moderator, guest) as received:
        patch(member, email_address_visibility=3)
    fake = f"user{member.id}@parley.invalid"
    for user in (moderator, guest):
        updates = person_updates(received[user.id])
        assert updates[0] == {"user_id": member.id, "delivery_email": None}
        assert updates[1] == {"user_id": member.id, "new_email": fake}
        assert set(updates[2]) == {"user_id", "avatar_source", "avatar_url", "avatar_url_medium", "avatar_version"}
    # The administrator could see it and still can: no delivery_email event, only the new API email.
    assert [set(p) - {"user_id"} for p in person_updates(received[admin.id])][:1] == [{"new_email"}]


def test_widening_a_hidden_address(realm, admin, moderator, member, guest, capture_events):
    """From administrators only to moderators: the moderator now sees it; the API email stays hidden."""
    patch(member, email_address_visibility=3)
    with capture_events(admin, moderator, guest) as received:
        patch(member, email_address_visibility=5)
    assert person_updates(received[moderator.id]) == [{"user_id": member.id, "delivery_email": member.delivery_email}]
    assert person_updates(received[admin.id]) == person_updates(received[guest.id]) == []


def test_bulk_changes_tell_each_user(realm, admin, member, moderator, capture_events):
    target = {"user_ids": [member.id, moderator.id], "skip_if_already_edited": False}
    with capture_events(member, moderator, admin) as received:
        patch(admin, target_users=target, web_font_size_px=14)
    event = {"type": "user_settings", "op": "update", "property": "web_font_size_px", "value": 14}
    assert received[member.id] == received[moderator.id] == [event]
    assert received[admin.id] == []


@pytest.fixture
def hook_calls():
    """Calls of user_settings_changed, by a function registered for the test only."""
    calls = []

    def record(user, changed):
        calls.append((user.id, dict(changed)))

    user_settings_changed.register(record)
    yield calls
    user_settings_changed._functions.remove(record)


def test_the_hook_hears_what_changed(member, admin, hook_calls):
    patch(member, enable_drafts_synchronization=False, enter_sends=False)  # the second is no change
    patch(admin, target_users={"user_ids": [member.id], "skip_if_already_edited": False}, emojiset="text")
    assert hook_calls == [(member.id, {"enable_drafts_synchronization": False}), (member.id, {"emojiset": "text"})]


# --- /register ------------------------------------------------------------------------------------

# What the Zulip mobile app's UserSettings (lib/api/model/initial_snapshot.dart) requires, and how.
FLUTTER_USER_SETTINGS = {
    "twenty_four_hour_time": (bool, type(None)),
    "starred_message_counts": (bool,),
    "display_emoji_reaction_users": (bool,),
    "emojiset": (str,),
    "web_inbox_show_channel_folders": (bool,),
    "presence_enabled": (bool,),
}


def test_register_gives_the_settings_object(member):
    patch(member, twenty_four_hour_time=True, emojiset="google-blob", notification_sound="ding")
    state = register(
        member,
        fetch_event_types=["user_settings"],
        client_capabilities={"notification_settings_null": True, "user_settings_object": True},
    )
    settings = state["user_settings"]
    assert set(settings) == {*USER_SETTINGS, "emojiset_choices", "available_notification_sounds"}
    for name, kinds in FLUTTER_USER_SETTINGS.items():
        assert isinstance(settings[name], kinds), name
    assert settings["emojiset"] in ("google", "google-blob", "twitter", "text")
    assert (settings["twenty_four_hour_time"], settings["emojiset"], settings["notification_sound"]) == (
        True,
        "google-blob",
        "ding",
    )
    assert {"key": "google-blob", "text": "Google blobs"} in settings["emojiset_choices"]
    assert settings["available_notification_sounds"] == list(NOTIFICATION_SOUNDS)
    assert "twenty_four_hour_time" not in state  # no legacy keys for this client


def test_clients_without_the_capability_also_get_the_legacy_keys(member):
    patch(member, twenty_four_hour_time=True, pm_content_in_desktop_notifications=False)
    # zulip-terminal's registration: no client_capabilities.
    state = register(
        member,
        event_types=["message", "update_global_notifications", "update_display_settings", "user_settings"],
        fetch_event_types=["realm_user", "update_global_notifications", "update_display_settings", "user_settings"],
    )
    assert (state["twenty_four_hour_time"], state["pm_content_in_desktop_notifications"]) == (True, False)
    assert state["user_settings"]["twenty_four_hour_time"] is True
    display = {name for name, s in USER_SETTINGS.items() if s.legacy == "display"}
    notification = {name for name, s in USER_SETTINGS.items() if s.legacy == "notification"}
    assert display >= {"color_scheme", "default_language", "emojiset", "timezone", "twenty_four_hour_time"}
    assert notification >= {"enable_sounds", "notification_sound", "presence_enabled", "wildcard_mentions_notify"}
    assert display | notification <= set(state)
    assert {"emojiset_choices", "available_notification_sounds"} <= set(state)
    assert "web_font_size_px" not in state  # a modern setting: only in the object

    with_capability = register(
        member,
        fetch_event_types=["update_global_notifications", "update_display_settings", "user_settings"],
        client_capabilities={"notification_settings_null": True, "user_settings_object": True},
    )
    assert not (display | notification) & set(with_capability)


def test_every_fetch_type_without_the_capability_has_both(member):
    state = register(member)
    assert state["user_settings"]["enter_sends"] is False
    assert state["enter_sends"] is False
    assert state["realm_user_settings_defaults"]["email_address_visibility"] == 3


@pytest.mark.django_db(transaction=True)
def test_poll_credentials_naming_a_former_api_email_are_dropped(event_backend, member):
    patch(member, email_address_visibility=3)
    fake = f"user{member.id}@parley.invalid"
    queue = register(member)["queue_id"]
    api = ApiClient(member, email=fake)  # the API email while the address is hidden
    params = {"queue_id": queue, "last_event_id": -1, "dont_block": True}
    for _ in range(2):  # from the database, then from the cache
        assert_success(api.get("/events", params))
    patch(member, email_address_visibility=1)  # now the API email is the real address
    assert_error(api.get("/events", params), 401, "UNAUTHORIZED", "Invalid API key")
    assert_success(ApiClient(member).get("/events", params))


def test_turning_draft_synchronization_off_deletes_the_stored_drafts(member, capture_events):
    """The drafts app's part of the user_settings_changed hook, reached through PATCH /settings."""
    draft = {"type": "", "to": [], "topic": "", "content": "half a thought", "timestamp": 1700000000}
    assert_success(ApiClient(member).post("/drafts", {"drafts": [draft]}))
    assert assert_success(ApiClient(member).get("/drafts"))["count"] == 1
    with capture_events(member) as received:
        patch(member, enable_drafts_synchronization=False)
    assert [e["type"] for e in received[member.id]] == ["user_settings"]  # no drafts event: clients keep theirs
    patch(member, enable_drafts_synchronization=True)
    assert assert_success(ApiClient(member).get("/drafts"))["count"] == 0
