"""PATCH /settings for one's own settings: every setting Zulip has, each kind of refusal (one refused
value refuses the whole request), the name, the password, the legacy aliases, and the pin on one
UPDATE for many settings."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.users.models import User
from apps.users.settings_models import USER_SETTINGS
from tests.api import ApiClient, assert_error, assert_success

# A value other than the default for every setting, of the kind the setting takes.
OTHER_VALUES = {
    "default_language": "de",
    "web_home_view": "recent",
    "web_font_size_px": 14,
    "web_line_height_percent": 122,
    "web_animate_image_previews": "never",
    "emojiset": "google-blob",
    "timezone": "Asia/Kolkata",
    "email_notifications_batching_period_seconds": 604800,
    "notification_sound": "none",
    "resolved_topic_notice_auto_read_policy": "always",
    "email_address_visibility": 4,
}


def other_value(name: str):
    if name in OTHER_VALUES:
        return OTHER_VALUES[name]
    setting = USER_SETTINGS[name]
    if setting.kind is bool:
        return not setting.default
    return max(setting.choices - {setting.default})


def patch(user, path="/settings", **params):
    return ApiClient(user).patch(path, params)


def stored(user: User, names) -> dict:
    user = User.objects.get(id=user.id)
    return {name: getattr(user, name) for name in names}


def test_the_declarations_are_zulips_settings():
    # Zulip's PATCH /settings parameters at feature level 496, besides the name, email and password.
    assert len(USER_SETTINGS) == 64
    assert {"twenty_four_hour_time", "web_inbox_show_channel_folders", "timezone", "hide_ai_features"} <= set(
        USER_SETTINGS
    )


@pytest.mark.parametrize("name", sorted(USER_SETTINGS))
def test_every_setting_can_be_changed(member, name):
    value = other_value(name)
    assert value != USER_SETTINGS[name].default
    body = assert_success(patch(member, **{name: value}))
    assert body == {"result": "success", "msg": ""}
    assert stored(member, [name]) == {name: value}
    state = assert_success(ApiClient(member).post("/register", {"fetch_event_types": ["user_settings"]}))
    assert state["user_settings"][name] == value


def test_many_settings_at_once_are_one_update(member):
    changes = {name: other_value(name) for name in sorted(USER_SETTINGS)[:10]}
    with CaptureQueriesContext(connection) as queries:
        assert_success(patch(member, **changes))
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert len(updates) == 1, updates
    assert User._meta.db_table in updates[0]
    assert stored(member, changes) == changes


def test_a_value_already_set_is_no_change(member):
    assert_success(patch(member, enter_sends=False, color_scheme=1))  # both the defaults
    with CaptureQueriesContext(connection) as queries:
        assert_success(patch(member, enter_sends=False))
    assert not [q for q in queries.captured_queries if q["sql"].upper().startswith(("UPDATE", "INSERT"))]
    assert not RealmAuditLog.objects.filter(event_type=AuditLogEventType.USER_SETTING_CHANGED).exists()


INVALID, PLAIN = "REQUEST_VARIABLE_INVALID", "BAD_REQUEST"


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"twenty_four_hour_time": "yes"}, INVALID, "twenty_four_hour_time is not valid JSON"),
        ({"twenty_four_hour_time": 1}, INVALID, "twenty_four_hour_time is not a boolean"),
        ({"color_scheme": 4}, INVALID, "Invalid color_scheme"),
        ({"color_scheme": 2.5}, INVALID, "color_scheme is not an integer"),
        ({"color_scheme": True}, INVALID, "color_scheme is not an integer"),
        ({"web_channel_default_view": 0}, INVALID, "Invalid web_channel_default_view"),
        ({"desktop_icon_count_display": 5}, INVALID, "Invalid desktop_icon_count_display"),
        ({"automatically_follow_topics_policy": 5}, INVALID, "Invalid automatically_follow_topics_policy"),
        ({"web_home_view": "recent_topics"}, INVALID, "Invalid web_home_view"),
        ({"web_animate_image_previews": "sometimes"}, INVALID, "Invalid web_animate_image_previews"),
        ({"emojiset": "apple"}, INVALID, "Invalid emojiset"),
        ({"resolved_topic_notice_auto_read_policy": "1"}, INVALID, "Invalid resolved_topic_notice_auto_read_policy"),
        ({"email_address_visibility": 6}, INVALID, "Invalid email_address_visibility"),
        ({"default_language": "en\x00"}, INVALID, "default_language must not contain null bytes"),
        ({"timezone": "Mars/Olympus_Mons"}, INVALID, "Invalid timezone 'Mars/Olympus_Mons'"),
        ({"web_font_size_px": 11}, INVALID, "web_font_size_px is too small"),
        ({"web_font_size_px": 40000}, INVALID, "web_font_size_px is too large"),
        ({"web_line_height_percent": -1}, INVALID, "web_line_height_percent is too small"),
        ({"default_language": "xx"}, PLAIN, "Invalid default_language"),
        ({"notification_sound": "bell"}, PLAIN, "Invalid notification sound 'bell'"),
        ({"email_notifications_batching_period_seconds": 0}, PLAIN, "Invalid email batching period: 0 seconds"),
        (
            {"email_notifications_batching_period_seconds": 604801},
            PLAIN,
            "Invalid email batching period: 604801 seconds",
        ),
        ({"email_notifications_batching_period_seconds": -5}, PLAIN, "Invalid email batching period: -5 seconds"),
    ],
)
def test_a_refused_value_refuses_the_whole_request(member, params, code, msg):
    """A parameter's value is refused with its name (var_name); the values Zulip checks once the
    parameters are read (check_settings_values: a language, a sound, a batching period) with a plain
    BAD_REQUEST, as Zulip does."""
    before = stored(member, USER_SETTINGS)
    body = assert_error(patch(member, enter_sends=True, full_name="New Name", **params), 400, code, msg)
    assert body.get("var_name") == (next(iter(params)) if code == INVALID else None)
    assert stored(member, USER_SETTINGS) == before
    assert User.objects.get(id=member.id).full_name == "Mel Member"
    assert not RealmAuditLog.objects.filter(modified_user=member).exists()


def test_a_parameters_refusal_comes_before_the_checks_made_once_they_are_read(member):
    """As Zulip: every parameter is read (and refused) before check_settings_values runs (the verify QA
    pass: an invalid language was reported before an invalid color_scheme sent with it)."""
    for params in ({"default_language": "xx", "color_scheme": 9}, {"color_scheme": 9, "default_language": "xx"}):
        body = assert_error(patch(member, **params), 400, INVALID, "Invalid color_scheme")
        assert body["var_name"] == "color_scheme"


def test_bots_are_refused(bot):
    assert_error(patch(bot, enter_sends=True), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.")
    assert not User.objects.get(id=bot.id).enter_sends


def test_unknown_parameters_are_reported(member):
    body = assert_success(patch(member, enter_sends=True, dense_mode=True, frobnicate=1))
    assert body["ignored_parameters_unsupported"] == ["dense_mode", "frobnicate"]
    assert User.objects.get(id=member.id).enter_sends


@pytest.mark.parametrize("path", ["/settings/display", "/settings/notifications"])
def test_the_legacy_aliases_take_every_setting(member, path):
    assert_success(patch(member, path, twenty_four_hour_time=True, enable_sounds=False))
    assert stored(member, ["twenty_four_hour_time", "enable_sounds"]) == {
        "twenty_four_hour_time": True,
        "enable_sounds": False,
    }


@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_other_methods_are_not_allowed(member, method):
    response = getattr(ApiClient(member), method)("/settings")
    assert_error(response, 405, "BAD_REQUEST", "Method Not Allowed")


def test_anonymous_requests_are_refused(realm, anonymous):
    assert_error(anonymous.patch("/settings", {"enter_sends": True}), 401, "UNAUTHORIZED")


def test_each_person_changes_only_their_own(member, admin):
    assert_success(patch(admin, enter_sends=True))
    assert (User.objects.get(id=admin.id).enter_sends, User.objects.get(id=member.id).enter_sends) == (True, False)


# --- name -----------------------------------------------------------------------------------------


def test_full_name_follows_the_existing_rules(member):
    assert_success(patch(member, full_name="  Mel Renamed  "))
    assert User.objects.get(id=member.id).full_name == "Mel Renamed"
    assert RealmAuditLog.objects.filter(
        modified_user=member, event_type=AuditLogEventType.USER_FULL_NAME_CHANGED, acting_user=member
    ).exists()
    assert_error(patch(member, full_name="a*b", enter_sends=True), 400, "BAD_REQUEST", "Invalid characters in name!")
    assert_error(patch(member, full_name=" "), 400, "BAD_REQUEST", "Name too short!")
    assert_error(patch(member, full_name=" J "), 400, "BAD_REQUEST", "Name too short!")  # Zulip: at least 2
    assert_error(patch(member, full_name="x" * 101), 400, "BAD_REQUEST", "Name too long!")
    assert (User.objects.get(id=member.id).full_name, User.objects.get(id=member.id).enter_sends) == (
        "Mel Renamed",
        False,
    )


def test_an_unchanged_name_is_not_checked_again(member):
    """Zulip's rule: an account whose name is no longer allowed (one letter, from before the rule)
    can send it back unchanged with other settings."""
    User.objects.filter(id=member.id).update(full_name="Z")
    assert_success(patch(member, full_name="Z", enter_sends=True))
    assert (User.objects.get(id=member.id).full_name, User.objects.get(id=member.id).enter_sends) == ("Z", True)


# --- password -------------------------------------------------------------------------------------

STRONG = "a much longer passphrase 8472"


def test_a_new_password_needs_the_old_one(member):
    assert_error(patch(member, new_password=STRONG), 400, "BAD_REQUEST", "Wrong password!")
    assert_error(patch(member, old_password="wrong", new_password=STRONG), 400, "BAD_REQUEST", "Wrong password!")
    assert User.objects.get(id=member.id).check_password("correct horse battery")
    too_long = "x" * 1025  # more than a password may be, where one logs in
    assert_error(patch(member, old_password="correct horse battery", new_password=too_long), 400, "BAD_REQUEST",
                 "New password is too long (limit: 1024 characters).")  # fmt: skip
    assert_success(patch(member, old_password="correct horse battery", new_password=STRONG))
    user = User.objects.get(id=member.id)
    assert user.check_password(STRONG)
    assert RealmAuditLog.objects.filter(
        modified_user=member, acting_user=member, event_type=AuditLogEventType.USER_PASSWORD_CHANGED
    ).exists()
    # The API key still works: a password is not an API credential.
    assert_success(ApiClient(member).get("/users/me"))


@pytest.mark.parametrize("weak", ["short", "password", "12345678901", "qwertyuiop"])
def test_a_weak_password_is_refused(member, weak):
    response = patch(member, old_password="correct horse battery", new_password=weak, enter_sends=True)
    assert_error(response, 400, "BAD_REQUEST", "New password is too weak!")
    user = User.objects.get(id=member.id)
    assert user.check_password("correct horse battery")
    assert not user.enter_sends


def test_guessing_the_old_password_is_limited(member, settings):
    settings.RATE_LIMIT_AUTH_FAILURES = (2, 1800)
    for _ in range(2):
        assert_error(patch(member, old_password="guess", new_password=STRONG), 400, "BAD_REQUEST", "Wrong password!")
    body = assert_error(patch(member, old_password="correct horse battery", new_password=STRONG), 400, "BAD_REQUEST")
    assert body["msg"].startswith("You're making too many attempts! Try again in ")
    assert User.objects.get(id=member.id).check_password("correct horse battery")


def test_the_password_and_settings_are_one_update(member):
    changes = {name: other_value(name) for name in sorted(USER_SETTINGS)[10:20]}
    with CaptureQueriesContext(connection) as queries:
        assert_success(patch(member, old_password="correct horse battery", new_password=STRONG, **changes))
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith("UPDATE")]
    assert len(updates) == 1, updates
    assert User.objects.get(id=member.id).check_password(STRONG)
    assert stored(member, changes) == changes
