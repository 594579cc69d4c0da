"""Requests to an ASGI application in the test's own process (no server)."""

import asyncio
import json

from asgiref.testing import ApplicationCommunicator


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=20))


async def request(
    app, path: str, host: bytes = b"testserver", query: bytes = b"", headers: tuple = (), scheme: str = "http"
) -> tuple[int, dict, dict | bytes]:
    """GET `path` from the ASGI application `app`: the status, the headers (lower-case names) and the
    body (parsed when it is JSON)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query,
        "headers": [(b"host", host), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await communicator.receive_output(timeout=10)
    body = b""
    while True:
        message = await communicator.receive_output(timeout=10)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait(timeout=10)
    headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
    return (
        start["status"],
        headers,
        json.loads(body) if body and headers.get("content-type") == "application/json" else body,
    )
