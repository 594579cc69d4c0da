"""What the web app offers as the organization lets each person do it, in a real browser: inviting
colleagues (the "Invite people" panel: the owner invites people by email as moderators into a
channel, is told of addresses the server refuses, creates a link that a newcomer opens to the
sign-up page, and revokes an invitation), creating channels, and the organization's settings and
people for its administrators."""

import re

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.groups.models import SystemGroups
from apps.groups.selectors import get_system_group
from apps.invites.models import EmailInvitation, MultiuseInvite
from apps.users.models import Role
from apps.users.selectors import api_email
from tests.e2e.test_web_app import SCREENSHOTS, give_passwords, log_in, web_server  # noqa: F401 (a fixture)
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e

# Whether an element of the panel is within what the panel (it scrolls) and the window show.
SEEN_IN_THE_PANEL = """(selector) => {
  const shown = document.querySelector(selector).getBoundingClientRect();
  const panel = document.querySelector("#invite").getBoundingClientRect();
  return shown.top >= panel.top && shown.bottom <= Math.min(panel.bottom, window.innerHeight);
}"""

# Whether the message box, where the window shows it, covers none of a panel.
COMPOSE_CLEAR_OF = """(selector) => {
  const panel = document.querySelector(selector).getBoundingClientRect();
  const box = document.querySelector("#compose").getBoundingClientRect();
  const boxSeen = box.top < window.innerHeight && box.bottom > 0;
  return !(boxSeen && box.top < Math.min(panel.bottom, window.innerHeight) && box.bottom > panel.top);
}"""


def test_the_owner_invites_by_email_and_by_link(web_server, people, chromium):  # noqa: F811
    server, general = web_server
    realm, owner, member = people
    api = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=server.url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, owner.delivery_email)
        page.click("#open-invite")
        expect(page.locator("#invite")).to_be_visible()
        expect(page.locator("#invite-emails")).to_be_focused()
        expect(page.locator("#invite-role option")).to_have_count(5)
        expect(page.locator("#invite-role")).to_have_value(str(Role.MEMBER))

        page.fill("#invite-emails", "Ada Lovelace <ada@example.org>,\ngrace@example.org")  # counted as two
        page.select_option("#invite-role", str(Role.MODERATOR))
        page.uncheck("#invite-default-channels")
        page.check(f"#invite-channels input[data-stream-id='{general.id}']")
        page.select_option("#invite-expires", "1440")
        page.click("#invite-send")
        expect(page.locator("#invite-status")).to_have_text("2 invitations were sent.")
        expect(page.locator("#invite-emails")).to_have_value("")
        # (The API lists them: the test's own database is not read while the browser runs.)
        sent = sorted(api.call_endpoint(url="invites", method="GET")["invites"], key=lambda i: i["email"])
        assert [(i["email"], i["invited_as"], i["stream_ids"]) for i in sent] == [
            ("ada@example.org", Role.MODERATOR, [general.id]),
            ("grace@example.org", Role.MODERATOR, [general.id]),
        ]
        assert sent[0]["expiry_date"] - sent[0]["invited"] == 86400

        # An address the server refuses is named, and nothing is sent; said within sight on a
        # phone (the verify QA pass: below the panel's fold there and at 1280 by 720).
        page.set_viewport_size({"width": 375, "height": 740})
        page.fill("#invite-emails", "not an address")
        page.click("#invite-send")
        expect(page.locator("#invite-status")).to_contain_text("Not sent:")
        assert page.evaluate(SEEN_IN_THE_PANEL, "#invite-status")
        expect(page.locator("#invite-status")).to_contain_text("not an address")
        assert len(api.call_endpoint(url="invites", method="GET")["invites"]) == 2

        # Someone with an account already among others: the others are invited, the box keeps only
        # the one refused, and says why (the web admin QA pass: "Not sent", all kept, sent again).
        page.fill("#invite-emails", f"{member.delivery_email}, linus@example.org")
        page.click("#invite-send")
        expect(page.locator("#invite-status")).to_have_text(
            f"Sent to the others; not to {member.delivery_email}: Already has an account."
        )
        expect(page.locator("#invite-emails")).to_have_value(member.delivery_email)
        expect(page.locator("#invite-list")).to_contain_text("linus@example.org as Moderator")
        page.fill("#invite-emails", "")

        # An invitation made elsewhere (another of the owner's browsers) shows at once, as does a new
        # name of the organization.
        request = {"invitee_emails": "eve@example.org", "stream_ids": []}
        made = api.call_endpoint(url="invites", method="POST", request=request)
        assert made["result"] == "success", made
        expect(page.locator("#invite-list")).to_contain_text("eve@example.org as Member")
        assert api.call_endpoint(url="realm", method="PATCH", request={"name": "Acme Team"})["result"] == "success"
        expect(page.locator(".realm-name")).to_have_text("Acme Team")
        expect(page).to_have_title(re.compile(r"· Acme Team$"))

        # A reusable link, as a member with the default channels, valid until revoked.
        page.select_option("#invite-role", str(Role.MEMBER))
        page.check("#invite-default-channels")
        page.uncheck(f"#invite-channels input[data-stream-id='{general.id}']")
        page.select_option("#invite-expires", "null")
        page.click("#invite-make-link")
        expect(page.locator("#invite-link")).to_have_value(re.compile(r"/join/\w+/$"))
        link = page.locator("#invite-link").input_value()
        # Listed, the newest last, each with its Revoke button.
        listed = page.locator("#invite-list li")
        expect(listed).to_have_count(5)  # ada, grace, linus, eve, the link
        expect(listed.nth(0)).to_contain_text("ada@example.org as Moderator, into #general, until")
        expect(listed.nth(4)).to_contain_text("A reusable link as Member, until revoked")
        page.screenshot(path=str(SCREENSHOTS / "invite-panel.png"))
        # An email invitation is sent again (a link has nothing to resend).
        expect(listed.nth(4).get_by_role("button", name=re.compile("again$"))).to_have_count(0)
        page.get_by_role("button", name="Send the invitation to grace@example.org again").click()
        expect(page.locator("#invite-status")).to_have_text("The invitation was sent to grace@example.org again.")
        # Revoking asks first (the web admin QA pass: a second Enter revoked the next invitation).
        asked = []
        revoke_ada = page.get_by_role("button", name="Revoke the invitation of ada@example.org")
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        revoke_ada.click()
        assert asked == ["Revoke the invitation of ada@example.org?"]
        expect(listed).to_have_count(5)
        page.once("dialog", lambda dialog: dialog.accept())
        revoke_ada.click()
        expect(page.locator("#invite-status")).to_have_text("The invitation was revoked.")
        expect(listed).to_have_count(4)
        expect(page.locator("#invite-list")).not_to_contain_text("ada@example.org")
        emails = [i["email"] for i in api.call_endpoint(url="invites", method="GET")["invites"] if "email" in i]
        assert emails == ["grace@example.org", "linus@example.org", "eve@example.org"]
        page.keyboard.press("Escape")
        expect(page.locator("#invite")).to_be_hidden()
        expect(page.locator("#open-invite")).to_be_focused()  # back where it was opened

        newcomer = browser.new_context().new_page()
        newcomer.goto(link)
        expect(newcomer.locator("input[name=full_name]")).to_be_visible()
        browser.close()
    sent = EmailInvitation.objects.filter(realm=realm)
    assert {invite.include_realm_default_subscriptions for invite in sent} == {False}
    invite = MultiuseInvite.objects.get(realm=realm)
    assert link == f"{server.url}/join/{invite.key}/"
    assert (invite.invited_as, invite.include_realm_default_subscriptions) == (Role.MEMBER, True)
    assert invite.expiry_date is None
    assert not invite.streams.exists()


def test_what_a_member_is_offered_follows_the_organizations_settings(
    people, live_server_factory, collected_static, chromium
):
    """The web admin QA pass: a member whom the organization lets create private channels only was
    offered public ones (refused on Create), and one who may create none the form."""
    realm, _, member = people
    admins = get_system_group(realm.id, SystemGroups.ADMINISTRATORS)
    realm.can_create_public_channel_group = admins
    realm.save(update_fields=["can_create_public_channel_group"])
    give_passwords(member)
    server = live_server_factory(STATIC_ROOT=collected_static)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, member.delivery_email)
        page.click("#browse-channels")
        expect(page.locator("#create-channel")).to_be_visible()
        private = page.locator("#new-channel-private")
        expect(private).to_be_checked()
        expect(private).to_be_disabled()
        page.fill("#new-channel-name", "secrets")
        page.press("#new-channel-name", "Enter")
        expect(page.locator("#channels")).to_contain_text("secrets")
        page.click("#browse-channels")
        expect(private).to_be_checked()  # still, after the form's reset
        browser.close()
    realm.can_create_private_channel_group = admins
    realm.save(update_fields=["can_create_private_channel_group"])
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, member.delivery_email)
        page.click("#browse-channels")
        expect(page.locator("#all-channels")).to_contain_text("secrets")
        expect(page.locator("#create-channel")).to_be_hidden()
        browser.close()


def test_an_owner_runs_the_organization_from_the_web_app(people, live_server_factory, collected_static, chromium):
    """The web admin QA pass: renaming the organization, changing a role and deactivating someone who
    left took the API or the Django admin."""
    realm, owner, member = people
    admin = UserFactory(realm=realm, role=Role.ADMINISTRATOR, delivery_email="ann@e2e.example", full_name="Ann Admin")
    give_passwords(owner, admin)
    server = live_server_factory(STATIC_ROOT=collected_static)
    api = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=server.url)
    role_of = lambda user: api.get_user_by_id(user.id)["user"]["role"]  # noqa: E731
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, owner.delivery_email)
        page.click("#open-settings")
        page.click("#open-organization")  # an administrator's part of the settings
        expect(page.locator("#settings")).to_be_hidden()
        expect(page.locator("#organization-name")).to_be_focused()
        page.fill("#organization-name", "Acme Team")
        page.fill("#organization-description", "Where Acme talks.")
        page.click("#organization-form button[type=submit]")
        expect(page.locator("#organization-status")).to_have_text("Saved.")
        expect(page.locator(".realm-name")).to_have_text("Acme Team")
        server_settings = api.get_server_settings()
        assert (server_settings["realm_name"], server_settings["realm_description"]) == (
            "Acme Team",
            "<p>Where Acme talks.</p>",
        )

        people_listed = page.locator("#people-admin li")
        expect(people_listed).to_have_count(3)
        page.screenshot(path=str(SCREENSHOTS / "organization-panel.png"))
        mick = page.locator(f"#people-admin li[data-user-id='{member.id}']")
        # A role chosen is given with the row's button, not by the menu alone (the web admin QA pass:
        # arrow keys on the menu gave roles at once, and the focus moved to someone else's menu).
        menu = mick.get_by_label("Role of Mick Member", exact=True)
        give = mick.get_by_role("button", name="Change the role of Mick Member")
        expect(give).to_be_disabled()
        menu.focus()
        page.keyboard.press("ArrowUp")
        expect(menu).to_have_value(str(Role.MODERATOR))
        expect(give).to_be_enabled()
        expect(menu).to_be_focused()
        assert role_of(member) == Role.MEMBER
        give.click()
        expect(page.locator("#people-admin-status")).to_have_text("Mick Member's role was changed.")
        assert role_of(member) == Role.MODERATOR
        expect(menu).to_be_focused()  # the same person's menu, drawn again
        expect(give).to_be_disabled()
        page.once("dialog", lambda dialog: dialog.accept())
        mick.get_by_role("button", name="Deactivate Mick Member").click()
        expect(page.locator("#people-admin-status")).to_have_text("Mick Member was deactivated.")
        expect(mick).to_contain_text("(deactivated)")
        assert api.get_user_by_id(member.id)["user"]["is_active"] is False
        mick.get_by_role("button", name="Reactivate Mick Member").click()
        expect(mick).not_to_contain_text("(deactivated)")
        assert api.get_user_by_id(member.id)["user"]["is_active"] is True
        # In one column (a laptop at 200% zoom), the message box stays below the panel, not over it
        # (the web admin QA pass: it took nearly half of the panel's room).
        page.set_viewport_size({"width": 640, "height": 400})
        page.locator("#people-admin-title").scroll_into_view_if_needed()  # the panel is taller than the window
        assert page.evaluate(COMPOSE_CLEAR_OF, "#organization")
        # On a phone its rows fit: no sideways scrolling (the verify QA pass: Deactivate was cut off).
        page.set_viewport_size({"width": 390, "height": 844})
        assert page.evaluate(
            "(panel) => panel.scrollWidth <= panel.clientWidth", page.locator("#organization").element_handle()
        )
        page.set_viewport_size({"width": 1200, "height": 800})
        page.keyboard.press("Escape")
        expect(page.locator("#organization")).to_be_hidden()
        expect(page.locator("#open-settings")).to_be_focused()
        # Another view closes the panel, as it closes the others.
        page.click("#open-settings")
        page.click("#open-organization")
        page.click("#nav-starred")
        expect(page.locator("#narrow-title")).to_have_text("Starred messages")
        expect(page.locator("#organization")).to_be_hidden()

        # An administrator may not change an owner's role, nor give it.
        _, ann = log_in(browser, server.url, admin.delivery_email)
        ann.click("#open-settings")
        ann.click("#open-organization")
        expect(ann.get_by_label("Role of Olive Owner", exact=True)).to_be_disabled()
        expect(ann.get_by_label("Role of Mick Member", exact=True).locator("option[value='100']")).to_be_disabled()
        expect(ann.get_by_role("button", name="Deactivate Olive Owner")).to_have_count(0)  # an owner's to do
        # What another administrator changes shows in the open panel.
        assert api.update_user_by_id(member.id, role=Role.MEMBER)["result"] == "success"
        mick_menu = ann.get_by_label("Role of Mick Member", exact=True)
        expect(mick_menu).to_have_value(str(Role.MEMBER))
        # A role chosen but not yet given stays chosen as others' changes are drawn.
        mick_menu.select_option(str(Role.MODERATOR))
        assert api.update_user_by_id(owner.id, full_name="Olive Owen")["result"] == "success"
        expect(ann.locator("#people-admin")).to_contain_text("Olive Owen")
        expect(mick_menu).to_have_value(str(Role.MODERATOR))
        expect(ann.get_by_role("button", name="Change the role of Mick Member")).to_be_enabled()

        # Ann is made a member while her panel is open: it closes, and the page says a reload shows
        # what her new role lets her do; made an administrator again, the reload gives her the panel.
        assert api.update_user_by_id(admin.id, role=Role.MEMBER)["result"] == "success"
        expect(ann.locator("#organization")).to_be_hidden()
        expect(ann.locator("#open-organization")).to_be_hidden()
        expect(ann.locator("#notice")).to_contain_text("Your role is now Member")
        ann.click("#notice-later")
        expect(ann.locator("#notice")).to_be_hidden()
        assert api.update_user_by_id(admin.id, role=Role.ADMINISTRATOR)["result"] == "success"
        expect(ann.locator("#notice")).to_contain_text("Your role is now Organization administrator")
        with ann.expect_navigation():
            ann.click("#notice-reload")
        expect(ann.locator("#connection")).to_have_attribute("data-state", "connected")
        expect(ann.locator("#notice")).to_be_hidden()
        ann.click("#open-settings")
        ann.click("#open-organization")
        expect(ann.locator("#people-admin li")).to_have_count(3)
        browser.close()
    # A member has no such panel.
    give_passwords(member)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, member.delivery_email)
        expect(page.locator("#open-organization")).to_have_count(0)
        browser.close()


def test_what_the_administration_panels_show_follows_the_organization(
    people, live_server_factory, collected_static, chromium
):
    """The web admin QA pass: a revoked link stayed on show to copy, two alike links read the same, the
    invitation's channels and the organization's form stayed as the panel opened with, "Saved."
    outlived a change, one click lowered one's own role or rotated one's API key, and the
    organization's description showed nowhere."""
    realm, owner, _ = people
    admin = UserFactory(realm=realm, role=Role.ADMINISTRATOR, delivery_email="ann@e2e.example", full_name="Ann Admin")
    give_passwords(owner, admin)
    server = live_server_factory(STATIC_ROOT=collected_static)
    api = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=server.url)
    ann_api = zulip.Client(email=api_email(admin), api_key=admin.api_key, site=server.url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, admin.delivery_email)
        page.click("#open-invite")
        channels = page.locator("#invite-channels input[data-stream-id]")
        expect(channels).to_have_count(0)  # in none yet
        # Joined elsewhere while the panel is open: offered at once; one ticked stays so.
        assert ann_api.add_subscriptions([{"name": "launch"}])["result"] == "success"
        expect(channels).to_have_count(1)
        channels.first.check()
        # Someone else joining changes nothing here; a channel of one's own is offered, the focus
        # kept where it was (the verify QA pass: it fell to the page, and Esc no longer closed it).
        assert api.add_subscriptions([{"name": "launch"}])["result"] == "success"
        assert ann_api.add_subscriptions([{"name": "later"}])["result"] == "success"
        expect(channels).to_have_count(2)
        expect(page.locator("#invite-channels")).to_contain_text("#later")
        expect(page.get_by_label("#launch", exact=True)).to_be_checked()
        expect(page.get_by_label("#launch", exact=True)).to_be_focused()
        page.click("#invite-make-link")
        expect(page.locator("#invite-link-field")).to_be_visible()
        link = page.locator("#invite-list li").last
        made = r"A reusable link as Member, into #launch, until \w+ \d+, \d+ \(made .+\)"
        expect(link).to_contain_text(re.compile(made))
        # Revoked, the link is no longer offered to copy.
        page.once("dialog", lambda dialog: dialog.accept())
        link.get_by_role("button", name="Revoke the link").click()
        expect(page.locator("#invite-status")).to_have_text("The invitation was revoked.")
        expect(page.locator("#invite-link-field")).to_be_hidden()
        page.keyboard.press("Escape")

        page.click("#open-settings")
        page.click("#open-organization")
        name, description = page.locator("#organization-name"), page.locator("#organization-description")
        page.fill("#organization-name", "Acme")
        page.click("#organization-form button[type=submit]")
        expect(page.locator("#organization-status")).to_have_text("Saved.")
        page.fill("#organization-name", "A" * 41)  # refused and said, not cut short and saved
        page.click("#organization-form button[type=submit]")
        too_long = "Organization name is too long (limit: 40 characters)."
        expect(page.locator("#organization-status")).to_contain_text(too_long)
        page.fill("#organization-name", "")
        expect(page.locator("#organization-status")).to_have_text("")  # changed since: not saved
        page.fill("#organization-name", "Acme")
        # Another administrator's changes show in the form; a change of one's own not yet saved stays.
        page.fill("#organization-description", "mine, unsaved")
        request = {"name": "Acme Team", "description": "Where Acme talks."}
        assert api.call_endpoint(url="realm", method="PATCH", request=request)["result"] == "success"
        expect(name).to_have_value("Acme Team")
        expect(description).to_have_value("mine, unsaved")
        page.click("#organization-form button[type=submit]")
        expect(page.locator("#organization-status")).to_have_text("Saved.")
        assert api.get_server_settings()["realm_description"] == "<p>mine, unsaved</p>"

        # Lowering one's own role asks first; declined, nothing changes.
        me = page.locator(f"#people-admin li[data-user-id='{admin.id}']")
        me.get_by_label("Role of Ann Admin", exact=True).select_option(str(Role.MEMBER))
        asked = []
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        me.get_by_role("button", name="Change the role of Ann Admin").click()
        assert asked == ["Change your own role to Member? You cannot give yourself back what you lose."]
        expect(me.get_by_label("Role of Ann Admin", exact=True)).to_have_value(str(Role.ADMINISTRATOR))
        assert api.get_user_by_id(admin.id)["user"]["role"] == Role.ADMINISTRATOR

        # Rotating the API key asks first; declined, the key stays.
        page.goto(f"{server.url}/account/")  # logged in just now: the key is shown
        expect(page.locator("#api-key")).to_have_text(admin.api_key)
        asked.clear()
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        page.click("#rotate")
        [question] = asked
        assert question.startswith("Rotate your API key?")
        expect(page.locator("#api-key")).to_have_text(admin.api_key)
        assert ann_api.get_profile()["result"] == "success"

        # Making a bot there: an outgoing webhook bot's endpoint and format asked for that kind only.
        expect(page.get_by_label("Endpoint URL")).to_be_hidden()
        page.get_by_label("Name", exact=True).fill("Echo")
        page.get_by_label("Username").fill("echo")
        page.get_by_label("Kind").select_option(label="Outgoing webhook")
        page.get_by_label("Endpoint URL").fill("https://bots.example.com/echo")
        expect(page.get_by_label("Payload format")).to_have_value("1")
        page.get_by_role("button", name="Make the bot").click()
        expect(page.locator(".messages")).to_have_text("Echo was made: its zuliprc is below.")
        expect(page.locator("#bots")).to_contain_text("Echo")
        # Refused: why, beside the field, the focus on it.
        page.get_by_label("Name", exact=True).fill("Echo two")
        page.get_by_label("Username").fill("echo")
        page.get_by_role("button", name="Make the bot").click()
        expect(page.locator("#field-short_name .errorlist")).to_contain_text("already has this username's address")
        expect(page.get_by_label("Username")).to_be_focused()

        # The organization's description greets those who log in.
        newcomer = browser.new_context().new_page()
        newcomer.goto(f"{server.url}/login/")
        expect(newcomer.locator(".realm-description")).to_have_text("mine, unsaved")
        browser.close()
