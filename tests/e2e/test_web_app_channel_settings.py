"""The "Channel settings" panel in a real browser: the owner renames a channel, describes it, makes it
private, removes and adds a subscriber, archives and unarchives it; a member sees the same settings
read-only and what the owner changes, live; a member the channel makes one of its administrators may
change it."""

import json

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.users.selectors import api_email
from tests.e2e.test_web_app import SCREENSHOTS, log_in, web_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.e2e


def test_the_owner_runs_a_channel_and_a_member_sees_it(web_server, people, chromium):  # noqa: F811
    server, general = web_server
    _, owner, member = people
    api = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=server.url)
    subscribers = lambda: sorted(api.get_subscribers(stream="general")["subscribers"])  # noqa: E731

    def stream():  # archived ones too (GET /streams/{id} serves active channels only)
        streams = api.call_endpoint("streams", method="GET", request={"exclude_archived": "false"})["streams"]
        return next(channel for channel in streams if channel["stream_id"] == general.id)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, owner.delivery_email, at=f"#narrow/channel/{general.id}-general")
        _, mick = log_in(browser, server.url, member.delivery_email, at=f"#narrow/channel/{general.id}-general")
        page.click("#open-channel-settings")
        expect(page.locator("#channel-settings-title")).to_have_text("Settings of #general")
        expect(page.locator("#channel-name")).to_have_value("general")
        expect(page.locator("#channel-privacy")).to_have_value("public")
        expect(page.locator("#channel-subscriber-count")).to_have_text("2 subscribers")
        mick.click("#open-channel-settings")
        # A member is shown the settings, not offered to change them.
        only_administrators = "Only the channel's administrators change its settings."
        expect(mick.locator("#channel-form-help")).to_have_text(only_administrators)
        expect(mick.locator("#channel-name")).to_be_disabled()
        expect(mick.locator("#channel-archive")).to_be_hidden()
        expect(mick.get_by_role("button", name="Remove Olive Owner")).to_have_count(0)
        expect(mick.get_by_role("button", name="Leave Mick Member")).to_be_visible()

        # Removing someone: gone from the list, in their open panel too.
        page.get_by_role("button", name="Remove Mick Member").click()
        expect(page.locator("#channel-subscribers-status")).to_have_text("Mick Member was removed.")
        expect(page.locator("#channel-subscriber-count")).to_have_text("1 subscriber")
        assert subscribers() == [owner.id]
        expect(mick.get_by_role("button", name="Leave Mick Member")).to_have_count(0)
        # ...and added back, chosen among those not in it.
        page.select_option("#channel-add-person", str(member.id))
        page.click("#channel-add-form button[type=submit]")
        expect(page.locator("#channel-subscribers-status")).to_have_text("Mick Member was added.")
        expect(page.locator("#channel-subscriber-count")).to_have_text("2 subscribers")
        assert subscribers() == sorted([owner.id, member.id])
        expect(page.locator(f"#channel-add-person option[value='{member.id}']")).to_have_count(0)

        page.fill("#channel-name", "lounge")
        page.fill("#channel-description", "Where we **talk**.")
        page.select_option("#channel-privacy", "private-protected")
        page.click("#channel-form button[type=submit]")
        expect(page.locator("#channel-form-status")).to_have_text("Saved.")
        saved = stream()
        assert (saved["name"], saved["description"]) == ("lounge", "Where we **talk**.")
        assert (saved["invite_only"], saved["history_public_to_subscribers"]) == (True, False)
        # What the owner changed shows in the member's open panel and page.
        expect(mick.locator("#channel-settings-title")).to_have_text("Settings of #lounge")
        expect(mick.locator("#channel-name")).to_have_value("lounge")
        expect(mick.locator("#channel-privacy")).to_have_value("private-protected")
        expect(mick.locator("#narrow-title")).to_contain_text("#lounge")
        page.screenshot(path=str(SCREENSHOTS / "channel-settings.png"))

        # A change refused is said, and nothing changes.
        page.fill("#channel-name", "  ")
        page.fill("#channel-description", "x" * 10)
        page.evaluate("document.querySelector('#channel-name').required = false")  # past the browser's check
        page.click("#channel-form button[type=submit]")
        expect(page.locator("#channel-form-status")).to_contain_text("Not saved:")
        assert stream()["name"] == "lounge"
        # Changed elsewhere meanwhile, over an unsaved change of the owner's: said, the change kept.
        api.update_stream({"stream_id": general.id, "description": "Changed elsewhere."})
        expect(page.locator("#channel-form-status")).to_have_text(
            "The description was changed meanwhile to “Changed elsewhere.”: Save replaces it with yours."
        )
        expect(page.locator("#channel-description")).to_have_value("x" * 10)
        page.fill("#channel-name", "lounge")  # as saved: what others change shows again
        page.fill("#channel-description", "Changed elsewhere.")

        # Archived (asked first): read-only for everyone; unarchived by its administrator.
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#channel-archive")
        expect(page.locator("#channel-settings-title")).to_have_text("Settings of #lounge (archived)")
        assert stream()["is_archived"] is True
        expect(page.locator("#channel-name")).to_be_disabled()
        expect(page.locator("#channel-subscribers-part")).to_be_hidden()
        expect(mick.locator("#channel-settings-title")).to_have_text("Settings of #lounge (archived)")
        page.click("#channel-unarchive")
        expect(page.locator("#channel-settings-title")).to_have_text("Settings of #lounge")
        assert stream()["is_archived"] is False
        expect(page.locator("#channel-name")).to_be_enabled()

        # A member made one of the channel's administrators may change it (read anew, live).
        mick_administers = json.dumps({"new": {"direct_members": [member.id], "direct_subgroups": []}})
        result = api.call_endpoint(
            f"streams/{general.id}", method="PATCH", request={"can_administer_channel_group": mick_administers}
        )
        assert result["result"] == "success", result
        expect(mick.locator("#channel-name")).to_be_enabled()
        expect(mick.get_by_role("button", name="Remove Olive Owner")).to_be_visible()
        mick.fill("#channel-description", "Mick's now.")
        mick.click("#channel-form button[type=submit]")
        expect(mick.locator("#channel-form-status")).to_have_text("Saved.")
        assert stream()["description"] == "Mick's now."
        expect(page.locator("#channel-description")).to_have_value("Mick's now.")

        # A private channel the owner is not in: listed to them, its settings theirs to change.
        mick_api = zulip.Client(email=api_email(member), api_key=member.api_key, site=server.url)
        made = mick_api.call_endpoint("channels/create", method="POST", request={
            "name": "mick-only", "invite_only": "true", "subscribers": json.dumps([member.id])
        })  # fmt: skip
        assert made["result"] == "success", made
        page.click("#browse-channels")
        page.locator("#all-channels a", has_text="mick-only").click()
        expect(page.locator("#narrow-title")).to_have_text("#mick-only")
        page.click("#open-channel-settings")
        expect(page.locator("#channel-subscriber-count")).to_have_text("1 subscriber")
        expect(page.locator("#channel-name")).to_be_enabled()
        expect(page.get_by_role("button", name="Remove Mick Member")).to_be_visible()
        page.goto(f"{server.url}/#narrow/channel/{general.id}-lounge")  # back, for the keyboard below
        page.click("#open-channel-settings")
        page.keyboard.press("Escape")
        expect(page.locator("#channel-settings")).to_be_hidden()
        expect(page.locator("#open-channel-settings")).to_be_focused()
        browser.close()
