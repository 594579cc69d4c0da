"""An organization's defaults for new users: PATCH /realm/user_settings_defaults (administrators, the
same checks as a user's settings), their event and /register state, the admin page, and new people
starting from them."""

import pytest

from apps.realms.models import AuditLogEventType, EmailVisibility, RealmAuditLog
from apps.users.actions.create_realm import do_create_realm_with_owner
from apps.users.actions.create_user import do_create_user
from apps.users.actions.realm_defaults import check_update_realm_user_defaults
from apps.users.models import BotType, RealmUserDefault
from apps.users.selectors import realm_user_default
from apps.users.settings_models import USER_SETTINGS
from tests.api import ApiClient, api_for, assert_error, assert_success


def patch_defaults(user, **params):
    return ApiClient(user).patch("/realm/user_settings_defaults", params)


def defaults_of(realm) -> dict:
    defaults = realm_user_default(realm)
    return {name: getattr(defaults, name) for name in USER_SETTINGS}


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_administrators_set_the_defaults(request, realm, role, member, capture_events):
    actor = request.getfixturevalue(role)
    with capture_events(member) as received:
        body = assert_success(patch_defaults(actor, twenty_four_hour_time=True, emojiset="text", default_language="fr"))
    assert "ignored_parameters_unsupported" not in body
    assert {k: defaults_of(realm)[k] for k in ("twenty_four_hour_time", "emojiset", "default_language")} == {
        "twenty_four_hour_time": True,
        "emojiset": "text",
        "default_language": "fr",
    }
    assert received[member.id] == [
        {"type": "realm_user_settings_defaults", "op": "update", "property": name, "value": value}
        for name, value in (("default_language", "fr"), ("twenty_four_hour_time", True), ("emojiset", "text"))
    ]
    entries = RealmAuditLog.objects.filter(event_type=AuditLogEventType.REALM_DEFAULT_USER_SETTINGS_CHANGED)
    assert {(e.acting_user_id, e.extra_data["property"], e.extra_data["new_value"]) for e in entries} == {
        (actor.id, "twenty_four_hour_time", True),
        (actor.id, "emojiset", "text"),
        (actor.id, "default_language", "fr"),
    }
    # Existing people keep their settings.
    assert member.emojiset == "google"
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm_user_settings_defaults"]}))
    assert state["realm_user_settings_defaults"]["emojiset"] == "text"
    assert {"emojiset_choices", "available_notification_sounds"} <= set(state["realm_user_settings_defaults"])


@pytest.mark.parametrize("role", ["moderator", "member", "guest"])
def test_others_may_not(request, realm, role):
    response = patch_defaults(request.getfixturevalue(role), emojiset="text")
    assert_error(response, 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    assert defaults_of(realm)["emojiset"] == "google"


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({"color_scheme": 4}, "REQUEST_VARIABLE_INVALID", "Invalid color_scheme"),
        ({"emojiset": "apple"}, "REQUEST_VARIABLE_INVALID", "Invalid emojiset"),
        ({"default_language": "xx"}, "BAD_REQUEST", "Invalid default_language"),
        ({"notification_sound": "bell"}, "BAD_REQUEST", "Invalid notification sound 'bell'"),
        ({"email_notifications_batching_period_seconds": 0}, "BAD_REQUEST", "Invalid email batching period: 0 seconds"),
        ({"translate_emoticons": "maybe"}, "REQUEST_VARIABLE_INVALID", "translate_emoticons is not valid JSON"),
    ],
)
def test_the_same_checks_as_a_users_settings(realm, admin, params, code, msg):
    before = defaults_of(realm)
    assert_error(patch_defaults(admin, enter_sends=True, **params), 400, code, msg)
    assert defaults_of(realm) == before


def test_each_persons_own_choices_are_not_defaults(realm, admin, member):
    """The time zone is a person's profile (Zulip's UserProfile, not its RealmUserDefault): no
    default of it, in the state either (the drafts QA pass: it was stored and given to new people)."""
    own = {"enable_login_emails": False, "enable_marketing_emails": False, "timezone": "UTC"}
    body = assert_success(patch_defaults(admin, enter_sends=True, **own))
    assert body["ignored_parameters_unsupported"] == ["enable_login_emails", "enable_marketing_emails", "timezone"]
    assert (defaults_of(realm)["enable_login_emails"], defaults_of(realm)["enter_sends"]) == (True, True)
    assert defaults_of(realm)["timezone"] == ""
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["realm_user_settings_defaults"]}))
    assert "timezone" not in state["realm_user_settings_defaults"]
    assert "enable_login_emails" in state["realm_user_settings_defaults"]


def test_organizations_have_their_own_defaults(realm, other_realm, admin):
    assert_success(patch_defaults(admin, color_scheme=3))
    assert (defaults_of(realm)["color_scheme"], defaults_of(other_realm)["color_scheme"]) == (3, 1)


def test_new_people_start_from_the_defaults_and_bots_do_not(realm, admin):
    check_update_realm_user_defaults(realm, {"emojiset": "twitter", "email_address_visibility": 4}, acting_user=admin)
    person = do_create_user(realm, "new@example.com", "New Person", acting_user=None)
    bot = do_create_user(
        realm, "newbot-bot@example.com", "New Bot", bot_type=BotType.GENERIC, bot_owner=admin, acting_user=None
    )
    assert (person.emojiset, person.timezone, person.email_address_visibility) == ("twitter", "", 4)
    person.refresh_from_db()
    assert (person.emojiset, person.timezone, person.email_address_visibility) == ("twitter", "", 4)
    bot.refresh_from_db()
    assert (bot.emojiset, bot.timezone, bot.email_address_visibility) == ("google", "", EmailVisibility.EVERYONE)


def test_a_new_organization_has_its_defaults(db):
    realm, owner = do_create_realm_with_owner(
        "acme", "Acme", owner_email="boss@acme.example", owner_full_name="Bea Boss", acting_user=None
    )
    defaults = RealmUserDefault.objects.get(realm=realm)
    assert defaults.email_address_visibility == EmailVisibility.ADMINS  # Zulip's default for new organizations
    assert owner.email_address_visibility == EmailVisibility.ADMINS
    demo, _ = do_create_realm_with_owner(
        "demo",
        "Demo",
        owner_email="d@demo.example",
        owner_full_name="Dee Mo",
        default_email_address_visibility=EmailVisibility.EVERYONE,
        acting_user=None,
    )
    assert RealmUserDefault.objects.get(realm=demo).email_address_visibility == EmailVisibility.EVERYONE


# --- the Django admin -----------------------------------------------------------------------------


def test_the_admin_edits_through_the_action(staff, owner, realm, member, capture_events):
    assert_success(patch_defaults(owner, enter_sends=False))  # the organization's row exists
    defaults = RealmUserDefault.objects.get(realm=realm)
    url = f"/admin/users/realmuserdefault/{defaults.id}/change/"
    page = staff.get(url)
    assert page.status_code == 200
    form = {name: value for name, value in page.context["adminform"].form.initial.items() if name in USER_SETTINGS}
    form = {name: value for name, value in form.items() if value is not False}  # unchecked boxes are not sent
    with capture_events(member) as received:
        response = staff.post(url, {**form, "color_scheme": 2, "fluid_layout_width": "on"})
    assert response.status_code == 302, response.content
    assert (defaults_of(realm)["color_scheme"], defaults_of(realm)["fluid_layout_width"]) == (2, True)
    assert [e["property"] for e in received[member.id]] == ["fluid_layout_width", "color_scheme"]
    assert (
        RealmAuditLog.objects.filter(
            event_type=AuditLogEventType.REALM_DEFAULT_USER_SETTINGS_CHANGED, acting_user=owner
        ).count()
        == 2
    )  # enter_sends was unchanged: the API call wrote nothing

    refused = staff.post(url, {**form, "email_notifications_batching_period_seconds": 0})
    assert refused.status_code == 200
    assert "Invalid email batching period: 0 seconds" in refused.content.decode()
    assert defaults_of(realm)["email_notifications_batching_period_seconds"] == 120
    assert staff.get("/admin/users/realmuserdefault/add/").status_code == 403
