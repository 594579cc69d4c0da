"""A push notification bouncer on 127.0.0.1 for the tests: a real HTTP server, in a thread, that
records what it is sent and answers as told (by default as Zulip's bouncer answers a push/notify)."""

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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

    def answer(self) -> tuple[int, dict]:
        if len(self.answers) > 1:
            return self.answers.pop(0)
        if self.answers:
            return self.answers[0]
        return 200, {"result": "success", "msg": "", "total_android_devices": 1, "total_apple_devices": 0,
                     "deleted_devices": {"android_devices": [], "apple_devices": []}}  # fmt: skip


def start_fake_bouncer() -> tuple[FakeBouncer, ThreadingHTTPServer]:
    bouncer = FakeBouncer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            scheme, _, encoded = (self.headers.get("Authorization") or "").partition(" ")
            user, _, password = base64.b64decode(encoded).decode().partition(":") if scheme == "Basic" else ("", "", "")
            bouncer.received.append(Received(self.path, (user, password), body, self.headers.get("User-Agent", "")))
            status, answer = bouncer.answer()
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    bouncer.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return bouncer, server
