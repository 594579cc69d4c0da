"""A forgotten password in a real browser (headless Chromium, as tests/e2e/test_browser_signup.py)
against a real server whose task worker emails the link (to files: EMAIL_URL=filemail://): from the
login page to a new password that logs in, in the browser and through POST /fetch_api_key."""

import re
import time
from pathlib import Path

import pytest
import requests
from django.conf import settings
from playwright.sync_api import expect, sync_playwright

pytestmark = pytest.mark.e2e

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots" / "browser"
NEW = "a brand new and unusual passphrase 50"
LINK_RE = re.compile(r"http://\S+/accounts/password/reset/\S+/")


def emailed_link(mail_dir: Path, timeout: float = 45.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in mail_dir.glob("*"):
            if found := LINK_RE.search(path.read_text()):
                return found[0]
        time.sleep(0.2)
    raise AssertionError(f"no password reset email in {mail_dir} after {timeout} s")


def test_a_person_resets_a_forgotten_password(people, live_server_factory, collected_static, chromium, tmp_path):
    _, _, member = people
    mail_dir = tmp_path / "mail"
    mail_dir.mkdir()
    server = live_server_factory(STATIC_ROOT=collected_static, TASK_WORKER="1", EMAIL_URL=f"filemail://{mail_dir}")
    url = server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page()
        page.set_default_timeout(15000)
        page.goto(f"{url}/login/")
        page.click("text=Forgot your password?")
        page.wait_for_url(f"{url}/accounts/password/reset/")
        page.fill("input[name=email]", member.delivery_email)
        page.click("button[type=submit]")
        page.wait_for_url(f"{url}/accounts/password/reset/done/")
        expect(page.locator("h1")).to_have_text("Check your email")

        link = emailed_link(mail_dir)
        assert link.startswith(f"{url}/accounts/password/reset/")
        page.goto(link)
        page.wait_for_url(re.compile(r".*/set-password/$"))  # the token left the address bar
        page.fill("input[name=new_password1]", NEW)
        page.fill("input[name=new_password2]", NEW)
        page.screenshot(path=SCREENSHOTS / "5-new-password.png", full_page=True)
        page.click("button[type=submit]")
        page.wait_for_url(f"{url}/login/")
        expect(page.locator(".messages")).to_contain_text("Your password was changed")

        page.fill("input[name=email]", member.delivery_email)
        page.fill("input[name=password]", NEW)
        page.click("button[type=submit]")
        page.wait_for_url(f"{url}/")
        assert page.goto(link).status == 404  # used
        browser.close()

    answer = requests.post(
        f"{url}/api/v1/fetch_api_key", data={"username": member.delivery_email, "password": NEW}, timeout=10
    ).json()
    assert (answer["result"], answer["api_key"]) == ("success", member.api_key)
