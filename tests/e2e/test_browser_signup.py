"""A person joins through an invitation link in a real browser: headless Chromium (Debian's
`chromium`, driven by Playwright with `executable_path`: no browser is downloaded) against a real
server. They sign up, land on their account page, and the API key it shows works with the official
`zulip` client; they rotate it, log out and back in; a revoked link shows the page without a form.

Screenshots are kept under var/screenshots/browser/ (CI keeps var/ as artifacts). Without Chromium
the test is skipped, saying so; in CI (CI=true), where .ci/run installs it, it fails instead.

Everything in the database is made before the browser starts: Playwright's synchronous API runs an
event loop in this thread, where Django refuses database queries.
"""

from pathlib import Path

import pytest
import zulip
from django.conf import settings
from playwright.sync_api import sync_playwright

from apps.invites.actions.invites import do_create_multiuse_invite, do_revoke_multiuse_invite
from apps.invites.actions.welcome import do_create_welcome_bot
from tests.factories import create_stream

pytestmark = pytest.mark.e2e

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots" / "browser"
PASSWORD = "a long and unusual passphrase 47"


@pytest.fixture
def links(people):
    """A usable link (member, into #newcomers, with a welcome text) and a revoked one."""
    realm, owner, _ = people
    do_create_welcome_bot(realm)
    newcomers = create_stream(realm, "newcomers", owner)
    usable = do_create_multiuse_invite(
        realm, streams=[newcomers], welcome_message_custom_text="Say hello in #**newcomers**!", acting_user=owner
    )
    revoked = do_create_multiuse_invite(realm, acting_user=owner)
    do_revoke_multiuse_invite(revoked, acting_user=owner)
    return usable.key, revoked.key


def test_a_person_signs_up_in_a_browser_and_uses_the_key(page_server, people, links, chromium):
    realm_name = people[0].name
    usable, revoked = links
    url = page_server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page()

        opened = page.goto(f"{url}/join/{usable}/")
        assert opened.status == 200
        assert page.inner_text("h1") == f"Join {realm_name}"
        page.screenshot(path=SCREENSHOTS / "1-join.png", full_page=True)
        page.fill("input[name=email]", "nina@e2e.example")
        page.fill("input[name=full_name]", "Nina Newcomer")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{url}/account/")
        page.screenshot(path=SCREENSHOTS / "2-account.png", full_page=True)
        assert page.inner_text("h1") == "Nina Newcomer"
        email, key = page.inner_text("#api-email"), page.inner_text("#api-key")
        assert f"email={email}\nkey={key}\nsite={url}" in page.inner_text("#zuliprc")
        assert page.inner_text("#curl") == f"curl -u {email}:{key} {url}/api/v1/users/me"
        # On a phone it breaks at its spaces, its address whole (the newcomer QA pass: cut in the port).
        page.set_viewport_size({"width": 390, "height": 800})
        lines_of_address = page.locator("#curl").evaluate(
            """(pre, address) => {
                const text = pre.firstChild, start = text.data.indexOf(address), range = document.createRange();
                range.setStart(text, start);
                range.setEnd(text, start + address.length);
                return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
            }""",
            f"{url}/api/v1/users/me",
        )
        assert lines_of_address == 1
        page.set_viewport_size({"width": 1280, "height": 800})
        with page.expect_download() as download:
            page.click("#download-zuliprc")
        assert download.value.suggested_filename == "zuliprc"
        zuliprc = download.value.path()

        # The official client, with the zuliprc the page gave.
        client = zulip.Client(config_file=str(zuliprc))
        profile = client.get_profile()
        assert (profile["full_name"], profile["role"], profile["is_bot"]) == ("Nina Newcomer", 400, False)
        assert [sub["name"] for sub in client.get_subscriptions()["subscriptions"]] == ["newcomers"]
        messages = client.get_messages({"anchor": "newest", "num_before": 20, "num_after": 0})["messages"]
        [welcome] = [m for m in messages if m["sender_full_name"] == "Welcome Bot"]
        assert f"welcome to <strong>{realm_name}</strong>" in welcome["content"]
        assert "Say hello in" in welcome["content"]

        # A new key (asked first): the page shows it, and the old one stops working.
        page.once("dialog", lambda dialog: dialog.accept())
        with page.expect_navigation():
            page.click("#rotate")
        page.wait_for_url(f"{url}/account/")
        new_key = page.inner_text("#api-key")
        assert new_key != key
        assert client.get_profile()["code"] == "UNAUTHORIZED"
        assert zulip.Client(email=email, api_key=new_key, site=url).get_profile()["full_name"] == "Nina Newcomer"

        # Log out, and back in: the app opens; its link leads back to the account page.
        page.click("#logout")
        page.wait_for_url(f"{url}/login/")
        page.screenshot(path=SCREENSHOTS / "3-logged-out.png", full_page=True)
        page.fill("input[name=email]", "nina@e2e.example")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{url}/")  # the web app (tests/e2e/test_web_app.py)
        page.click("#account-link")
        page.wait_for_url(f"{url}/account/")
        assert page.inner_text("#api-key") == new_key

        # A revoked link: the one page for links that cannot be used, without a form.
        refused = page.goto(f"{url}/join/{revoked}/")
        assert refused.status == 404
        assert page.inner_text("h1") == "This invitation link cannot be used"
        assert page.locator("form").count() == 0
        page.screenshot(path=SCREENSHOTS / "4-revoked-link.png", full_page=True)
        browser.close()
