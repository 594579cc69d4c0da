"""The web app of a guest whose organization limits whom guests see (can_access_all_users_group at
role:members): the people list names those they share a channel with, and no "Unknown user" (the
guest-access QA pass: it listed everyone else as such, each a conversation the server refuses); a
person who joins the guest's channel appears, live; the channel's settings are theirs to see, not to
change."""

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.groups.models import SystemGroups
from apps.groups.selectors import get_system_group
from apps.users.models import Role
from apps.users.selectors import api_email
from tests.e2e.test_web_app import give_passwords, log_in
from tests.factories import UserFactory, create_stream

pytestmark = pytest.mark.e2e


def test_a_limited_guest_lists_only_the_people_they_see(people, live_server_factory, collected_static, chromium):
    realm, owner, member = people
    realm.can_access_all_users_group = get_system_group(realm.id, SystemGroups.MEMBERS)
    realm.save(update_fields=["can_access_all_users_group"])
    guest = UserFactory(realm=realm, role=Role.GUEST, delivery_email="guest@e2e.example", full_name="Gwen Guest")
    visitors = create_stream(realm, "visitors", guest, member)
    give_passwords(guest)
    server = live_server_factory(STATIC_ROOT=collected_static)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, gwen = log_in(browser, server.url, guest.delivery_email)
        listed = gwen.locator("#people li")
        expect(listed).to_have_count(2)
        expect(gwen.locator("#people")).to_contain_text("Mick Member")
        expect(gwen.locator("#people")).not_to_contain_text("Olive Owner")
        expect(gwen.locator("#people")).not_to_contain_text("Unknown user")
        # The owner joins the guest's channel: they appear, by name.
        olive = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=server.url)
        assert olive.add_subscriptions([{"name": "visitors"}])["result"] == "success"
        expect(listed).to_have_count(3)
        expect(gwen.locator("#people")).to_contain_text("Olive Owner")

        # Leaving a public channel is asked first, a guest joining none by themselves (the web app
        # QA pass: one press, and the guest was out for good).
        gwen.goto(f"{server.url}/#channel/{visitors.id}")
        # The channel's settings, read-only: its subscribers, none to add (as in Zulip).
        gwen.click("#open-channel-settings")
        expect(gwen.locator("#channel-subscriber-count")).to_have_text("3 subscribers")
        expect(gwen.locator("#channel-name")).to_be_disabled()
        expect(gwen.locator("#channel-add-form")).to_be_hidden()
        expect(gwen.get_by_role("button", name="Remove Mick Member")).to_have_count(0)
        expect(gwen.locator("#channel-settings-status")).to_have_text("")
        gwen.keyboard.press("Escape")
        leave = gwen.locator("#unsubscribe")
        expect(leave).to_have_text("Unsubscribe")
        asked = []
        gwen.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        leave.click()
        assert asked == ["Leave #visitors? As a guest you cannot join it again yourself: someone has to add you back."]
        expect(gwen.locator("#channels")).to_contain_text("visitors")
        gwen.once("dialog", lambda dialog: dialog.accept())
        leave.click()
        expect(gwen.locator("#channels")).not_to_contain_text("visitors")
        browser.close()
