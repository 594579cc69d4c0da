"""The web app's notification settings (the settings panel's "Notifications"): kept by the server
(PATCH /json/settings), shown live when changed elsewhere, and opened by the link every notification
email ends with (`#settings/notifications`, Zulip's address; it led nowhere: the app had no such
settings)."""

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.users.selectors import api_email
from tests.e2e.test_web_app import SCREENSHOTS, TIMEOUT_MS, log_in, web_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.e2e


def test_the_notification_settings_are_the_servers_and_the_emails_link_opens_them(web_server, people, chromium):  # noqa: F811
    server, _ = web_server
    _, _, member = people
    url = server.url
    mick_api = zulip.Client(email=api_email(member), api_key=member.api_key, site=url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        context, _ = log_in(browser, url, member.delivery_email)
        # The email's link, opened anew: the settings there, over the combined feed.
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{url}/#settings/notifications")
        expect(page.locator("#settings")).to_be_visible()
        by_email = page.get_by_label("Email me about direct messages and mentions")
        expect(by_email).to_be_focused()
        expect(by_email).to_be_checked()  # Zulip's default
        every_message = page.get_by_label("Email me about every new message in my channels")
        expect(every_message).not_to_be_checked()
        expect(page).to_have_url(f"{url}/#feed")
        page.screenshot(path=SCREENSHOTS / "notification-settings.png")

        by_email.uncheck()
        expect(page.locator("#notification-settings-status")).to_have_text("Saved.")
        registered = mick_api.register(event_types=["user_settings"], fetch_event_types=["user_settings"])
        assert registered["user_settings"]["enable_offline_email_notifications"] is False

        # Changed on another device: shown at once.
        changed = mick_api.call_endpoint(
            "settings", method="PATCH", request={"enable_stream_email_notifications": True}
        )
        assert changed["result"] == "success"
        expect(every_message).to_be_checked()

        # Closed, and opened again by a link while the page is open.
        page.keyboard.press("Escape")
        expect(page.locator("#settings")).to_be_hidden()
        page.goto(f"{url}/#settings")
        expect(page.locator("#settings-name")).to_be_focused()
        browser.close()
