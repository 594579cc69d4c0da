"""The web app's drafts: what is written and not sent is kept by the server too (Zulip's drafts), so
the writer's other devices and tabs list it; the "Drafts" panel lists those written elsewhere, live,
and takes one up into the message box or deletes it; the writer's setting turns the server's copy
off (the web app kept drafts in the tab only: the server's drafts API went unused)."""

import time

import pytest
import zulip
from playwright.sync_api import expect, sync_playwright

from apps.users.actions.activation import do_deactivate_user
from apps.users.selectors import api_email
from tests.e2e.test_web_app import SCREENSHOTS, log_in, message, web_server  # noqa: F401 (a fixture)
from tests.factories import UserFactory, create_stream
from tests.reliability.faults import wait_until

pytestmark = pytest.mark.e2e


def eventually(check, what: str) -> None:
    """wait_until at a pace the server's rate limit lets the API be asked (a few times a second)."""
    wait_until(lambda: (time.sleep(0.25), check())[1], what)


def server_drafts(client) -> list[dict]:
    answer = client.call_endpoint("drafts", method="GET")
    assert answer["result"] == "success", answer
    return sorted(answer["drafts"], key=lambda draft: draft["id"])


def test_drafts_are_kept_by_the_server_and_taken_up_from_the_panel(web_server, people, chromium):  # noqa: F811
    server, general = web_server
    _, owner, member = people
    url = server.url
    mick_api = zulip.Client(email=api_email(member), api_key=member.api_key, site=url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, mick = log_in(browser, url, member.delivery_email, at=f"#channel/{general.id}/topic/here")
        expect(mick.locator("#compose-topic")).to_have_value("here")

        # Written, not sent: the server keeps it once the writer pauses.
        mick.fill("#compose-content", "half a thought")
        expect(mick.locator("#count-drafts")).to_have_text("1")
        [kept] = server_drafts(mick_api)
        assert (kept["type"], kept["to"], kept["topic"]) == ("stream", [general.id], "here")
        assert kept["content"] == "half a thought"
        # Reloaded, the box holds it still, the same draft: changed, not kept twice.
        mick.reload()
        expect(mick.locator("#compose-content")).to_have_value("half a thought")
        mick.fill("#compose-content", "half a thought, more")
        changed = ["half a thought, more"]
        eventually(lambda: [d["content"] for d in server_drafts(mick_api)] == changed, "the change kept")

        # One written on another device arrives, live, in the panel's count and list (newest first).
        phone = {"type": "private", "to": [owner.id], "topic": "", "content": "from my phone"}
        assert mick_api.call_endpoint("drafts", method="POST", request={"drafts": [phone]})["result"] == "success"
        expect(mick.locator("#count-drafts")).to_have_text("2")
        mick.locator("#nav-feed").focus()
        mick.keyboard.press("d")  # Zulip's shortcut
        items = mick.locator("#draft-list li")
        expect(items).to_have_count(2)
        expect(items.nth(0)).to_contain_text("To Olive Owner")
        expect(items.nth(0)).to_contain_text("from my phone")
        expect(items.nth(1)).to_contain_text("#general \u203a here")
        expect(items.nth(1)).to_contain_text("In the message box")
        expect(items.nth(1).get_by_role("button", name="Restore the draft: #general \u203a here")).to_have_count(0)
        expect(items.nth(0).get_by_role("button", name="Restore the draft: To Olive Owner")).to_be_focused()
        mick.screenshot(path=SCREENSHOTS / "drafts-panel.png")

        # Taken up: the box holds it, addressed as it was; what the box held stays a draft.
        items.nth(0).get_by_role("button", name="Restore the draft: To Olive Owner").click()
        expect(mick.locator("#drafts")).to_be_hidden()
        expect(mick.locator("#compose-channel")).to_have_value("dm")
        expect(mick.locator("#compose-people")).to_have_value(api_email(owner))
        expect(mick.locator("#compose-content")).to_have_value("from my phone")
        expect(mick.locator("#compose-content")).to_be_focused()
        assert [d["content"] for d in server_drafts(mick_api)] == ["half a thought, more", "from my phone"]

        # Sent: its draft goes; the other is deleted from the panel.
        mick.press("#compose-content", "Enter")
        expect(mick.locator("#count-drafts")).to_have_text("1")
        assert [d["content"] for d in server_drafts(mick_api)] == ["half a thought, more"]
        newest = mick_api.get_messages({"anchor": "newest", "num_before": 1, "num_after": 0})["messages"]
        assert newest[-1]["content"] == "<p>from my phone</p>"
        mick.click("#open-drafts")
        items.nth(0).get_by_role("button", name="Delete the draft: #general \u203a here").click()
        expect(items).to_have_count(0)
        expect(mick.locator("#drafts-empty")).to_be_visible()
        expect(mick.locator("#count-drafts")).to_have_text("")
        assert server_drafts(mick_api) == []

        # The setting off: the server keeps none (and is not asked to).
        mick.locator("#sync-drafts").uncheck()
        expect(mick.locator("#drafts-status")).to_have_text("Your drafts are kept on this device only.")
        state = mick_api.register(event_types=["user_settings"], fetch_event_types=["user_settings"])
        assert state["user_settings"]["enable_drafts_synchronization"] is False
        asked = []
        mick.on("request", lambda request: "/json/drafts" in request.url and asked.append(request.url))
        mick.fill("#compose-content", "only here")
        mick.wait_for_timeout(1500)
        assert asked == []
        # On and off again, nothing typed meanwhile: the box's draft is kept anew once on.
        for _ in range(2):
            mick.locator("#sync-drafts").check()
            expect(mick.locator("#count-drafts")).to_have_text("1")
            mick.locator("#sync-drafts").uncheck()
            expect(mick.locator("#count-drafts")).to_have_text("")
        mick.reload()
        expect(mick.locator("#compose-content")).to_have_value("only here")  # the tab keeps it
        mick.click("#open-drafts")
        expect(mick.locator("#drafts-empty")).to_have_text(
            "Your settings keep drafts on this device only (in the message box, until sent)."
        )
        expect(mick.locator("#sync-drafts")).not_to_be_checked()
        # On again: what the box holds is kept by the server at once.
        mick.locator("#sync-drafts").check()
        expect(mick.locator("#count-drafts")).to_have_text("1")
        assert [d["content"] for d in server_drafts(mick_api)] == ["only here"]
        mick.locator("#drafts .close-panel").click()

        # Typed just before the panel opens: kept at once (not after the second's pause), and listed.
        mick.fill("#compose-content", "only here, and more")
        with mick.expect_request(lambda r: "/json/drafts/" in r.url and r.method == "PATCH", timeout=600):
            mick.click("#open-drafts")
        expect(items.nth(0)).to_contain_text("only here, and more")
        browser.close()


def test_a_restored_draft_keeps_its_address_and_logging_out_its_last_words(web_server, people, chromium):  # noqa: F811
    """A draft to a channel the box does not offer (left since) keeps its channel and topic as it is
    written on, reloaded too (the drafts QA pass: restored, it was saved unaddressed); logging out
    right after typing keeps the last words too (they were lost with the tab's copy)."""
    server, _ = web_server
    realm, owner, member = people
    url = server.url
    left = create_stream(realm, "left behind", owner, member)
    mick_api = zulip.Client(email=api_email(member), api_key=member.api_key, site=url)
    dee = UserFactory(realm=realm, full_name="Dee Parted")
    written = [
        {"type": "private", "to": [dee.id], "topic": "", "content": "farewell"},
        {"type": "stream", "to": [left.id], "topic": "kept", "content": "about the old channel"},
    ]
    assert mick_api.call_endpoint("drafts", method="POST", request={"drafts": written})["result"] == "success"
    assert mick_api.remove_subscriptions(["left behind"])["result"] == "success"
    do_deactivate_user(dee, acting_user=owner)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, mick = log_in(browser, url, member.delivery_email)
        mick.click("#open-drafts")
        expect(mick.locator("#draft-list")).to_contain_text("To Dee Parted")  # deactivated, still named
        mick.get_by_role("button", name="Restore the draft: #left behind \u203a kept").click()
        expect(mick.locator("#compose-content")).to_have_value("about the old channel")
        expect(mick.locator("#compose-channel")).to_have_value("")  # not offered: chosen anew to send
        expect(mick.locator("#compose-topic")).to_have_value("kept")
        mick.locator("#compose-content").press_sequentially(", more")
        wanted = ("stream", [left.id], "kept", "about the old channel, more")

        def as_kept() -> tuple:
            [draft] = [d for d in server_drafts(mick_api) if d["type"] == "stream"]
            return draft["type"], draft["to"], draft["topic"], draft["content"]

        eventually(lambda: as_kept() == wanted, "the draft kept with its address")
        # Reloaded, the box keeps the draft's address with its text (it was saved unaddressed).
        mick.reload()
        expect(mick.locator("#compose-content")).to_have_value("about the old channel, more")
        mick.locator("#compose-content").press_sequentially(", reloaded")
        wanted = (*wanted[:3], "about the old channel, more, reloaded")
        eventually(lambda: as_kept() == wanted, "the draft kept with its address after a reload")
        mick.locator("#compose-content").press_sequentially(", last words")
        mick.click("#logout")
        mick.wait_for_url(f"{url}/login/")
        assert as_kept()[3] == "about the old channel, more, reloaded, last words"
        browser.close()


def test_a_draft_written_offline_is_kept_once_the_server_answers(web_server, people, chromium):  # noqa: F811
    """Typed while the device is offline and then left alone, the draft reaches the server once it
    answers again (the drafts QA pass: it waited for the next keystroke, kept meanwhile by the tab
    only: closing it lost the draft)."""
    server, general = web_server
    _, _, member = people
    mick_api = zulip.Client(email=api_email(member), api_key=member.api_key, site=server.url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        context, mick = log_in(browser, server.url, member.delivery_email, at=f"#channel/{general.id}/topic/trains")
        context.set_offline(True)
        mick.fill("#compose-content", "written in a tunnel")
        mick.wait_for_timeout(1500)  # the draft's save was tried (after a pause of a second) and failed
        assert server_drafts(mick_api) == []
        context.set_offline(False)
        eventually(lambda: [d["content"] for d in server_drafts(mick_api)] == ["written in a tunnel"], "kept")
        [kept] = server_drafts(mick_api)
        assert (kept["type"], kept["to"], kept["topic"]) == ("stream", [general.id], "trains")
        # Emptied offline, the draft is deleted once back (the verify QA pass: it stayed listed).
        context.set_offline(True)
        mick.fill("#compose-content", "")
        mick.wait_for_timeout(1500)
        assert len(server_drafts(mick_api)) == 1
        context.set_offline(False)
        eventually(lambda: server_drafts(mick_api) == [], "deleted")
        browser.close()


def test_a_drafts_save_answered_during_an_edit_keeps_the_draft_in_the_tab(web_server, people, chromium):  # noqa: F811
    """Seen under load (CI's web group): the server's answer to the draft's save came while an edit
    was in the box, and the tab kept the edited message's text as its draft, given back in place of
    the draft after a reload. The answer is held here until the edit has begun."""
    server, general = web_server
    _, owner, _ = people
    url = server.url
    owner_api = zulip.Client(email=api_email(owner), api_key=owner.api_key, site=url)
    owner_api.send_message({"type": "stream", "to": general.name, "topic": "drafts", "content": "An earlier one"})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, url, owner.delivery_email, at=f"#channel/{general.id}/topic/drafts")
        held = []
        page.route(
            "**/json/drafts", lambda route: held.append(route) if route.request.method == "POST" else route.continue_()
        )
        box = page.locator("#compose-content")
        box.fill("Half a thought")
        for _ in range(100):  # (Playwright's own wait: its handlers run meanwhile)
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "the draft's save sent"
        message(page, "An earlier one").get_by_role("button", name="Edit").click()
        expect(box).to_have_value("An earlier one")
        held[0].continue_()
        expect(page.locator("#count-drafts")).to_have_text("1")  # answered, during the edit
        box.press("Escape")
        expect(box).to_have_value("Half a thought")
        page.reload()
        expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        expect(box).to_have_value("Half a thought")
        # The same draft, not kept twice: the tab knew its id.
        box.fill("Half a thought, more")
        eventually(lambda: [d["content"] for d in server_drafts(owner_api)] == ["Half a thought, more"], "changed")
        browser.close()
