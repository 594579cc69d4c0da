"""/join/<key>/: the sign-up page an invitation link opens. The account it creates has the link's
role, channels, groups and welcome text; a link that cannot be used is one page, whatever the reason."""

from datetime import timedelta
from urllib.parse import urlparse

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.groups.actions.groups import check_deactivate_user_group
from apps.groups.selectors import group_member_ids
from apps.invites.actions.invites import do_create_multiuse_invite, do_revoke_multiuse_invite
from apps.invites.models import MultiuseInvite
from apps.messages.models import Message
from apps.realms.actions import do_set_realm_deactivated
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.subscriptions.selectors import subscribed_stream_ids
from apps.users.models import Role, User
from tests.api import ApiClient, assert_success
from tests.factories import RealmFactory, UserFactory
from tests.web.conftest import PASSWORD, browser, join_path, submit

FORM = {"email": "newbie@example.com", "full_name": "Nora Newbie", "password": PASSWORD}


def account_count() -> int:
    return User.objects.count()


# --- a usable link ---------------------------------------------------------------------------------


def test_the_link_opens_a_form_without_javascript(invite, realm):
    assert reverse("join", kwargs={"key": invite.key}) == urlparse(invite.link_url).path
    page = browser().get(join_path(invite))
    html = page.content.decode()
    assert page.status_code == 200
    assert f"<h1>Join {realm.name}</h1>" in html
    assert "as member" in html
    for name in ("email", "full_name", "password", "csrfmiddlewaretoken"):
        assert f'name="{name}"' in html
    assert "<script" not in html
    assert "no-store" in page["Cache-Control"]
    assert page["X-Frame-Options"] == "DENY"


def test_signing_up_gives_the_links_role_channels_groups_and_welcome(
    realm, admin, make_stream, make_group, welcome_bot, capture_events
):
    design = make_stream("design", admin)
    secret = make_stream("secret", admin, private=True)
    team = make_group(admin, "team")
    invite = do_create_multiuse_invite(
        realm,
        invited_as=Role.MODERATOR,
        streams=[design, secret],
        groups=[team],
        welcome_message_custom_text="Say hi in #**design**!",
        acting_user=admin,
    )
    client = browser()
    with capture_events(admin) as received:
        response = submit(client, join_path(invite), FORM)
    assert (response.status_code, response["Location"]) == (302, "/account/")
    user = User.objects.get(delivery_email="newbie@example.com")
    assert (user.full_name, user.role, user.realm, user.is_bot) == ("Nora Newbie", Role.MODERATOR, realm, False)
    assert user.check_password(PASSWORD)
    assert set(subscribed_stream_ids(user)) == {design.id, secret.id}
    assert user.id in group_member_ids(team.id)
    [welcome] = Message.objects.filter(sender=welcome_bot, user_messages__user=user)
    assert welcome.content.endswith("Say hi in #**design**!")
    assert {"type": "realm_user", "op": "add"}.items() <= received[admin.id][0].items()
    # Logged in: the account page shows the new key, which works.
    page = client.get("/account/").content.decode()
    assert user.api_key in page
    assert_success(ApiClient(user).get("/users/me"))
    # The link is reusable.
    assert submit(browser(), join_path(invite), {**FORM, "email": "second@example.com"}).status_code == 302
    assert not MultiuseInvite.objects.get(id=invite.id).revoked


def test_channels_and_groups_gone_since_are_skipped(realm, admin, make_stream, make_group):
    old = make_stream("old", admin)
    gone = make_group(admin, "gone")
    invite = do_create_multiuse_invite(realm, streams=[old], groups=[gone], acting_user=admin)
    do_deactivate_stream(old, acting_user=admin)
    check_deactivate_user_group(gone.id, acting_user=admin)
    assert submit(browser(), join_path(invite), FORM).status_code == 302
    user = User.objects.get(delivery_email="newbie@example.com")
    assert list(subscribed_stream_ids(user)) == []
    assert user.id not in group_member_ids(gone.id)


def test_the_organizations_welcome_text_when_the_link_has_none(realm, admin, invite, welcome_bot):
    realm.welcome_message_custom_text = "Our rules."
    realm.save()
    submit(browser(), join_path(invite), FORM)
    user = User.objects.get(delivery_email="newbie@example.com")
    assert Message.objects.get(sender=welcome_bot, user_messages__user=user).content.endswith("Our rules.")


# --- what the form refuses --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"email": "MEMBER@example.com"}, "email", "An account with this email address already exists in Parley Test"),
        ({"email": "not an address"}, "email", "Enter a valid email address."),
        ({"full_name": "Bad*Name"}, "full_name", "Invalid characters in name!"),
        ({"full_name": "   "}, "full_name", "This field is required."),
        ({"full_name": "Null\x00Byte"}, "full_name", "Null characters are not allowed."),
        ({"password": "password"}, "password", "This password is too common."),
        ({"password": "12345678901"}, "password", "This password is entirely numeric."),
        ({"password": "short"}, "password", "This password is too short."),
        ({"password": "newbie@example.com"}, "password", "The password is too similar to the email address."),
        (
            {"full_name": "Quentin Quartermaine", "password": "QuentinQuartermaine"},
            "password",
            "The password is too similar to the full name.",
        ),
        ({"password": ""}, "password", "This field is required."),
    ],
)
def test_form_errors_create_nothing(invite, member, changes, field, message):
    before = account_count()
    response = submit(browser(), join_path(invite), {**FORM, **changes})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert message in " ".join(response.context["form"].errors[field])
    assert account_count() == before


def test_every_field_error_is_shown_at_once(invite):
    response = submit(browser(), join_path(invite), {"email": "x", "full_name": "", "password": "1"})
    assert set(response.context["form"].errors) == {"email", "full_name", "password"}


def test_a_post_without_the_csrf_token_is_refused(invite):
    before = account_count()
    response = browser().post(join_path(invite), FORM)
    assert response.status_code == 403
    assert account_count() == before


# --- links that cannot be used: one page --------------------------------------------------------------


def test_unusable_links_are_one_indistinguishable_page(realm, admin, other_realm):
    revoked = do_create_multiuse_invite(realm, acting_user=admin)
    do_revoke_multiuse_invite(revoked, acting_user=admin)
    expired = do_create_multiuse_invite(realm, acting_user=admin)
    MultiuseInvite.objects.filter(id=expired.id).update(expiry_date=timezone.now() - timedelta(seconds=1))
    foreign = do_create_multiuse_invite(other_realm, acting_user=None)
    usable = do_create_multiuse_invite(realm, acting_user=admin)
    paths = [join_path(revoked), join_path(expired), join_path(foreign), "/join/" + "a" * 32 + "/",
             "/join/not-a-key/", "/join/" + usable.key.upper() + "/"]  # fmt: skip
    pages = [browser().get(path) for path in paths]
    assert {page.status_code for page in pages} == {404}
    assert len({page.content for page in pages}) == 1
    html = pages[0].content.decode()
    assert "This invitation link cannot be used" in html
    assert "<form" not in html
    # Posting to them creates nothing either, and shows the same page.
    before = account_count()
    for path in paths:
        client = browser()
        form_page = client.get(join_path(usable))  # a CSRF token, from a page that has a form
        assert submit(client, path, FORM, page=form_page).content == pages[0].content
    assert account_count() == before


def test_a_link_revoked_while_the_form_is_open_lets_nobody_in(invite, admin):
    client = browser()
    page = client.get(join_path(invite))
    do_revoke_multiuse_invite(invite, acting_user=admin)
    before = account_count()
    response = submit(client, join_path(invite), FORM, page=page)
    assert response.status_code == 404
    assert "This invitation link cannot be used" in response.content.decode()
    assert account_count() == before


def test_links_of_a_deactivated_organization_are_unusable(invite, realm):
    do_set_realm_deactivated(realm, True, acting_user=None)
    assert browser().get(join_path(invite)).status_code == 404


def test_another_organizations_host_shows_its_own_page(invite, other_realm):
    page = browser("zephyr.testserver").get(join_path(invite))
    assert page.status_code == 404
    assert "This invitation link cannot be used" in page.content.decode()
    assert "Zephyr" in page.content.decode()  # the organization of this host, not the link's


def test_an_unknown_host_has_no_organization(invite):
    page = browser("nowhere.testserver").get(join_path(invite))
    assert page.status_code == 404
    assert "There is no organization here" in page.content.decode()


def test_links_of_subdomain_organizations_work_on_their_host(admin):
    team = RealmFactory(string_id="team", name="The Team")
    UserFactory(realm=team, role=Role.OWNER)
    invite = do_create_multiuse_invite(team, acting_user=None)
    assert invite.link_url.startswith("http://team.testserver/join/")
    response = submit(browser("team.testserver"), join_path(invite), FORM)
    assert response.status_code == 302
    assert User.objects.get(delivery_email="newbie@example.com").realm == team
