"""Posting to the service of an outgoing-webhook bot, whose URL a member of the organization chose,
so that nobody can use the server to reach what the operator did not allow (SSRF).

Zulip sends these requests through Smokescreen, a proxy that refuses every non-public address; Parley
enforces the same rule in its own process:
- only http and https URLs;
- the host is resolved once, here, and each address checked: loopback, private, shared (100.64/10),
  link-local (169.254/16, where the clouds' metadata services are), multicast, reserved and
  unspecified addresses are refused, IPv4-mapped IPv6 addresses as their IPv4 address, unless
  they are in OUTGOING_WEBHOOK_ALLOWED_NETWORKS;
- the connection is made to the address that was checked (urllib3 connects to that IP, with the
  URL's host in the Host header and, for https, as the TLS server name, certificate checked for
  it): a name that resolves to another address a moment later (DNS rebinding) changes nothing;
- redirects are not followed (a 3xx is an answer like any other), no transport retries;
- the whole exchange has OUTGOING_WEBHOOK_TIMEOUT_SECONDS (urllib3's timeouts bound each socket
  operation: a service sending its answer a byte a second would hold the task worker for as long
  as it liked, so a watchdog cuts the connection at the deadline); the answer's body is read up
  to OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES and no further.

No library we found does this and is well kept (`advocate`, for requests, was last released in
July 2020), and urllib3 (already used by requests) gives what is needed: a connection pool to one IP with
its own `server_hostname`.
"""

import contextlib
import ipaddress
import socket
import threading
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urlsplit

import urllib3
from django.conf import settings

from apps.core.version import PARLEY_VERSION

# Zulip's product token (a service may tell Zulip's calls by it), with the version this server gives
# as its zulip_version, then Parley's own.
USER_AGENT = f"ZulipOutgoingWebhook/{PARLEY_VERSION} Parley/{PARLEY_VERSION}"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services (all also in the refused ranges: named here for the log and the tests).
METADATA_ADDRESSES = {
    ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, DigitalOcean, OpenStack
    ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
}


class Refused(Exception):
    """The URL, or every address its host has, is not one the server may post to."""


class Unreachable(Exception):
    """No answer: the name did not resolve, the connection failed or was cut, or it timed out."""

    def __init__(self, detail: str, *, timed_out: bool = False) -> None:
        super().__init__(detail)
        self.timed_out = timed_out


class Failed(Exception):
    """The exchange failed in a way another try would not fix (a TLS certificate that does not fit)."""


@dataclass
class Answer:
    status: int
    body: bytes
    # The body was longer than the cap (`body` holds the start of it).
    too_large: bool
    address: str


@lru_cache(maxsize=8)
def _allowed(networks: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(network) for network in networks)


def refusal(address: IPAddress) -> str | None:
    """Why the server may not connect to `address`, or None when it may."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in _allowed(tuple(settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS))):
        return None
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    # A 6to4 address (2002::/16) reaches the IPv4 address it embeds, through a relay (the hostile
    # QA pass, round 4: 2002:7f00:1:: is 127.0.0.1).
    if isinstance(address, ipaddress.IPv6Address) and address.sixtofour is not None:
        embedded = refusal(address.sixtofour)
        return f"a 6to4 address of {address.sixtofour}, {embedded}" if embedded else None
    for kind in ("loopback", "link_local", "site_local", "multicast", "private", "reserved", "unspecified"):
        if getattr(address, f"is_{kind}", False):
            return f"a {kind.replace('_', '-')} address"
    if not address.is_global:
        return "not a public address"
    return None


def pick_address(host: str, port: int) -> IPAddress:
    """The first address of `host` (a name or an IP literal) that the server may connect to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Unreachable(f"cannot resolve {host}: {exc}") from None
    reasons = []
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        reason = refusal(address)
        if reason is None:
            return address
        reasons.append(f"{address} is {reason}")
    raise Refused(f"{host} is not an allowed address ({'; '.join(reasons)})")


JSON, FORM = "application/json", "application/x-www-form-urlencoded"


def post_to_service(
    url: str, body: bytes, *, content_type: str = JSON, timeout: float | None = None, max_bytes: int | None = None
) -> Answer:
    """POST `body` (JSON, or a form) to `url` under the rules above. Raises Refused, Unreachable or
    Failed."""
    timeout = settings.OUTGOING_WEBHOOK_TIMEOUT_SECONDS if timeout is None else timeout
    max_bytes = settings.OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES if max_bytes is None else max_bytes
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise Refused("an invalid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused("not an http(s) URL")
    host = parts.hostname
    address = pick_address(host, port)
    host_header = f"[{host}]" if ":" in host else host
    if parts.port:
        host_header += f":{parts.port}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    pool_options = {"timeout": urllib3.Timeout(total=timeout), "retries": False, "maxsize": 1}
    if parts.scheme == "https":
        pool = urllib3.HTTPSConnectionPool(
            str(address), port, server_hostname=host, assert_hostname=host, **pool_options
        )  # fmt: skip
    else:
        pool = urllib3.HTTPConnectionPool(str(address), port, **pool_options)
    headers = {"Host": host_header, "User-Agent": USER_AGENT, "Content-Type": content_type}
    if parts.username is not None:  # as requests sends a URL's credentials
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = urllib3.util.make_headers(basic_auth=credentials)["authorization"]
    watchdog = Watchdog(timeout)
    pool.ConnectionCls = watchdog.connection_class(pool.ConnectionCls)
    try:
        with watchdog:
            response = pool.urlopen(
                "POST", path, body=body, headers=headers, redirect=False, retries=False, preload_content=False,
                assert_same_host=False,
            )  # fmt: skip
            try:
                data = _read_capped(response, max_bytes)
            finally:
                response.release_conn()
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        if watchdog.expired:
            raise Unreachable(TOO_LONG, timed_out=True) from None
        if isinstance(exc, urllib3.exceptions.SSLError):
            raise Failed(f"TLS: {exc}") from None
        # urllib3's NewConnectionError (refused, unreachable) is a kind of ConnectTimeoutError; as
        # requests does for Zulip, it is a connection error, not a timeout.
        timed_out = isinstance(exc, (urllib3.exceptions.TimeoutError, TimeoutError)) and not isinstance(
            exc, urllib3.exceptions.NewConnectionError
        )
        raise Unreachable(f"{type(exc).__name__}: {exc}", timed_out=timed_out) from None
    finally:
        pool.close()
    if watchdog.expired:  # cut while reading an answer that ends with its connection
        raise Unreachable(TOO_LONG, timed_out=True)
    return Answer(response.status, data[:max_bytes], len(data) > max_bytes, str(address))


TOO_LONG = "the exchange took longer than OUTGOING_WEBHOOK_TIMEOUT_SECONDS"


class Watchdog:
    """Shuts the exchange's connection down when `seconds` have passed since it was entered, which
    ends any read or write waiting on it."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> "Watchdog":
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()

    def connection_class(self, base: type) -> type:
        """`base` (a urllib3 connection class) whose connections this watchdog watches."""
        watchdog = self

        class Watched(base):
            def connect(self) -> None:
                super().connect()
                watchdog._watch(self.sock)

        return Watched

    def _watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self.expired:
                self._shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._socket is not None:
                self._shut(self._socket)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _read_capped(response: urllib3.BaseHTTPResponse, max_bytes: int) -> bytes:
    """At most max_bytes + 1 bytes of the body (one more says it was longer)."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = response.read(min(65536, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
