"""What the HTTP parser refuses, over raw sockets to a real server: a 400 in Zulip's envelope
(config/workers.py), or the connection closed where no answer can be given; the server serves on.

Also input that parses as HTTP but no server can use (a NUL byte in the credentials or in a path),
on the routes a real server serves outside Django (the long-poll) and inside it.
"""

import base64
import json
import socket
import uuid

import pytest
import requests

pytestmark = pytest.mark.e2e

HOST = b"Host: 127.0.0.1\r\n"
BAD_REQUEST = {"result": "error", "msg": "Bad Request", "code": "BAD_REQUEST"}


def exchange(server, data: bytes) -> bytes:
    """Send `data` on a new connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def responses(received: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """The responses in `received`, each (status, headers, body); bodies of Content-Length or
    chunked."""
    found = []
    while received:
        head, _, rest = received.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in header_lines)}
        if "content-length" in headers:
            length = int(headers["content-length"])
            body, received = rest[:length], rest[length:]
        else:
            body = b""
            while True:
                size_line, _, rest = rest.partition(b"\r\n")
                size = int(size_line, 16)
                body, rest = body + rest[:size], rest[size + 2 :]
                if size == 0:
                    break
            received = rest
        found.append((int(status_line.split()[1]), headers, body))
    return found


def assert_json_400(received: bytes, expected: dict = BAD_REQUEST, *, why: str | None = None) -> None:
    """The parser's 400 (`expected` without the reason its message gives after "Bad Request: ")."""
    [(status, headers, body)] = responses(received)
    assert status == 400, received
    assert headers["content-type"] == "application/json", received
    assert headers["connection"] == "close", received
    assert str(uuid.UUID(headers["x-request-id"], version=4)) == headers["x-request-id"], received
    answer = json.loads(body)
    field = "message" if "message" in expected else "msg"
    assert answer[field].startswith("Bad Request: "), answer
    if why is not None:
        assert answer[field] == f"Bad Request: {why}", answer
    answer[field] = "Bad Request"
    assert answer == expected | ({"request_id": headers["x-request-id"]} if "message" in expected else {})


# Why each is refused, as the answer says (None: the parser's own words, whatever they are).
TOO_LARGE = "the request's line and headers are over 64 KiB"
WHY = {
    "unknown method": "not valid HTTP/1.1 (Invalid method encountered)",
    "70 KiB URL": TOO_LARGE,
    "70 KiB header": TOO_LARGE,
    "80 KiB unfinished head": TOO_LARGE,
    "101 headers": "more than 100 headers",
}

REFUSED = {
    "unknown method": b"BREW /api/v1/server_settings HTTP/1.1\r\n" + HOST + b"\r\n",
    "malformed request line": b"GET\r\n" + HOST + b"\r\n",
    "control byte in a header": b"GET /api/v1/server_settings HTTP/1.1\r\n" + HOST + b"X-Note: a\x01b\r\n\r\n",
    "NUL byte in a header": b"GET /api/v1/server_settings HTTP/1.1\r\n" + HOST + b"User-Agent: a\x00b\r\n\r\n",
    "70 KiB URL": b"GET /api/v1/server_settings?q=" + b"a" * 70 * 1024 + b" HTTP/1.1\r\n" + HOST + b"\r\n",
    "70 KiB header": b"GET /api/v1/server_settings HTTP/1.1\r\n" + HOST + b"X-Big: " + b"a" * 70 * 1024 + b"\r\n\r\n",
    # Not complete: no request line and headers end; the server stops reading past its limit.
    "80 KiB unfinished head": b"GET /api/v1/server_settings HTTP/1.1\r\n" + HOST + b"X-Big: " + b"a" * 80 * 1024,
    "101 headers": b"GET /api/v1/server_settings HTTP/1.1\r\n"
    + HOST
    + b"".join(b"X-Header-%d: v\r\n" % i for i in range(100))
    + b"\r\n",
    "bad chunked body": b"POST /api/v1/fetch_api_key HTTP/1.1\r\n"
    + HOST
    + b"Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    "bad Content-Length": b"POST /api/v1/fetch_api_key HTTP/1.1\r\n" + HOST + b"Content-Length: ten\r\n\r\n",
    "not HTTP at all (a TLS hello)": b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",
}


def test_what_the_parser_refuses_is_a_json_400_and_the_server_serves_on(parley_server, people):
    for name, data in REFUSED.items():
        try:
            assert_json_400(exchange(parley_server, data), why=WHY.get(name))
        except AssertionError as error:
            raise AssertionError(name) from error
    response = requests.get(f"{parley_server.url}/api/v1/server_settings", timeout=10)
    assert response.status_code == 200
    assert "Traceback" not in parley_server.log()


def test_what_the_parser_refuses_on_the_directory_api_is_its_error(parley_server):
    """Dropshot's Error (the directory QA pass: it was Zulip's envelope, without a request id)."""
    headers = b"".join(b"X-Header-%d: v\r\n" % i for i in range(101))
    for path in (b"/users", b"/users/0b0e0000-0000-4000-8000-000000000000?x=1", b"/version"):
        received = exchange(parley_server, b"GET " + path + b" HTTP/1.1\r\n" + HOST + headers + b"\r\n")
        assert_json_400(received, {"message": "Bad Request"})
    # Refused before the parser finished the path (the directory QA pass: Zulip's envelope).
    for request_line in (b"BREW /users HTTP/1.1", b"GET /users?page_token=" + b"a" * 70 * 1024 + b" HTTP/1.1"):
        assert_json_400(exchange(parley_server, request_line + b"\r\n" + HOST + b"\r\n"), {"message": "Bad Request"})
    # The messaging API's paths keep Zulip's envelope.
    assert_json_400(exchange(parley_server, b"BREW /api/v1/users HTTP/1.1\r\n" + HOST + b"\r\n"))


def test_refused_bytes_after_a_request_close_the_connection_after_its_answer(parley_server):
    """Pipelined after a whole request, refused bytes cannot be answered: an answer now would be
    taken for the earlier request's. That one is answered, then the connection closes."""
    received = exchange(parley_server, b"GET /health/live HTTP/1.1\r\n" + HOST + b"\r\nBREW / HTTP/1.1\r\n\r\n")
    [(status, _, body)] = responses(received)
    assert (status, json.loads(body)["status"]) == (200, "ok")


def test_a_request_head_just_within_the_limits_is_served(parley_server):
    headers = b"".join(b"X-Header-%d: %s\r\n" % (i, b"v" * 500) for i in range(98))
    received = exchange(parley_server, b"GET /health/live HTTP/1.1\r\n" + HOST + headers + b"Connection: close\r\n\r\n")
    [(status, _, _)] = responses(received)
    assert status == 200


def basic(credentials: bytes) -> str:
    return "Basic " + base64.b64encode(credentials).decode()


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/events?queue_id=x&last_event_id=-1", 401),  # the thin long-poll route
        ("/api/v1/users/me", 401),
        ("/users", 401),  # the directory API
    ],
)
def test_a_nul_byte_in_the_credentials_is_a_401_counted_per_address(live_server_factory, people, path, status):
    server = live_server_factory(RATE_LIMIT_API_BY_IP="3")
    _, owner, _ = people
    authorization = basic(owner.delivery_email.replace("@", "\x00@").encode() + b":" + owner.api_key.encode())
    answers = [
        requests.get(f"{server.url}{path}", headers={"Authorization": authorization}, timeout=10) for _ in range(4)
    ]
    assert [r.status_code for r in answers] == [status] * 3 + [429]
    assert {r.headers["Content-Type"] for r in answers} == {"application/json"}
    assert "Traceback" not in server.log()


def test_a_nul_byte_in_a_path_is_a_client_error(parley_server, people):
    _, owner, _ = people
    response = requests.get(
        f"{parley_server.url}/api/v1/users/%00", auth=(owner.delivery_email, owner.api_key), timeout=10
    )
    assert response.status_code == 400
    assert response.json()["msg"] == "No such user"
    assert "Traceback" not in parley_server.log()
