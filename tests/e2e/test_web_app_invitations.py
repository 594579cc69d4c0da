"""Inviting colleagues from the web app (the "Invite people" panel) in a real browser: the owner invites
two people by email as moderators into a channel, is told of an address the server refuses, and
creates a link that a newcomer opens to the sign-up page."""

import re

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.invites.models import EmailInvitation, MultiuseInvite
from apps.users.models import Role
from apps.users.selectors import api_email
from tests.e2e.test_web_app import SCREENSHOTS, log_in, web_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.e2e

# Whether an element of the panel is within what the panel (it scrolls) and the window show.
SEEN_IN_THE_PANEL = """(selector) => {
  const shown = document.querySelector(selector).getBoundingClientRect();
  const panel = document.querySelector("#invite").getBoundingClientRect();
  return shown.top >= panel.top && shown.bottom <= Math.min(panel.bottom, window.innerHeight);
}"""


def test_the_owner_invites_by_email_and_by_link(web_server, people, chromium):  # noqa: F811
    server, general = web_server
    realm, owner, _ = people
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
        expect(listed).to_have_count(3)
        expect(listed.nth(0)).to_contain_text("ada@example.org as Moderator, until")
        expect(listed.nth(2)).to_contain_text("A reusable link as Member, until revoked")
        page.screenshot(path=str(SCREENSHOTS / "invite-panel.png"))
        page.click("#invite-list li:nth-child(1) button")
        expect(page.locator("#invite-status")).to_have_text("The invitation was revoked.")
        expect(listed).to_have_count(2)
        expect(page.locator("#invite-list")).not_to_contain_text("ada@example.org")
        assert [i["email"] for i in api.call_endpoint(url="invites", method="GET")["invites"] if "email" in i] == [
            "grace@example.org"
        ]
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
