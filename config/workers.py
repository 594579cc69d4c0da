"""The uvicorn worker gunicorn runs (config/gunicorn.py), and the HTTP protocol it speaks."""

import asyncio
import json
import logging
import os
import signal
import sys
import uuid

from gunicorn.arbiter import Arbiter
from uvicorn import Server
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn_worker import UvicornWorker

from apps.core.errors import JsonableError

logger = logging.getLogger("uvicorn.error")


def requested_path(head_start: bytes) -> bytes:
    """The path of a request line's first bytes (b"" when there is none), however the parser
    judged the rest (an unknown method, a URL too long to finish)."""
    parts = head_start.split(b"\r\n", 1)[0].split(b" ")
    return parts[1].split(b"?", 1)[0] if len(parts) > 1 else b""


def bad_request(head_start: bytes, reason: str) -> tuple[bytes, str]:
    """The body of the parser's 400 ("Bad Request: " and why) and its request id: Zulip's envelope
    (JsonableError's 400 BAD_REQUEST), or Dropshot's `Error` for a request to the directory API (its
    request line names one of the API's paths)."""
    from apps.directory.urls import is_directory_path  # Django is set up by now

    request_id = str(uuid.uuid4())  # as new_request_id's
    message = f"Bad Request: {reason}"
    if is_directory_path(requested_path(head_start).decode("latin1")):
        return json.dumps({"message": message, "request_id": request_id}).encode(), request_id
    return json.dumps(JsonableError(message).to_dict()).encode(), request_id


def refusal_reason(refused: str | None, error: BaseException | None) -> str:
    """Why the request was refused, for its sender: a limit of ours, else the parser's words (the fuzz
    QA pass: every refusal said only "Bad Request")."""
    if refused is not None:
        return refused
    if error is not None and str(error) and type(error).__name__ != "HttpParserCallbackError":
        return f"not valid HTTP/1.1 ({str(error).rstrip('.')})"
    return "not valid HTTP/1.1"


class ParleyHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol (its "auto" choice), with two changes:

    - a request the parser refuses (an unknown method, a malformed request line, a control byte in
      a header, a URL of 64 KiB or more, a bad chunked body) is answered 400 in Zulip's envelope
      (Dropshot's Error for the directory API's paths), as application/json, with a request id,
      instead of uvicorn's text/plain;
    - the request head is bounded: httptools itself takes any number of headers of any size.

    Timeouts for a client that sends its head or body slowly are left to the proxy (README,
    "Running in production").
    """

    # What a request head (request line and headers) may take, counted as the parser hands it over.
    MAX_HEAD_BYTES = 64 * 1024
    MAX_HEADERS = 100
    HEAD_TOO_LARGE = "the request's line and headers are over 64 KiB"
    TOO_MANY_HEADERS = "more than 100 headers"

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        # Received while no head is complete (None while a body is): httptools keeps a header it
        # has not finished in its own buffer, unseen by the callbacks, so reads are counted too.
        self.unfinished_head_bytes: int | None = 0
        self.refused: str | None = None  # which limit of ours a request broke

    # How much of a head's first bytes is kept, to tell a refused request's path (bad_request).
    HEAD_START_BYTES = 256

    def data_received(self, data: bytes) -> None:
        if self.unfinished_head_bytes == 0:  # a new request's head begins here
            self.head_start = data[: self.HEAD_START_BYTES]
        self.head_finished = False
        self.body_bytes = 0
        super().data_received(data)
        if self.unfinished_head_bytes is None or self.head_finished or self.transport.is_closing():
            return
        self.unfinished_head_bytes += len(data) - self.body_bytes  # the end of a body may come first
        if self.unfinished_head_bytes > self.MAX_HEAD_BYTES:
            self.logger.warning("Invalid HTTP request received: request head too large.")
            self.refused = self.HEAD_TOO_LARGE
            self.send_400_response("Request head too large.")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.head_bytes = 0

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(self.headers) >= self.MAX_HEADERS:
            self.refused = self.TOO_MANY_HEADERS
            raise ValueError(self.refused)  # the parser makes it its own error: a 400
        self._count_head(len(name) + len(value))
        super().on_header(name, value)

    def _count_head(self, size: int) -> None:
        self.head_bytes += size
        if self.head_bytes > self.MAX_HEAD_BYTES:
            self.refused = self.HEAD_TOO_LARGE
            raise ValueError(self.refused)

    def on_headers_complete(self) -> None:
        self.head_finished, self.unfinished_head_bytes = True, None
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.unfinished_head_bytes = 0  # the next request's head may follow

    def send_400_response(self, msg: str) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and (cycle.response_started or not cycle.more_body):
            # The refused bytes follow a whole request (pipelining) or arrive while its response
            # is being sent: that response goes out, then the connection closes. The refused
            # bytes get no answer: one now would be taken for the earlier request's.
            cycle.keep_alive = False
            self.transport.pause_reading()
            return
        # uvicorn calls this in its handler of the parser's error, which sys.exc_info() gives.
        reason = refusal_reason(self.refused, sys.exc_info()[1])
        body, request_id = bad_request(getattr(self, "head_start", b""), reason)
        content = [STATUS_LINE[400]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: %d\r\n" % len(body),
                b"x-request-id: %s\r\n" % request_id.encode(),
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()


class ParleyServer(Server):
    def __init__(self, config, *, master_pid: int) -> None:
        super().__init__(config)
        self.master_pid = master_pid

    async def on_tick(self, counter: int) -> bool:
        # A worker whose master is gone (killed outright: the OOM killer, kill -9) stops, as gunicorn's
        # own workers do ("Parent changed"): it would serve on, unsupervised, with no task worker, and
        # hold the port against a new server (the clients QA pass). Checked once a second.
        if counter % 10 == 0 and not self.should_exit and os.getppid() != self.master_pid:
            logger.warning("The server's master process (pid %d) is gone: this worker stops", self.master_pid)
            self.should_exit = True
        return await super().on_tick(counter)

    async def shutdown(self, sockets=None) -> None:
        from apps.events.lifecycle import end_waiting_polls  # Django is set up by now

        # Waiting long-polls answer as soon as uvicorn's shutdown first yields, which is after it
        # has stopped listening and told every connection to close after its current response.
        end_waiting_polls()
        await super().shutdown(sockets=sockets)


class ParleyUvicornWorker(UvicornWorker):
    # config/asgi.py uses the lifespan events to start and stop each process's background tasks.
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "lifespan": "on", "http": ParleyHttpProtocol}

    async def _serve(self) -> None:
        # UvicornWorker._serve (uvicorn-worker, pinned), with our Server; tests/e2e/test_events_e2e.py
        # checks that stopping a server answers its waiting polls at once.
        self.config.app = self.wsgi
        server = ParleyServer(self.config, master_pid=self.ppid)
        # gunicorn stops its workers with QUIT when told to stop at once (INT or QUIT to the master
        # alone: `kill -INT`, a process manager). uvicorn-worker's handler of it only marks the
        # gunicorn worker not alive, which the server never looks at: it served on, its polls
        # waiting, until the master killed it 30 s later ("Worker was sent SIGKILL! Perhaps out of
        # memory?"). QUIT stops the server, as TERM does.
        asyncio.get_running_loop().add_signal_handler(signal.SIGQUIT, setattr, server, "should_exit", True)
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
