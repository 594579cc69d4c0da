"""The Django admin: pages load for staff, edits and actions go through the actions layer."""

import json

import pytest
from django.test import Client
from django.utils.html import escape

from apps.realms.models import Realm
from apps.users.models import AvatarSource, CustomProfileField, Role, User
from tests.factories import BotFactory, CustomProfileFieldFactory, UserFactory, realm_admin_form


@pytest.mark.parametrize(
    "path",
    [
        "/admin/",
        "/admin/realms/realm/",
        "/admin/users/user/",
        "/admin/users/bot/",
        "/admin/users/customprofilefield/",
        "/admin/users/customprofilefield/add/",
        "/admin/users/user/?q=example&role__exact=400",
    ],
)
def test_pages_load(staff, bot, member, path):
    response = staff.get(path)
    assert response.status_code == 200
    assert "Parley administration" in response.content.decode()


def test_change_pages_load(staff, realm, member, bot):
    field = CustomProfileFieldFactory(realm=realm)
    for path in (
        f"/admin/realms/realm/{realm.id}/change/",
        f"/admin/users/user/{member.id}/change/",
        f"/admin/users/bot/{bot.id}/change/",
        f"/admin/users/customprofilefield/{field.id}/change/",
    ):
        assert staff.get(path).status_code == 200, path


def test_api_keys_are_not_shown_only_their_last_characters(staff, member, bot):
    """The operator QA pass: every account's API key could be copied from its page, and used as them."""
    for kind, account in (("user", member), ("bot", bot)):
        page = staff.get(f"/admin/users/{kind}/{account.id}/change/").content.decode()
        assert account.api_key not in page
        assert f"…{account.api_key[-4:]}" in page


@pytest.mark.parametrize(
    "query",
    ["api_key__startswith={key}", "api_key={key}", "password__startswith=pbkdf2", "realm__users__api_key={key}"],
)
def test_lists_cannot_be_filtered_on_secrets(staff, member, bot, query):
    """The verify QA pass: `?api_key__startswith=` told by its count whether a key began so, and a
    whole key came out a character at a time."""
    for kind in ("user", "bot"):
        response = staff.get(f"/admin/users/{kind}/?" + query.format(key=member.api_key))
        assert response.status_code == 400
        assert member.api_key[:8] not in response.content.decode()


def test_lists_are_still_filtered_on_what_they_offer(staff, member, bot):
    page = staff.get(f"/admin/users/user/?role__exact=400&realm__id__exact={member.realm_id}").content.decode()
    assert f"/admin/users/user/{member.id}/change/" in page


def test_users_page_lists_people_and_bots_page_lists_bots(staff, member, bot):
    users_page = staff.get("/admin/users/user/").content.decode()
    bots_page = staff.get("/admin/users/bot/").content.decode()
    assert f"/admin/users/user/{member.id}/change/" in users_page
    assert f"/admin/users/user/{bot.id}/change/" not in users_page
    assert f"/admin/users/bot/{bot.id}/change/" in bots_page
    assert f"/admin/users/bot/{member.id}/change/" not in bots_page


def test_staff_change_their_password_where_everyone_does(staff, owner):
    """The admin's own page checks the old password under no limit and audits nothing: it sends
    them to the web app, whose settings do both."""
    old = User.objects.get(id=owner.id).password
    for method in ("get", "post"):
        response = getattr(staff, method)("/admin/password_change/", {"old_password": "x", "new_password1": "y"})
        assert (response.status_code, response["Location"]) == (302, "/")
    assert User.objects.get(id=owner.id).password == old


def test_non_staff_are_sent_to_the_login_page(member):
    client = Client()
    client.force_login(member)
    response = client.get("/admin/users/user/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_staff_logs_in_with_email_and_password(owner):
    owner.is_staff = owner.is_superuser = True
    owner.save()
    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/", {"username": owner.delivery_email, "password": "correct horse battery"}
    )
    assert response.status_code == 302
    assert client.get("/admin/").status_code == 200
    assert Client().post("/admin/login/", {"username": owner.delivery_email, "password": "wrong"}).status_code == 200


def action(staff, model_path: str, name: str, ids: list[int]):
    return staff.post(f"/admin/{model_path}/", {"action": name, "_selected_action": ids, "confirmed": "yes"})


def test_deactivate_reactivate_and_rotate_actions(staff, member, bot):
    old_key = member.api_key
    action(staff, "users/user", "deactivate", [member.id])
    member.refresh_from_db()
    bot.refresh_from_db()
    assert not member.is_active
    assert not bot.is_active
    action(staff, "users/user", "reactivate", [member.id])
    member.refresh_from_db()
    assert member.is_active
    action(staff, "users/user", "rotate_api_key", [member.id])
    member.refresh_from_db()
    assert member.api_key != old_key
    assert len(member.api_key) == 32


def test_actions_that_cannot_be_undone_by_a_click_ask_first(staff, member):
    # The ops QA pass: deactivating took effect at the first click. First the rows and what happens...
    other = UserFactory(realm=member.realm)
    old_key = member.api_key
    for name in ("deactivate", "rotate_api_key"):
        page = staff.post("/admin/users/user/", {"action": name, "_selected_action": [member.id, other.id]})
        assert page.status_code == 200
        text = page.content.decode()
        for shown in ("Are you sure?", escape(str(member)), escape(str(other)), 'name="confirmed" value="yes"'):
            assert shown in text
        assert f'name="action" value="{name}"' in text
    member.refresh_from_db()
    assert (member.is_active, member.api_key) == (True, old_key)
    # ... then, once "Yes" is pressed (the page's form), the action.
    response = staff.post(
        "/admin/users/user/", {"action": "deactivate", "_selected_action": [member.id], "confirmed": "yes"}
    )
    assert response.status_code == 302
    member.refresh_from_db()
    assert not member.is_active
    # An action that a click undoes does not ask.
    assert (
        staff.post("/admin/users/user/", {"action": "reactivate", "_selected_action": [member.id]}).status_code == 302
    )
    member.refresh_from_db()
    assert member.is_active


def test_deactivate_action_spares_the_only_owner(staff, owner):
    response = action(staff, "users/user", "deactivate", [owner.id])
    owner.refresh_from_db()
    assert owner.is_active
    assert response.status_code == 302


def test_edit_user_goes_through_validation(staff, member):
    url = f"/admin/users/user/{member.id}/change/"
    response = staff.post(url, {"full_name": "Bad*Name", "role": Role.MEMBER})
    assert response.status_code == 200
    assert "Invalid characters in name!" in response.content.decode()
    response = staff.post(url, {"full_name": "Good Name", "role": Role.MODERATOR})
    assert response.status_code == 302
    member.refresh_from_db()
    assert (member.full_name, member.role) == ("Good Name", Role.MODERATOR)


def test_a_user_whose_old_name_is_no_longer_allowed_can_still_be_edited(staff, member):
    User.objects.filter(id=member.id).update(full_name="Z")  # one letter: allowed before
    url = f"/admin/users/user/{member.id}/change/"
    assert staff.post(url, {"full_name": "Z", "role": Role.MODERATOR}).status_code == 302
    member.refresh_from_db()
    assert (member.full_name, member.role) == ("Z", Role.MODERATOR)
    response = staff.post(url, {"full_name": "Y", "role": Role.MODERATOR})
    assert "Name too short!" in response.content.decode()


def test_the_only_owner_cannot_be_demoted_in_the_admin(staff, owner):
    response = staff.post(
        f"/admin/users/user/{owner.id}/change/", {"full_name": owner.full_name, "role": Role.MEMBER, "is_staff": "on"}
    )
    assert response.status_code == 200
    owner.refresh_from_db()
    assert owner.role == Role.OWNER


def test_realm_actions_and_edit(staff, realm):
    action(staff, "realms/realm", "deactivate", [realm.id])
    assert Realm.objects.get(id=realm.id).deactivated
    action(staff, "realms/realm", "reactivate", [realm.id])
    assert not Realm.objects.get(id=realm.id).deactivated
    response = staff.post(f"/admin/realms/realm/{realm.id}/change/", realm_admin_form(realm, name="Renamed"))
    assert response.status_code == 302
    assert Realm.objects.get(id=realm.id).name == "Renamed"


def test_profile_field_add_edit_delete(staff, realm):
    response = staff.post(
        "/admin/users/customprofilefield/add/",
        {"realm": realm.id, "name": "Editor", "hint": "", "field_type": 3,
         "field_data": json.dumps({"vim": {"text": "Vim", "order": "1"}}), "editable_by_user": "on"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    field = CustomProfileField.objects.get(realm=realm, name="Editor")
    assert field.order == field.id
    response = staff.post(
        "/admin/users/customprofilefield/add/",
        {"realm": realm.id, "name": "Broken", "field_type": 3, "field_data": "{}"},
    )
    assert "Field must have at least one choice." in response.content.decode()
    staff.post(f"/admin/users/customprofilefield/{field.id}/delete/", {"post": "yes"})
    assert not CustomProfileField.objects.filter(id=field.id).exists()


def test_nothing_is_deleted_or_added_outside_the_actions(staff, member):
    assert staff.get("/admin/users/user/add/").status_code == 403
    assert staff.get(f"/admin/users/user/{member.id}/delete/").status_code == 403
    assert User.objects.filter(id=member.id).exists()


def test_bot_page_shows_owner(staff, realm, member):
    bot = BotFactory(realm=realm, bot_owner=member)
    UserFactory(realm=realm)
    assert member.full_name in staff.get("/admin/users/bot/").content.decode()
    assert staff.get(f"/admin/users/bot/{bot.id}/change/").status_code == 200


def test_staff_remove_uploaded_avatars(staff, member, admin, capture_events):
    User.objects.filter(id=member.id).update(avatar_source=AvatarSource.UPLOADED, avatar_hash="ab" * 16)
    with capture_events(admin) as received:
        action(staff, "users/user", "remove_avatar", [member.id, admin.id])  # the admin's is Gravatar's
    member.refresh_from_db()
    assert (member.avatar_source, member.avatar_hash, member.avatar_version) == (AvatarSource.GRAVATAR, "", 2)
    [event] = received[admin.id]
    assert event["person"]["user_id"] == member.id
    assert event["person"]["avatar_source"] == "G"
