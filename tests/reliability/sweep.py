"""The /api/v1 sweep's parts: its routes, the parameters each takes, what hypothesis sends, and what
every answer must be.

Routes come from Django's URL resolver and parameters from the `Params` classes each handler uses
(found in its code), so a new route or parameter is swept without a change here.
"""

import base64
import json
import re
import types
import typing
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from annotated_types import Ge, Le, MaxLen
from django.apps import apps as django_apps
from django.db import connection
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Json

from apps.core.params import Params
from tests.api import handlers_of
from tests.reliability.population import ROLES, Population

API_PREFIX = "api/v1/"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PLACEHOLDER = re.compile(r"<(?:(?P<converter>\w+):)?(?P<name>\w+)>")


@dataclass(frozen=True)
class Route:
    """One method of one /api/v1 URL pattern."""

    pattern: str  # under /api/v1/, with Django's placeholders: "users/<id:user_id>"
    method: str
    params: tuple[type[Params], ...]

    def __str__(self) -> str:
        return f"{self.method} /{API_PREFIX}{self.pattern}"

    @property
    def converters(self) -> list[str]:
        return [m["converter"] or "str" for m in PLACEHOLDER.finditer(self.pattern)]

    @property
    def placeholders(self) -> list[str]:
        return [m["name"] for m in PLACEHOLDER.finditer(self.pattern)]

    def path(self, segments: list[str]) -> str:
        return api_path(self.pattern, segments)


def api_path(pattern: str, segments: list[str]) -> str:
    """The URL path of a pattern with these values (URL-quoted) for its placeholders."""
    values = iter(segments)
    return "/" + API_PREFIX + PLACEHOLDER.sub(lambda _: quote(next(values), safe=""), pattern)


def api_patterns() -> list[tuple[str, dict]]:
    """(pattern under /api/v1/, {method: handler}) of every /api/v1 URL, in the resolver's order."""

    def walk(patterns, prefix: str):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.callback

    return [
        (route.removeprefix(API_PREFIX), handlers_of(view))
        for route, view in walk(get_resolver().url_patterns, "")
        if route.startswith(API_PREFIX)
    ]


def api_routes() -> list[Route]:
    return [
        Route(pattern, method, params_used_by(handlers[method.lower()]))
        for pattern, handlers in api_patterns()
        for method in METHODS
        if method.lower() in handlers
    ]


def params_used_by(handler) -> tuple[type[Params], ...]:
    """The Params classes a handler's code names, directly or through the project's functions,
    classes and modules it calls."""
    found: set[type[Params]] = set()
    _collect_params(handler, found, seen=set(), depth=0)
    return tuple(sorted(found, key=lambda cls: cls.__name__))


def _collect_params(function, found: set, seen: set, depth: int) -> None:
    if depth > 6 or not isinstance(function, types.FunctionType) or function in seen:
        return
    seen.add(function)
    names = set()
    pending = [function.__code__]
    while pending:  # the function's code and the code nested in it (comprehensions, closures)
        code = pending.pop()
        names.update(code.co_names)
        pending.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    objects = []
    for name in names & function.__globals__.keys():
        obj = function.__globals__[name]
        objects.append(obj)
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith("apps."):
            objects.extend(getattr(obj, attribute) for attribute in names if hasattr(obj, attribute))
    for obj in objects:
        if isinstance(obj, type) and issubclass(obj, Params) and obj is not Params:
            found.add(obj)
        elif isinstance(obj, type) and obj.__module__.startswith("apps."):
            for attribute in names:
                member = vars(obj).get(attribute)
                member = getattr(member, "__func__", member)  # classmethod, staticmethod
                _collect_params(member, found, seen, depth + 1)
        elif (getattr(obj, "__module__", None) or "").startswith("apps."):
            _collect_params(obj, found, seen, depth + 1)


# --- what a request is made of ---------------------------------------------------------------------


@dataclass(frozen=True)
class Credentials:
    name: str
    authorization: str | None  # the header's value
    host: str = "testserver"


def basic(email: str, key: str) -> str:
    return "Basic " + base64.b64encode(f"{email}:{key}".encode()).decode()


def credentials(population: Population) -> list[Credentials]:
    """A user of each role, and ones to refuse: none, a wrong or malformed key, a deactivated user,
    another organization's user, undecodable and hostile headers."""
    users = population.users
    member = users["member"]
    good = [Credentials(role, basic(users[role].delivery_email, users[role].api_key)) for role in ROLES]
    return [
        *good,
        Credentials("none", None),
        Credentials("wrong key", basic(member.delivery_email, "A" * 32)),
        Credentials("malformed key", basic(member.delivery_email, "short")),
        Credentials("deactivated", basic(users["deactivated"].delivery_email, users["deactivated"].api_key)),
        Credentials("other organization", basic(users["foreign"].delivery_email, users["foreign"].api_key)),
        Credentials(
            "other organization's host", basic(member.delivery_email, member.api_key), host="zephyr.testserver"
        ),
        Credentials("unknown host", basic(member.delivery_email, member.api_key), host="nowhere.testserver"),
        Credentials("NUL in email", basic("member\x00@sweep.example", member.api_key)),
        Credentials("NUL in key", basic(member.delivery_email, member.api_key[:-1] + "\x00")),
        Credentials("unicode email", basic("mémber@swéep.example", member.api_key)),
        Credentials("not base64", "Basic !!!not-base64!!!"),
        Credentials("not utf-8", "Basic " + base64.b64encode(b"\xff\xfe:\xff").decode()),
        Credentials("no colon", "Basic " + base64.b64encode(member.delivery_email.encode()).decode()),
        Credentials("bearer", "Bearer " + member.api_key),
    ]


# Wire texts no parameter accepts in this form: wrong JSON types, invalid JSON, numbers out of
# range, hostile strings, and large or deep values (every one small enough to send quickly).
JUNK = [
    "",
    " ",
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "1e400",
    "NaN",
    "Infinity",
    str(2**63),
    str(2**64),
    "9" * 400,
    "[]",
    "{}",
    '""',
    '"\\u0000"',
    '"\\ud800"',
    "[null]",
    '[{"a": null}]',
    "{",
    "[1, 2,",
    '{"operator": "stream"}',
    "\x00",
    "a\x00b",
    "١٢",
    "ǅ𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ẞ \u0131 \u017f \u212a",  # Unicode case folding: dotless i, long s, Kelvin sign
    "\u202e\u200b\ufeff",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "x" * 100_000,
    json.dumps(list(range(20_000))),
    json.dumps(["x"] * 20_000),
    json.dumps([[["stream", "general"]] * 3] * 1000),
    "[" * 50_000 + "]" * 50_000,
    '{"a":' * 20_000 + "1" + "}" * 20_000,
]

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
JUNK_TEXT = st.one_of(st.sampled_from(JUNK), st.text(max_size=40), JSON_VALUES.map(json.dumps))

JUNK_SEGMENTS = [
    "0",
    "00",
    "-1",
    "1.5",
    "9" * 18,
    "9" * 19,
    str(2**64),
    "١٢",
    "\x00",
    "1\x00",
    "ü",
    "😀",
    " ",
    "..",
    "a/b",
]


class Values:
    """Plausible values for a parameter, from its annotation and name: the population's ids of the
    kind the name says (a `stream_id` is a channel's), its names and emails, and the values Zulip's
    parameters of that name take, so that requests also get past validation to what lies behind."""

    def __init__(self, population: Population) -> None:
        self.population = population
        self.texts = st.one_of(
            st.sampled_from(population.names), st.sampled_from(population.emails), st.text(max_size=12)
        )
        users, groups = population.ids["user"], population.ids["group"]
        group_setting = st.one_of(
            st.sampled_from(groups),
            st.fixed_dictionaries(
                {"direct_members": st.lists(st.sampled_from(users), max_size=3)},
                optional={"direct_subgroups": st.lists(st.sampled_from(groups), max_size=2)},
            ),
        )
        narrow_term = st.one_of(
            st.tuples(st.sampled_from(["channel", "stream", "topic", "sender", "dm", "search"]), self.texts),
            st.fixed_dictionaries(
                {
                    "operator": st.sampled_from(["channel", "stream", "topic", "is", "search", "id", "dm", "has"]),
                    "operand": st.one_of(self.texts, st.sampled_from(population.all_ids), st.just("unread")),
                },
                optional={"negated": st.booleans()},
            ),
        )
        self.by_name = {
            "username": st.sampled_from(population.emails),
            "password": st.sampled_from(["correct horse battery", "wrong"]),
            "new_email": st.sampled_from(population.emails) | st.emails(),
            "stream": st.sampled_from(population.channels),
            "subscriptions": st.lists(
                st.sampled_from(population.channels) | st.fixed_dictionaries({"name": self.texts}), max_size=3
            ),
            "topic": st.sampled_from(population.topics) | self.texts,
            "topic_name": st.sampled_from(population.topics) | self.texts,
            "narrow": st.lists(narrow_term, max_size=3),
            "anchor": st.sampled_from(["newest", "oldest", "first_unread", *map(str, population.ids["message"])]),
            "to": st.one_of(
                st.sampled_from(population.names),
                st.lists(st.sampled_from(users), min_size=1, max_size=3).map(json.dumps),
                st.sampled_from(population.emails),
            ),
            "role": st.sampled_from([100, 200, 300, 400, 600]),
            "flag": st.sampled_from(["read", "starred", "collapsed", "mentioned", "historical", "read_by_me"]),
            "property": st.sampled_from(["color", "is_muted", "pin_to_top", "in_home_view", "desktop_notifications"]),
            "value": st.one_of(st.booleans(), st.sampled_from(["#a1b2c3", "#FFF"])),
            "event_types": st.lists(
                st.sampled_from(["message", "realm_user", "subscription", "stream", "user_group", "heartbeat"]),
                max_size=3,
            ),
            "include_subscribers": st.sampled_from(["true", "false", "partial"]),
            "message_retention_days": st.one_of(st.sampled_from(["realm_default", "unlimited"]), st.integers(-1, 400)),
            "topics_policy": st.sampled_from(
                ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"]
            ),
            "visibility_policy": st.integers(-1, 4),
            "field_type": st.integers(0, 9),
            "field_data": st.one_of(
                st.just({}), st.just({"a": {"text": "A", "order": "1"}}), st.dictionaries(self.texts, self.texts)
            ),
            "group": group_setting,
            "group_change": st.fixed_dictionaries({"new": group_setting}, optional={"old": group_setting}),
        }

    def wire(self, params_class: type[Params], name: str) -> st.SearchStrategy[str]:
        """The parameter's plausible values as sent: raw text, or JSON where it is JSON."""
        field = params_class.model_fields[_field_name(params_class, name)]
        is_json = _is_json(field.annotation, field.metadata)
        values = self.of(field.annotation, field.metadata, name)
        return values.map(lambda v: json.dumps(v) if is_json or not isinstance(v, str) else v)

    def of(self, annotation: Any, metadata: list | tuple = (), name: str = "") -> st.SearchStrategy:
        if name in self.by_name:
            return self.by_name[name]
        if name.endswith("_group"):  # a group-valued setting: a value, or a change {new, old}
            return self.by_name["group"] | self.by_name["group_change"]
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Annotated:
            return self.of(args[0], [*metadata, *annotation.__metadata__], name)
        if origin in (typing.Union, types.UnionType):
            return st.one_of([self.of(arg, metadata, name) for arg in args if arg is not type(None)])
        if origin is typing.Literal:
            return st.sampled_from(args)
        if origin is list:
            limit = min([m.max_length for m in metadata if isinstance(m, MaxLen)] or [4])
            return st.lists(self.of(args[0], (), name) if args else JSON_VALUES, max_size=min(limit, 4))
        if origin is tuple:
            return st.tuples(*(self.of(arg, (), name) for arg in args if arg is not Ellipsis))
        if origin is dict:
            return st.dictionaries(self.texts, self.of(args[1], (), name) if args else JSON_VALUES, max_size=3)
        if annotation is bool:
            return st.booleans()
        if annotation is int:
            low = next((m.ge for m in metadata if isinstance(m, Ge)), -5)
            high = next((m.le for m in metadata if isinstance(m, Le)), 10**6)
            return st.sampled_from(self.ids_named(name)) | st.integers(min_value=low, max_value=high)
        if annotation is str:
            return self.texts
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {n: self.of(f.annotation, f.metadata, n) for n, f in annotation.model_fields.items()}
            required = {n for n, f in annotation.model_fields.items() if f.is_required()}
            return st.fixed_dictionaries(
                {n: v for n, v in fields.items() if n in required},
                optional={n: v for n, v in fields.items() if n not in required},
            )
        return JSON_VALUES  # Any

    def ids_named(self, name: str) -> list[int]:
        """Ids of the kind a parameter's name says, else of every kind."""
        for kind, words in ID_KINDS.items():
            if any(word in name for word in words):
                return self.population.ids[kind]
        return self.population.all_ids


# Which ids a parameter or path parameter named with one of these words holds.
ID_KINDS = {
    "stream": ("stream",),
    "message": ("message", "msg", "anchor"),
    "group": ("group", "subgroup"),
    "field": ("field", "order", "data"),
    "user": ("user", "principal", "add", "delete", "member"),
}


def _is_json(annotation: Any, metadata: list | tuple) -> bool:
    if any(m is Json or isinstance(m, Json) for m in metadata):
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _is_json(args[0], annotation.__metadata__)
    if origin in (typing.Union, types.UnionType):
        return any(_is_json(arg, ()) for arg in args)
    return False


@dataclass(frozen=True)
class Request:
    """What one example sends; its repr is what a failure report shows."""

    method: str
    path: str
    params: dict[str, str]
    credentials: Credentials

    def __repr__(self) -> str:
        shown = {k: (v if len(v) <= 200 else f"{v[:60]!r}... ({len(v)} characters)") for k, v in self.params.items()}
        return f"{self.method} {self.path} {shown} as {self.credentials.name} on {self.credentials.host}"

    def _repr_pretty_(self, printer, cycle) -> None:  # how hypothesis shows it: long values cut
        printer.text(repr(self))

    def url_and_body(self) -> tuple[str, str]:
        """The URL (with the query string for GET) and the form-encoded body (other methods)."""
        encoded = urlencode(self.params)
        if self.method == "GET":
            return (f"{self.path}?{encoded}" if encoded else self.path), ""
        return self.path, encoded


@st.composite
def requests_for(draw, route: Route, population: Population, values: Values, creds: list[Credentials]) -> Request:
    """Path parameters mostly of the right kind, some junk; parameters all plausible, one junk, or
    anything; credentials of a role three times in four. (Hypothesis starts from the simplest
    choices, the first ones here: the plausible.)"""
    segments = []
    for converter, name in zip(route.converters, route.placeholders, strict=True):
        plausible = population.emails if converter == "str" else [str(i) for i in values.ids_named(name)]
        choice = draw(st.integers(0, 7))
        if choice <= 4:
            segments.append(draw(st.sampled_from(plausible)))
        elif choice == 5:
            segments.append(draw(st.sampled_from([str(i) for i in population.all_ids])))
        elif choice == 6:
            segments.append(draw(st.sampled_from(JUNK_SEGMENTS)))
        else:
            segments.append(draw(st.text(max_size=8)))
    declared = [(cls, name) for cls in route.params for name in cls.parameter_names()]
    mode = draw(st.sampled_from(["plausible", "one junk", "anything"]))
    params = {}
    for params_class, name in declared:
        required = params_class.model_fields[_field_name(params_class, name)].is_required()
        if mode == "anything":
            kind = draw(st.sampled_from(["plausible", "omitted", "junk"]))
        else:
            kind = "plausible" if required or draw(st.booleans()) else "omitted"
        if kind == "plausible":
            params[name] = draw(values.wire(params_class, name))
        elif kind == "junk":
            params[name] = draw(JUNK_TEXT)
    if mode == "one junk" and declared:
        params[draw(st.sampled_from([name for _, name in declared]))] = draw(JUNK_TEXT)
    if draw(st.integers(0, 9)) == 9:
        params[draw(st.sampled_from(["unknown", "", "\x00", "ü" * 3]))] = draw(JUNK_TEXT)
    good = [c for c in creds if c.name in ROLES]
    bad = [c for c in creds if c.name not in ROLES]
    credential = draw(st.sampled_from(good if draw(st.integers(0, 3)) < 3 else bad))
    return Request(route.method, route.path(segments), params, credential)


def _field_name(params_class: type[Params], name: str) -> str:
    """The field a parameter name (an alias, maybe) sets."""
    return next(n for n, f in params_class.model_fields.items() if (f.alias or n) == name)


def sweep_settings(examples: int) -> settings:
    """A fixed seed (derandomize), no example database, a bounded number of examples and no
    deadline (a request's time depends on the machine); the organization fixture serves every
    example of a test, which starts each one from the same state."""
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- what every answer must be ---------------------------------------------------------------------


# Routes whose success is a document of its own rather than the envelope (its errors are not).
DOCUMENT_ROUTES = {"openapi.json": "openapi"}  # the route's pattern -> a key its document has


def check_envelope(status: int, content_type: str, content: bytes, request: Request) -> dict:
    """Never a 5xx; always JSON in Zulip's envelope: `result` "success" (200, `msg` "") or "error"
    (4xx, with `msg` and `code`); a DOCUMENT_ROUTES route's 200 is its document."""
    assert status < 500, f"{status} for {request!r}: {content[:500]!r}"
    assert content_type == "application/json", f"{content_type} for {request!r}: {content[:500]!r}"
    body = json.loads(content)
    assert isinstance(body, dict), f"{request!r}: {body!r}"
    document_key = DOCUMENT_ROUTES.get(request.path.removeprefix("/" + API_PREFIX))
    if document_key is not None and status == 200:
        assert document_key in body, f"{request!r}: {content[:500]!r}"
        assert "result" not in body, f"{request!r}: {content[:500]!r}"
    elif body.get("result") == "success":
        assert status == 200, f"{status} for {request!r}: {content[:500]!r}"
        assert body.get("msg") == "", f"{request!r}: {content[:500]!r}"
    else:
        assert body.get("result") == "error", f"{request!r}: {content[:500]!r}"
        assert 400 <= status < 500, f"{status} for {request!r}: {content[:500]!r}"
        assert isinstance(body.get("msg"), str), f"{request!r}: {body!r}"
        assert isinstance(body.get("code"), str), f"{request!r}: {body!r}"
    return body


def fingerprint() -> dict[str, int]:
    """Row counts of every table of the project's models (the event outbox among them), in one query."""
    tables = sorted(m._meta.db_table for m in django_apps.get_models() if m.__module__.startswith("apps."))
    counts = ", ".join(f"(SELECT COUNT(*) FROM {connection.ops.quote_name(table)})" for table in tables)  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}")
        return dict(zip(tables, cursor.fetchone(), strict=True))
