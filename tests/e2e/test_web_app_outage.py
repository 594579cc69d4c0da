"""The web app opened while Redis is down: the page says why it shows nothing and loads by itself
once Redis is back (the resilience QA pass: an empty page, "Reconnecting…" all it said)."""

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.e2e.test_web_app import give_passwords, log_in
from tests.factories import create_stream

pytestmark = [pytest.mark.e2e, pytest.mark.redis]


def test_a_page_opened_while_redis_is_down_says_so_and_loads_once_it_is_back(
    live_server_factory, collected_static, people, own_redis, chromium
):
    realm, owner, member = people
    create_stream(realm, "general", owner, member)
    give_passwords(member)
    server = live_server_factory(STATIC_ROOT=collected_static, REDIS_URL=own_redis.url)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        _, page = log_in(browser, server.url, member.delivery_email)
        expect(page.locator("#channels")).to_contain_text("general")
        own_redis.kill()
        page.reload()
        expect(page.locator("#empty")).to_have_text(
            "Your conversations cannot be loaded yet (Service temporarily unavailable: the Redis server cannot be"
            " reached). They load by themselves once the server answers."
        )
        expect(page.locator("#connection")).to_have_attribute("data-state", "reconnecting")
        own_redis.start()
        page.locator("#connection .retry-now").click()
        expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
        expect(page.locator("#channels")).to_contain_text("general")
        expect(page.locator("#empty")).to_have_text("No messages here yet.")  # the feed, loaded
        browser.close()
