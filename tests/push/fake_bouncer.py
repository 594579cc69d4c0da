"""A push notification bouncer on 127.0.0.1 for the tests: a real HTTP server (tests/push/fakes.py),
in a thread, that records what it is sent and answers as told (by default as Zulip's bouncer answers
a push/notify)."""

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from tests.push.fakes import serve_http


@dataclass
class Received:
    path: str
    credentials: tuple[str, str]
    body: dict[str, Any]
    user_agent: str


@dataclass
class FakeBouncer:
    url: str = ""
    received: list[Received] = field(default_factory=list)
    # What it answers next: (status, body); the last one stays.
    answers: list[tuple[int, dict]] = field(default_factory=list)
    # What it answers next at a path (before `answers`), as above.
    routes: dict[str, list[tuple[int, dict]]] = field(default_factory=dict)

    def answer(self, path: str = "") -> tuple[int, dict]:
        route = self.routes.get(path)
        if route:
            return route.pop(0) if len(route) > 1 else route[0]
        if len(self.answers) > 1:
            return self.answers.pop(0)
        if self.answers:
            return self.answers[0]
        return 200, {"result": "success", "msg": "", "total_android_devices": 1, "total_apple_devices": 0,
                     "deleted_devices": {"android_devices": [], "apple_devices": []}}  # fmt: skip

    def respond(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        scheme, _, encoded = headers.get("authorization", "").partition(" ")
        user, _, password = base64.b64decode(encoded).decode().partition(":") if scheme == "Basic" else ("", "", "")
        if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            data: dict[str, Any] = dict(parse_qsl(body.decode()))
        else:
            data = json.loads(body or b"{}")
        self.received.append(Received(path, (user, password), data, headers.get("user-agent", "")))
        return self.answer(path)


def start_fake_bouncer() -> tuple[FakeBouncer, Callable[[], None]]:
    """The bouncer, and a function stopping it."""
    bouncer = FakeBouncer()
    bouncer.url, stop = serve_http(bouncer.respond)
    return bouncer, stop
