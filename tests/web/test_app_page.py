"""The web app's page (/): for the logged-in user of the host's organization only, with the CSRF
token its script sends, and its own static files (no CDN)."""

import re
from pathlib import Path

from django.contrib.auth.password_validation import password_validators_help_texts
from django.contrib.staticfiles import finders
from django.utils.html import escape

from apps.core.middleware import PAGE_CSP
from apps.groups.models import SystemGroups
from apps.groups.selectors import get_system_group
from apps.messages.emoji import unicode_emoji_code
from apps.web.pages import APP_CSP
from tests.web.conftest import browser, submit

RIGHT = "correct horse battery"  # the factories' password (tests.factories.UserFactory)


def test_logged_out_the_app_sends_to_the_login_page(realm):
    response = browser().get("/")
    assert (response.status_code, response["Location"]) == (302, "/login/")


def test_a_method_the_pages_do_not_take_is_refused_before_the_login(member):
    """TRACE / and OPTIONS / were sent to log in (and, logged in, answered 405): now refused with the
    methods the page takes, whether logged in or not."""
    client = browser()
    for logged_in in (False, True):
        if logged_in:
            submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
        for path in ("/", "/account/"):
            for method in ("TRACE", "OPTIONS"):
                refused = client.generic(method, path)
                assert refused.status_code == 405, (logged_in, path, method)
                assert set(refused["Allow"].split(", ")) >= {"GET", "HEAD"}


def test_logging_in_opens_the_app(member):
    client = browser()
    response = submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    assert (response.status_code, response["Location"]) == (302, "/")
    page = client.get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'data-user-id="{member.id}"' in html
    assert "no-store" in page["Cache-Control"] or "max-age=0" in page["Cache-Control"]
    # The page carries the session's CSRF token for its script; the cookie holds the same secret.
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', html)[1]
    assert token
    assert "csrftoken" in client.cookies


def test_the_settings_cut_no_name_short(member):
    """The web app QA pass: the name field stopped at 60 characters, cutting a name of up to 100
    (what the server and the join page take) short when it was saved; with no maxlength at all, a
    paste too long is refused and said by the server (tests/e2e/test_web_app.py), never cut."""
    client = browser()
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    page = client.get("/").content.decode()
    for field in ("settings-name", "new-channel-name", "new-channel-description"):
        assert "maxlength" not in re.search(rf'<input id="{field}"[^>]*>', page)[0]


def test_the_settings_say_what_a_new_password_needs(member):
    """The newcomer QA pass: a refusal said only "New password is too weak!"; the join page lists
    the rules."""
    client = browser()
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    html = client.get("/").content.decode()
    rules = re.search(r'<p class="help" id="password-rules">([^<]*)</p>', html)[1]
    assert rules == escape(" ".join(password_validators_help_texts()))
    assert "at least" in rules


def test_a_guest_is_offered_no_channel_creation(member, guest):
    """Guests never create channels (as in Zulip): the web app QA pass, told so only on Create."""
    for user, offered in ((member, True), (guest, False)):
        client = browser()
        submit(client, "/login/", {"email": user.delivery_email, "password": RIGHT})
        html = client.get("/").content.decode()
        assert ('id="create-channel"' in html) is offered
        assert 'id="create-channel-status"' in html  # where the channel list's failures are said


def test_the_page_loads_only_its_own_scripts_and_styles(member):
    client = browser()
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    html = client.get("/").content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', html)
    assert sources, html
    for source in sources:
        assert source.startswith("/static/web/"), source
        assert finders.find(source.removeprefix("/static/")) is not None, source


def test_the_page_allows_only_its_own_scripts(member):
    client = browser()
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    policy = client.get("/")["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert "unsafe-inline" not in directives["default-src"]


def test_every_other_page_allows_only_the_servers_scripts(member, staff, client_for):
    """The hostile QA pass: /login/ had no policy. Pages with one of their own keep it; what is not
    a page (the API's JSON) gets none."""
    client = browser()
    for path in ("/login/", "/accounts/password/reset/", "/join/no-such-invitation/"):
        assert client.get(path)["Content-Security-Policy"] == PAGE_CSP, path
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    assert client.get("/account/")["Content-Security-Policy"] == PAGE_CSP
    assert client.get("/")["Content-Security-Policy"] == APP_CSP
    assert staff.get("/admin/")["Content-Security-Policy"] == PAGE_CSP
    assert "Content-Security-Policy" not in client_for(member).get("/users/me")


def test_a_session_of_another_organization_is_no_session_here(member, foreign_user):
    client = browser()
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    assert browser("zephyr.testserver").get("/").status_code == 302
    assert client.get("/", HTTP_HOST="zephyr.testserver")["Location"] == "/login/"


def test_an_unknown_organization_is_a_page(realm):
    response = browser("nowhere.testserver").get("/")
    assert response.status_code == 404


def test_every_page_names_its_icon_which_is_one_of_its_own_files(member):
    """The app, the sign-in pages and the admin: no page leaves the browser asking for a
    /favicon.ico that is not there (a 404 in every console)."""
    client = browser()
    pages = [client.get("/login/"), client.get("/accounts/password/reset/"), client.get("/admin/login/")]
    submit(client, "/login/", {"email": member.delivery_email, "password": RIGHT})
    pages.append(client.get("/"))
    for page in pages:
        assert page.status_code == 200, page
        [icon] = re.findall(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page.content.decode())
        assert finders.find(icon.removeprefix("/static/")) is not None, icon


def test_a_browser_opening_an_address_that_is_no_page_gets_a_page(db):
    """A mistyped address in a browser: a 404 page, not the API's JSON; an API client still gets
    the envelope."""
    page = browser().get("/no/such/page", HTTP_ACCEPT="text/html,application/xhtml+xml")
    assert (page.status_code, page["Content-Type"]) == (404, "text/html; charset=utf-8")
    assert "<h1>Page not found</h1>" in page.content.decode()
    api = browser().get("/api/v1/no/such/endpoint", HTTP_ACCEPT="text/html")
    assert (api.status_code, api.json()["msg"]) == (404, "Not Found")
    client = browser().get("/no/such/page")
    assert (client.status_code, client.json()["code"]) == (404, "BAD_REQUEST")


def test_the_quick_reactions_are_emoji_the_server_takes():
    """Each of the page's four quick reactions names its emoji by one of the emoji's names (a
    reaction whose name is another emoji's is refused: the emoji names QA pass changed `smile`)."""
    script = Path(finders.find("web/render.js")).read_text()
    block = script[script.index("QUICK_REACTIONS = [") :].split("];")[0]
    quick = re.findall(r'name: "([^"]+)", code: "([^"]+)"', block)
    assert len(quick) == 4
    for name, code in quick:
        assert unicode_emoji_code(name) == code, name


def test_the_pickers_common_emoji_are_named_as_the_server_names_them():
    """A name the server does not know is left out of the picker (the verify QA pass: 37 of 40)."""
    script = Path(finders.find("web/emoji_picker.js")).read_text()
    names = re.findall(r'"([^"]+)"', script[script.index("const COMMON = [") :].split("];")[0])
    assert len(names) == 40
    assert [name for name in names if unicode_emoji_code(name) is None] == []


def _app_page_of(user) -> str:
    client = browser()
    client.force_login(user)
    return client.get("/").content.decode()


def test_invitations_are_offered_as_the_organization_lets_each_person_invite(realm, owner, admin, member, guest):
    """The "Invite people" panel: the roles each may give (owners by owners, moderators and
    administrators by administrators), invitations by email and links each as the organization's
    groups allow, and nothing for whom it allows neither."""
    roles = re.compile(r'<select id="invite-role">(.*?)</select>', re.S)
    offered = lambda html: re.findall(r'<option value="(\d+)"', roles.search(html)[1])  # noqa: E731
    page = _app_page_of(owner)
    for offer in ('id="open-invite"', 'id="invite-emails"', 'id="invite-make-link"'):
        assert offer in page
    assert offered(page) == ["100", "200", "300", "400", "600"]
    assert offered(_app_page_of(admin)) == ["200", "300", "400", "600"]
    # Members invite by email where the organization lets them (here: Members), as members or guests;
    # links are for administrators.
    realm.can_invite_users_group = get_system_group(realm.id, SystemGroups.MEMBERS)
    realm.create_multiuse_invite_group = get_system_group(realm.id, SystemGroups.ADMINISTRATORS)
    realm.save(update_fields=["can_invite_users_group", "create_multiuse_invite_group"])
    page = _app_page_of(member)
    assert 'id="invite-emails"' in page
    assert 'id="invite-make-link"' not in page
    assert offered(page) == ["400", "600"]
    # Where only administrators invite, a member has no panel; a guest never has one.
    realm.can_invite_users_group = get_system_group(realm.id, SystemGroups.ADMINISTRATORS)
    realm.save(update_fields=["can_invite_users_group"])
    assert 'id="open-invite"' not in _app_page_of(member)
    assert 'id="invite"' not in _app_page_of(guest)
