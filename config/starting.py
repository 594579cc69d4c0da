"""What the gunicorn master answers on its port while `make run` sets up (config/gunicorn.py): a 503
to every request, in Zulip's envelope for a client (a page that reloads itself for a browser), until
the workers serve.

Refused, a restart's set-up failed the clients after ten tries a second apart (the resilience QA
pass: zulip-terminal's poll stopped for good); held in the listen backlog, their requests timed out
when it took long (the verify QA pass: zulip-terminal's presence thread died at 15 s). A 503 they
retry or report, and carry on.
"""

import contextlib
import json
import socketserver
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

RETRY_AFTER_SECONDS = 2

_ERROR = {
    "result": "error",
    "msg": "Service temporarily unavailable: the server is starting",
    "code": "SERVICE_UNAVAILABLE",
}
_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="{RETRY_AFTER_SECONDS}">
<title>Starting</title></head>
<body><h1>Starting</h1><p>The server is starting; this page loads by itself in a moment.</p></body></html>
"""


class _Starting(BaseHTTPRequestHandler):
    timeout = 2  # a client that sends nothing is not waited for
    protocol_version = "HTTP/1.1"

    def answer(self) -> None:
        # What was sent is read first: closed unread, the connection would be reset under the answer.
        with contextlib.suppress(ValueError, OSError):
            length = int(self.headers.get("Content-Length") or 0)
            if 0 < length <= 1 << 20:
                self.rfile.read(length)
        page = not self.path.startswith(("/api/", "/json/")) and "text/html" in self.headers.get("Accept", "")
        body = _PAGE.encode() if page else json.dumps(_ERROR).encode()
        self.send_response(503)
        self.send_header("Content-Type", "text/html; charset=utf-8" if page else "application/json")
        self.send_header("Retry-After", str(RETRY_AFTER_SECONDS))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = answer

    def log_message(self, format: str, *args) -> None:  # the set-up says what happens
        pass


class _Server(socketserver.TCPServer):
    """A server on a socket already listening (gunicorn's): it neither binds nor closes it."""

    def __init__(self, listening) -> None:
        super().__init__(("127.0.0.1", 0), _Starting, bind_and_activate=False)
        self.socket.close()
        self.socket = listening

    def server_close(self) -> None:
        pass  # gunicorn's, kept open for its workers


@contextlib.contextmanager
def answering_unavailable(listeners) -> Iterator[None]:
    """While the block runs, each of gunicorn's listeners (`server.LISTENERS`) answers 503; the
    threads are stopped before it returns, so that no thread is left when gunicorn forks."""
    servers = [_Server(listener.sock) for listener in listeners]
    threads = [threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True) for server in servers]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for server in servers:
            server.shutdown()
        for thread in threads:
            thread.join()
