"""The search box in a real browser: people suggested after `sender:` (and `from:`, `dm:`), channels
after `channel:`, chosen with the keyboard or the mouse; a person's whole name searched as them; a
name or channel nobody has said so plainly, not as the server's operator error."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.users.selectors import api_email
from tests.e2e.test_web_app import log_in, web_server  # noqa: F401 (a fixture)
from tests.factories import UserFactory, create_stream

pytestmark = pytest.mark.e2e


def test_search_suggests_people_and_channels_and_says_what_it_cannot_find(web_server, people, chromium):  # noqa: F811
    server, _ = web_server
    realm, owner, member = people
    create_stream(realm, "design team", owner)
    UserFactory(realm=realm, full_name="Mick Jagger", delivery_email="jagger@e2e.example")
    mick = zulip.Client(email=api_email(member), api_key=member.api_key, site=server.url)
    for topic, content in (("lunch", "Pizza at one?"), ("plans", "Pizza next week")):
        sent = mick.send_message({"type": "stream", "to": "general", "topic": topic, "content": content})
        assert sent["result"] == "success"
    olive = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=server.url)
    olive.send_message({"type": "stream", "to": "general", "topic": "lunch", "content": "Pizza for me too"})

    def suggestions(page):
        return page.locator("#search-suggestions li")

    def search(page, query: str) -> None:  # with the Search button: Enter would write a suggestion shown
        page.fill("#search", query)
        page.click("#search-form button[type=submit]")
        expect(page.locator("#narrow-title")).to_have_text(f"Search: {query}")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, owner.delivery_email)
        messages = page.locator("li.message")

        # People after sender:, by a word of their name or their email; ↓ and Enter write one.
        page.fill("#search", "pizza sender:mi")
        expect(suggestions(page)).to_have_text(["Mick Jagger jagger@e2e.example", f"Mick Member {api_email(member)}"])
        expect(page.locator("#search")).to_have_attribute("aria-expanded", "true")
        page.press("#search", "ArrowDown")
        title = page.locator("#narrow-title").inner_text()
        page.press("#search", "Enter")  # writes the suggestion: no search yet
        expect(page.locator("#search")).to_have_value(f"pizza sender:{api_email(member)} ")
        expect(suggestions(page)).to_have_count(0)
        page.press("#search", "Enter")  # now it searches
        expect(page.locator("#narrow-title")).to_have_text(f"Search: pizza sender:{api_email(member)}")
        expect(messages).to_have_count(2)
        assert title != page.locator("#narrow-title").inner_text()

        # "me" first (the verify QA pass: `sender:me` and Enter wrote Mick's email).
        page.fill("#search", "sender:m")
        expect(suggestions(page).first).to_have_text("me Olive Owner")
        page.press("#search", "Enter")
        expect(page.locator("#search")).to_have_value("sender:me ")
        search(page, "dm-including:me pizza")  # oneself, not a name starting with "me"
        expect(page.locator("#empty")).to_have_text("No messages match this search.")

        # Channels after channel:, a name with a space written quoted; chosen with the mouse.
        page.fill("#search", "channel:te")
        expect(suggestions(page)).to_have_text(["design team channel"])
        page.fill("#search", 'channel:"design t')  # a space typed in the quotes
        expect(suggestions(page)).to_have_text(["design team channel"])
        suggestions(page).first.click()
        expect(page.locator("#search")).to_have_value('channel:"design team" ')
        page.fill("#search", "-channel:gen")  # negated too
        expect(suggestions(page)).to_have_text(["general channel"])
        page.press("#search", "Escape")  # closes the suggestions, keeps the field
        expect(suggestions(page)).to_have_count(0)
        expect(page.locator("#search")).to_be_focused()
        page.fill("#search", "topic:lu")  # not an operator naming people or channels
        expect(suggestions(page)).to_have_count(0)

        # A name standing for one person is searched as them; one nobody has, or several share, said plainly.
        search(page, 'sender:"mick member" pizza')
        expect(messages).to_have_count(2)
        search(page, "sender:olive")
        expect(messages).to_have_count(1)
        search(page, "sender:Mel")
        expect(page.locator("#empty")).to_have_text("No one here is called “Mel”.")
        search(page, "sender:mick")
        more_than_one = "could be more than one person: choose one from the suggestions."
        expect(page.locator("#empty")).to_have_text(f"“mick” {more_than_one}")
        with ThreadPoolExecutor(1) as thread:  # the database's calls out of Playwright's event loop
            thread.submit(UserFactory, realm=realm, full_name="Mick Member", delivery_email="twin@e2e.example").result()
        page.reload()
        expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        search(page, 'sender:"mick member"')
        expect(page.locator("#empty")).to_have_text(f"“mick member” {more_than_one}")
        search(page, "channel:nowhere")
        expect(page.locator("#empty")).to_have_text("You know of no channel called “nowhere”.")
        # An email or id that is nobody's here (the QA pass: the server's "Invalid narrow operator").
        search(page, "sender:nobody@e2e.example")
        expect(page.locator("#empty")).to_have_text("No one here has the address “nobody@e2e.example”.")
        search(page, "dm:987654321")
        expect(page.locator("#empty")).to_have_text("No one here has the id “987654321”.")
        search(page, f"sender:{api_email(member).upper()} pizza")  # a known email, any case
        expect(messages).to_have_count(2)
