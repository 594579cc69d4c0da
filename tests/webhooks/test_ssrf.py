"""The SSRF guard of outgoing webhooks (apps/webhooks/outgoing.py): which addresses are refused, that
a refusal reaches nothing and tells the conversation, and that the connection goes to the address
that was checked."""

import base64
import ipaddress
import logging
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest

from apps.messages.models import Message
from apps.webhooks.models import FailedDelivery
from apps.webhooks.outgoing import Failed, Refused, Unreachable, post_to_service, refusal
from tests.api import api_for, assert_success
from tests.tasks import run_ready_tasks
from tests.webhooks.fake_service import start_fake_service


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "127.0.0.2", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1", "169.254.169.254",
        "169.254.1.1", "fe80::1", "fc00::1", "fd00:ec2::254", "100.100.100.200", "224.0.0.1", "ff02::1", "0.0.0.0",  # noqa: S104
        "::", "240.0.0.1", "255.255.255.255", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "192.0.2.1",
        # 6to4 addresses of loopback, private and metadata addresses; site-local (the hostile QA pass)
        "2002:7f00:1::", "2002:c0a8:101::", "2002:a9fe:a9fe::", "fec0::1",
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused(settings, address):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = []
    assert refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "2002:808:808::"])
def test_public_addresses_are_allowed(settings, address):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = []
    assert refusal(ipaddress.ip_address(address)) is None


def test_allowed_networks_let_exactly_their_addresses_through(settings):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32", "10.1.0.0/16"]
    assert refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert refusal(ipaddress.ip_address("::ffff:127.0.0.1")) is None
    assert refusal(ipaddress.ip_address("10.1.200.3")) is None
    assert refusal(ipaddress.ip_address("127.0.0.2")) == "a loopback address"
    assert refusal(ipaddress.ip_address("10.2.0.1")) == "a private address"
    assert refusal(ipaddress.ip_address("169.254.169.254")) == "a cloud metadata address"
    assert refusal(ipaddress.ip_address("2002:a01:203::")) is None  # 10.1.2.3's 6to4 address
    assert refusal(ipaddress.ip_address("2002:a02:1::")) == "a 6to4 address of 10.2.0.1, a private address"


@pytest.fixture
def listener_on_127_0_0_2():
    fake = start_fake_service("127.0.0.2")
    yield fake
    fake.stop()


def test_127_0_0_2_is_refused_when_only_127_0_0_1_is_allowed(
    settings, make_hook_bot, member, listener_on_127_0_0_2, caplog
):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    bot = make_hook_bot(listener_on_127_0_0_2.url)
    response = api_for(member).post("/messages", {"type": "direct", "to": [bot.id], "content": "hi"})
    message_id = assert_success(response)["id"]
    with caplog.at_level(logging.INFO, logger="apps.webhooks"):
        assert run_ready_tasks() == 1  # not retried
    assert listener_on_127_0_0_2.received == []
    answer, notice = Message.objects.filter(id__gt=message_id).order_by("id")
    assert (answer.sender_id, answer.content) == (bot.id, "Failure! Bot is unavailable")
    # The bot's owner is told why, as Zulip tells them of Smokescreen's refusal.
    assert notice.sender_id == bot.id
    assert notice.content.endswith("The URL configured for the webhook is for a private or disallowed network.")
    failure = FailedDelivery.objects.get()
    assert failure.outcome == "refused"
    assert "127.0.0.2 is a loopback address" in failure.detail
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING and getattr(r, "data", None)]
    assert warning.data["outcome"] == "refused"
    assert "127.0.0.2 is a loopback address" in warning.data["detail"]


def test_a_hostname_resolving_to_a_refused_address_is_refused(settings, service, make_hook_bot, member):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = []
    bot = make_hook_bot(f"http://localhost:{service.port}/")
    response = api_for(member).post("/messages", {"type": "direct", "to": [bot.id], "content": "hi"})
    message_id = assert_success(response)["id"]
    run_ready_tasks()
    assert service.received == []
    assert Message.objects.filter(id__gt=message_id).first().content == "Failure! Bot is unavailable"
    assert "localhost is not an allowed address" in FailedDelivery.objects.get().detail


def test_the_connection_goes_to_the_address_that_was_checked(settings, service, monkeypatch):
    """The name is resolved once: a second answer (DNS rebinding, to a refused address) is never
    asked for, and the request reaches the checked address with the URL's host in Host."""
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1", "127.0.0.2"])
    calls = []

    this_thread = threading.get_ident()

    def rebinding(host, port, *args, **kwargs):
        if threading.get_ident() == this_thread:  # not another thread's connection (to Redis, say)
            calls.append(host)
        if host == "rebind.example":
            return real(next(answers), port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    answer = post_to_service(f"http://rebind.example:{service.port}/path?x=1", b"{}")
    assert (answer.status, answer.address) == (200, "127.0.0.1")
    assert calls == ["rebind.example", "127.0.0.1"]  # the name once; then the address itself
    (received,) = service.received
    assert received.headers["Host"] == f"rebind.example:{service.port}"
    assert received.path == "/path?x=1"


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "file:///etc/passwd", "http://[::1", "http:///nohost"])
def test_urls_that_are_not_http_are_refused(settings, url):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = ["0.0.0.0/0", "::/0"]
    with pytest.raises(Refused):
        post_to_service(url, b"{}")


def test_the_answer_body_is_capped(service):
    service.body = b"x" * 10_000
    answer = post_to_service(service.url, b"{}", max_bytes=100)
    assert (answer.too_large, len(answer.body)) == (True, 100)
    answer = post_to_service(service.url, b"{}", max_bytes=10_000)
    assert (answer.too_large, len(answer.body)) == (False, 10_000)


@pytest.mark.parametrize(("head", "send_length"), [(False, True), (True, True), (False, False)])
def test_an_answer_sent_slowly_is_cut_at_the_timeout(service, head, send_length):
    """The timeout is the whole exchange's, not each read's (the bots QA pass: an answer sent a
    byte a second held the task worker for as long as the service liked, 39 s for 40 bytes)."""
    service.body = {"content": "a slow answer " * 3}
    service.trickle, service.trickle_head, service.send_length = 0.05, head, send_length
    started = time.monotonic()
    with pytest.raises(Unreachable, match="took longer than OUTGOING_WEBHOOK_TIMEOUT_SECONDS"):
        post_to_service(service.url, b"{}", timeout=0.5)
    assert time.monotonic() - started < 1.5
    service.trickle = 0.0
    assert post_to_service(service.url, b"{}", timeout=0.5).status == 200


def test_credentials_in_the_url_are_sent_as_basic_auth(service):
    """As requests (Zulip's client) sends them; nothing without them."""
    post_to_service(service.url.replace("http://", "http://hook%40user:s3cr%3At@"), b"{}")
    expected = "Basic " + base64.b64encode(b"hook@user:s3cr:t").decode()
    assert service.received[-1].headers["Authorization"] == expected
    post_to_service(service.url, b"{}")
    assert "Authorization" not in service.received[-1].headers


@pytest.fixture
def tls_service(tmp_path):
    """An https service on 127.0.0.1 with a self-signed certificate for `localhost` (openssl)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    fake = start_fake_service()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    fake.server.socket = context.wrap_socket(fake.server.socket, server_side=True)
    yield fake, cert
    fake.stop()


def test_https_is_pinned_to_the_checked_address_and_checks_the_certificate_for_the_name(
    settings, tls_service, monkeypatch
):
    settings.OUTGOING_WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    fake, cert = tls_service
    fake.body = {"content": "secure"}
    with pytest.raises(Failed, match="CERTIFICATE_VERIFY_FAILED"):  # not a certificate the server trusts
        post_to_service(f"https://localhost:{fake.port}/", b"{}")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    answer = post_to_service(f"https://localhost:{fake.port}/", b"{}")
    assert (answer.status, answer.address) == (200, "127.0.0.1")
    assert fake.received[-1].headers["Host"] == f"localhost:{fake.port}"
    with pytest.raises(Failed, match=r"CERTIFICATE_VERIFY_FAILED|match"):  # the certificate is not 127.0.0.1's
        post_to_service(f"https://127.0.0.1:{fake.port}/", b"{}")
