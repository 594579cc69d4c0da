"""The messaging API's docs page (/api/docs/) in a real browser: headless Chromium (Debian's, through
Playwright's `executable_path`) against a real server whose static files were collected as `make run`
collects them. Swagger UI loads from the server alone (its Content-Security-Policy allows no other
origin and no inline script), fetches /api/v1/openapi.json and lists the operations; one opens with
its parameters. Screenshots are kept under var/screenshots/api-docs/ (CI keeps var/ as artifacts).
"""

from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import sync_playwright

from apps.core.openapi import openapi_document

pytestmark = pytest.mark.e2e

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots" / "api-docs"


@pytest.fixture
def docs_server(people, page_server):
    """A real server with its static files collected (the production storage needs the manifest)."""
    return page_server


def test_docs_page_lists_the_operations_in_a_browser(docs_server, chromium):
    url = docs_server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page()
        problems: list[str] = []
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        outside: list[str] = []
        page.on("request", lambda request: None if request.url.startswith(url) else outside.append(request.url))

        opened = page.goto(f"{url}/api/docs/")
        assert opened.status == 200
        assert "default-src 'self'" in opened.headers["content-security-policy"]
        page.locator(".opblock").first.wait_for(timeout=30_000)
        assert page.inner_text(".info .title").startswith("Parley messaging API")
        page.screenshot(path=SCREENSHOTS / "1-operations.png", full_page=False)
        paths = listed_paths(page)
        assert {"/api/v1/users/me", "/api/v1/messages", "/api/v1/register", "/api/v1/events"} <= paths
        assert paths == set(openapi_document()["paths"])

        page.goto(f"{url}/api/docs/#/messages/post-messages")  # a deep link: the operation opens
        page.reload()
        send = page.locator("#operations-messages-post-messages")
        send.locator(".opblock-section-request-body").wait_for(timeout=30_000)
        assert "application/x-www-form-urlencoded" in send.inner_text()
        send.screenshot(path=SCREENSHOTS / "2-send-message.png")
        browser.close()
    assert problems == [], problems
    assert outside == [], outside


def listed_paths(page) -> set[str]:
    """The paths of the operations Swagger UI lists: it renders them as they scroll into view, and a
    scroll can outrun its rendering (CI once missed two): down the page again until a pass finds
    nothing new."""
    seen: set[str] = set()
    for _ in range(3):
        before = len(seen)
        page.evaluate("window.scrollTo(0, 0)")
        for _ in range(300):
            texts = page.locator(".opblock-summary-path").all_inner_texts()
            seen.update(text.replace("\u200b", "") for text in texts)
            if page.locator(".models").is_visible() and page.locator(".models").bounding_box()["y"] < 800:
                break  # the end of the operations (the schemas come last)
            page.mouse.wheel(0, 400)
            page.wait_for_timeout(50)
        if len(seen) == before:
            break
    return seen
