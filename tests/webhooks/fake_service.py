"""A bot's service for the tests: a real HTTP server on a loopback address (127.0.0.1, or another
of 127/8), in a thread, that records what it is sent and answers as told."""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeService:
    url: str = ""
    port: int = 0
    received: list[Received] = field(default_factory=list)
    # What it answers: status, body (bytes, or JSON-encoded), extra headers, and a wait before it.
    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    # Seconds between the bytes of the answer, its head too with `trickle_head` (0: all at once).
    trickle: float = 0.0
    trickle_head: bool = False
    # Without it, the answer ends with its connection (HTTP/1.0, this server's).
    send_length: bool = True
    server: ThreadingHTTPServer | None = None

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def start_fake_service(host: str = "127.0.0.1") -> FakeService:
    service = FakeService()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.headers.get("Content-Type") == "application/x-www-form-urlencoded":
                body = dict(parse_qsl(raw.decode()))
            else:
                body = json.loads(raw or b"null")
            service.received.append(Received(self.path, dict(self.headers), body))
            if service.delay:
                time.sleep(service.delay)
            data = service.body if isinstance(service.body, bytes) else json.dumps(service.body).encode()
            try:
                self.send_response(service.status)
                for name, value in service.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                if service.send_length:
                    self.send_header("Content-Length", str(len(data)))
                if service.trickle_head:
                    self._trickle(b"".join(self._headers_buffer) + b"\r\n")
                    self._headers_buffer = []
                else:
                    self.end_headers()
                if service.trickle:
                    self._trickle(data)
                else:
                    self.wfile.write(data)
            except OSError:
                pass  # the server stopped waiting

        def _trickle(self, data: bytes) -> None:
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                time.sleep(service.trickle)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    service.server = server
    service.port = server.server_address[1]
    service.url = f"http://{host}:{service.port}/"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return service
