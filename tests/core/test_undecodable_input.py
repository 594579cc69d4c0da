"""Input no server can use (a NUL byte, a lone surrogate, bytes that are not UTF-8) in every path
parameter, in the credentials and in the headers of every route: a 4xx in the route's error shape,
never a 5xx, and nothing logged as an error.

The routes and their methods come from Django's URL resolver, so a new route is swept as soon as
it exists. The long-poll route a real server serves outside Django is swept in
tests/e2e/test_malformed_http.py; PostgreSQL is where most of these used to fail (it refuses NUL).
"""

import base64
import logging
import re
from dataclasses import dataclass

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern

from apps.core.views import ApiViewMixin
from apps.directory.urls import is_directory_path
from apps.messages.models import Message
from apps.users.models import User
from tests.api import ApiClient, assert_success, handlers_of
from tests.factories import BotFactory

# As they travel in a URL: NUL, a surrogate encoded as if it were UTF-8, a byte that starts no UTF-8
# character, and digits that are not ASCII (Arabic-Indic one, two).
BAD_PATH_VALUES = ["%00", "a%00b@example.com", "%ED%A0%80", "%FF", "%D9%A1%D9%A2"]
# A valid value for each converter; the directory's regex routes take UUIDs.
VALID_VALUES = {
    "id": "1",
    "str": "someone@example.com",
    "text": "example.com",
    "textpath": "narrow/is/starred",
    "path": "party_parrot",
    None: "00000000-0000-4000-8000-000000000000",
}


@dataclass(frozen=True)
class Route:
    template: str  # "/api/v1/users/{user_id}"
    parameters: tuple[str, ...]
    methods: tuple[str, ...]
    converters: dict
    view_class: type

    def path(self, **values: str) -> str:
        return self.template.format(**{name: values.get(name, self.valid(name)) for name in self.parameters})

    def valid(self, name: str) -> str:
        return VALID_VALUES[self.converters.get(name)]


def _routes(resolver: URLResolver, prefix: str = "", converters: dict | None = None):
    for pattern in resolver.url_patterns:
        text, names, kinds = _template(pattern.pattern)
        if text.startswith("admin"):  # the Django admin's pages, and the one leading out of it
            continue
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern, prefix + text, {**(converters or {}), **kinds})
            continue
        assert isinstance(pattern, URLPattern)
        methods = tuple(m.upper() for m in handlers_of(pattern.callback))
        view_class = getattr(pattern.callback, "cls", None) or getattr(pattern.callback, "view_class", object)
        yield Route("/" + prefix + text, names, methods, {**(converters or {}), **kinds}, view_class)


def _template(pattern) -> tuple[str, tuple[str, ...], dict]:
    """The pattern as a format string, its parameters' names, and their converters' names."""
    if isinstance(pattern, RoutePattern):
        kinds = {}

        def parameter(match: re.Match) -> str:
            kind, name = match.group(1) or "str", match.group(2)
            kinds[name] = {"IdConverter": "id"}.get(type(pattern.converters[name]).__name__, kind)
            return "{" + name + "}"

        text = re.sub(r"<(?:(\w+):)?(\w+)>", parameter, str(pattern))
        return text, tuple(kinds), kinds
    assert isinstance(pattern, RegexPattern)
    names = tuple(re.findall(r"\(\?P<(\w+)>", pattern._regex))
    text = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern._regex)
    # The directory's routes ignore empty segments ("/*", "/+").
    text = re.sub(r"/[*+]", "/", text.removeprefix("^").removesuffix("$")).strip("/").replace("\\.", ".")
    return text, names, {}


ROUTES = sorted(_routes(get_resolver()), key=lambda route: route.template)


def test_the_sweep_finds_every_api():
    templates = {route.template for route in ROUTES}
    assert {"/api/v1/users/{email}", "/api/v1/events", "/users/{user_id}", "/version"} <= templates
    assert len(templates) > 40


@pytest.fixture(autouse=True)
def _no_errors_logged(caplog, settings):
    settings.RATE_LIMITING_ENABLED = False
    yield
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]


# HTML pages (apps/users/pages.py, apps/web/pages.py), which people open in a browser: their errors are
# pages too. "/" is the web app.
HTML_PAGES = ("/accounts/", "/join/", "/login", "/account", "/logout")


def is_html_page(path: str) -> bool:
    return path == "/" or path.startswith(HTML_PAGES)


def assert_client_error(response, path: str) -> None:
    assert 400 <= response.status_code < 500, (path, response.status_code, response.content)
    if is_html_page(path):
        assert response["Content-Type"] == "text/html; charset=utf-8", (path, response.content)
        return
    assert response["Content-Type"] == "application/json", (path, response.content)
    if response.request["REQUEST_METHOD"] == "HEAD":
        return
    body = response.json()
    if is_directory_path(path):
        assert set(body) >= {"message", "request_id"}, body
    else:
        assert body["result"] == "error", body
        assert body["code"], body


def basic(credentials: bytes) -> str:
    return "Basic " + base64.b64encode(credentials).decode()


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.template)
def test_bad_path_parameters_are_client_errors(route, owner):
    api = ApiClient(owner)
    for name in route.parameters:
        for value in BAD_PATH_VALUES:
            path = route.path(**{name: value})
            for method in route.methods:
                assert_client_error(api.client.generic(method, path, **api.headers), path)


# Credentials with a well-formed key, so that the email is looked up.
BAD_CREDENTIALS = [
    b"owner\x00@example.com:" + b"A" * 32,
    b"\x00:" + b"A" * 32,
    b"owner@example.com\x00:" + b"A" * 32,
    b"owner@example.com:" + b"A" * 31 + b"\x00",
    b"\xed\xa0\x80@example.com:" + b"A" * 32,
    b"owner@example.com:\xff" + b"A" * 31,
]


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.template)
def test_bad_credentials_are_client_errors(route, owner):
    path = route.path()
    for credentials in BAD_CREDENTIALS:
        api = ApiClient(authorization=basic(credentials))
        for method in route.methods:
            response = api.client.generic(method, path, **api.headers)
            if response.status_code == 200 and method in ("GET", "HEAD"):
                continue  # an endpoint that needs no credentials (and ignores any that are sent)
            if response.status_code in (200, 302) and is_html_page(path):
                continue  # a page ignores them too: a browser that is not logged in is sent to log in
            assert_client_error(response, path)


@pytest.mark.parametrize("route", ROUTES, ids=lambda route: route.template)
def test_bad_headers_are_harmless(route, owner):
    api = ApiClient(owner)
    path = route.path()
    headers = {"HTTP_USER_AGENT": "Zulip\x00Python/1", "HTTP_X_NOTE": "\x00\xff", "HTTP_IF_NONE_MATCH": '"\x00"'}
    for method in route.methods:
        response = api.client.generic(method, path, **api.headers, **headers)
        if response.status_code >= 400:
            assert_client_error(response, path)
        else:
            assert response.status_code < 500, (path, response.content)


def test_a_nul_byte_in_the_user_agent_does_not_reach_the_database(owner):
    """The sending client's name is the User-Agent's product token: a NUL byte ends it."""
    api = ApiClient(owner)
    assert_success(api.post("/users/me/subscriptions", {"subscriptions": [{"name": "general"}]}))
    params = {"type": "stream", "to": "general", "topic": "t", "content": "hi"}
    message_id = assert_success(api.post("/messages", params, HTTP_USER_AGENT="Zulip\x00Python/1"))["id"]
    assert Message.objects.get(id=message_id).sending_client == "Zulip"


@pytest.mark.parametrize("to", ['"\\u0000"', '["\\u0000"]', '"\\ud800"', '["a\\ud800@example.com"]'])
def test_a_nul_byte_or_lone_surrogate_in_json_text_of_to_is_refused(owner, to):
    """`to` is JSON when it parses: its strings are checked like every parameter's."""
    api = ApiClient(owner)
    response = api.post("/messages", {"type": "stream", "to": to, "topic": "t", "content": "hi"})
    assert_client_error(response, "/api/v1/messages")
    response = api.post("/messages", {"type": "direct", "to": to, "content": "hi"})
    assert_client_error(response, "/api/v1/messages")


# Bodies no API view can read: another media type than a form's, a charset that does not exist, a
# multipart body without its parts.
UNREADABLE_BODIES = [
    ("application/json", b"{}", 415),
    ("text/plain; charset=bogus", b"a=1", 415),
    ("multipart/form-data", b"garbage", 400),
]
WRITES = [
    (route, method)
    for route in ROUTES
    if route.template.startswith("/api/v1/") and issubclass(route.view_class, ApiViewMixin)
    for method in route.methods
    if method in ("POST", "PUT", "PATCH", "DELETE")
]


@pytest.mark.parametrize(("route", "method"), WRITES, ids=lambda item: getattr(item, "template", item))
def test_an_unreadable_body_is_refused_before_anything_is_done(route, method, owner):
    """Before the handler looks anything up (so even for ids that do not exist): the fuzz QA pass
    found handlers that read no parameter acting, then the request refused for its body."""
    api = ApiClient(owner)
    # Refused whatever the body (a method or a permission the owner lacks: the checks before it).
    refused_first = api.client.generic(method, route.path(), b"", **api.headers).status_code in (403, 405)
    for content_type, body, status in UNREADABLE_BODIES:
        response = api.client.generic(method, route.path(), body, content_type=content_type, **api.headers)
        expected = (status, 403, 405) if refused_first else (status,)
        assert response.status_code in expected, (method, route.template, content_type, response.content)
        assert response.json()["result"] == "error"


def test_a_bot_key_is_not_regenerated_by_a_request_refused_for_its_body(owner):
    bot = BotFactory(realm=owner.realm, bot_owner=owner)
    api = ApiClient(owner)
    for content_type, body, status in UNREADABLE_BODIES:
        path = f"/api/v1/bots/{bot.id}/api_key/regenerate"
        response = api.client.generic("POST", path, body, content_type=content_type, **api.headers)
        assert response.status_code == status
        assert User.objects.get(id=bot.id).api_key == bot.api_key
