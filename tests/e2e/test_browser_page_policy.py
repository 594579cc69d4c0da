"""The server's own pages under the Content-Security-Policy every page without one of its own gets
(apps/core/middleware.py PAGE_CSP: scripts from this server only, none inline), in headless
Chromium: the login and account pages, an email change's confirmation (its script confirms on
opening) and the Django admin's pages show and work, with nothing blocked."""

import re

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.users.selectors import api_email
from tests.e2e.test_web_app import PASSWORD, give_passwords, new_context

pytestmark = pytest.mark.e2e


def test_the_servers_own_pages_work_under_their_policy(
    people, live_server_factory, collected_static, chromium, tmp_path
):
    _, owner, member = people
    owner.is_staff = owner.is_superuser = True
    owner.save(update_fields=["is_staff", "is_superuser"])
    give_passwords(owner, member)
    mail = tmp_path / "mail"
    server = live_server_factory(STATIC_ROOT=collected_static, EMAIL_URL=f"filemail:///{mail}")
    url = server.url
    client = zulip.Client(email=api_email(member), api_key=member.api_key, site=url)
    changed = client.call_endpoint(url="settings", method="PATCH", request={"email": "mick.new@e2e.example"})
    assert changed["result"] == "success", changed
    [sent] = list(mail.iterdir())
    link = re.search(r"(http://\S+/accounts/confirm_new_email/\w+)", sent.read_text()).group(1)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = new_context(browser).new_page()
        page.set_default_timeout(15000)
        policy = page.goto(f"{url}/login/").headers["content-security-policy"]
        assert "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy

        # The confirmation link confirms as it opens (its form sent by the page's script).
        page.goto(link)
        expect(page.locator("h1")).to_have_text("Email address changed")

        page.goto(f"{url}/login/")
        page.fill("input[name=email]", owner.delivery_email)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{url}/")
        page.goto(f"{url}/account/")
        expect(page.locator("body")).to_contain_text(owner.delivery_email)

        # An operator's pages: the admin's index, a list, a search in it, and a change form.
        page.goto(f"{url}/admin/")
        if page.url.startswith(f"{url}/admin/login/"):
            page.fill("input[name=username]", owner.delivery_email)
            page.fill("input[name=password]", PASSWORD)
            page.click("input[type=submit]")
        expect(page.locator("#site-name")).to_be_visible()
        page.goto(f"{url}/admin/users/user/")
        page.fill("#searchbar", "Mick")
        page.press("#searchbar", "Enter")
        expect(page.locator("#result_list")).to_contain_text("Mick Member")
        page.goto(f"{url}/admin/users/user/{member.id}/change/")
        expect(page.locator("input[name=full_name]")).to_have_value("Mick Member")
        # The admin's own scripts ran (its sidebar's filter is one of them).
        expect(page.locator("#nav-filter")).to_be_visible()
        assert page.evaluate("window.cspViolations") == []
        browser.close()
    member.refresh_from_db()
    assert member.delivery_email == "mick.new@e2e.example"
