"""The direct backends (apps/push/apns.py, fcm.py, direct.py) against fake APNs (HTTP/2) and FCM (with
its OAuth token service) servers on 127.0.0.1: what they send and how they authenticate, tokens the
services refuse (removed), services that are down (tried again later) or that refuse the server
(failed, not retried), and `manage.py check` refusing settings that cannot work."""

import base64
import hashlib
import json
import runpy
import time
from dataclasses import dataclass, field
from datetime import timedelta
from io import StringIO
from typing import Any
from urllib.parse import parse_qsl

import jwt
import nacl.public
import nacl.secret
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.push.models import ActivePushNotification, Device, PushDeviceToken
from tests.api import api_for, assert_success
from tests.push.fakes import serve_http, serve_http2
from tests.tasks import run_ready_tasks
from tests.webhooks.fake_service import Received

APNS = "/users/me/apns_device_token"
FCM = "/users/me/android_gcm_reg_id"
APNS_TOKEN = "c0ffee" * 10
KEY_ID, TEAM_ID, PROJECT = "ABC123DEFG", "TEAM123456", "parley-test"


@dataclass
class FakeService:
    received: list[Received] = field(default_factory=list)
    # What it answers, by the token (APNs: the path's last part; FCM: message.token); else 200.
    answers: dict[str, tuple[int, Any]] = field(default_factory=dict)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    public_key: Any = None


def pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture
def apns(settings, tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "AuthKey.p8").write_bytes(pem(key))
    fake = FakeService(public_key=key.public_key())

    def respond(path, headers, body):
        fake.received.append(Received(path, headers, json.loads(body)))
        return fake.answers.get(path.rsplit("/", 1)[-1], (200, None))

    url, stop = serve_http2(respond)
    settings.PUSH_BACKEND = "apps.push.direct.DirectBackend"
    settings.APNS_TOKEN_KEY_FILE = str(tmp_path / "AuthKey.p8")
    settings.APNS_TOKEN_KEY_ID, settings.APNS_TEAM_ID, settings.APNS_URL = KEY_ID, TEAM_ID, url
    yield fake
    stop()


@pytest.fixture
def fcm(settings, tmp_path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    fake = FakeService(public_key=key.public_key())

    def respond(path, headers, body):
        if path == "/token":
            fake.token_requests.append(dict(parse_qsl(body.decode())))
            return 200, {"access_token": "ya29.fake-access", "expires_in": 3600, "token_type": "Bearer"}
        fake.received.append(Received(path, headers, json.loads(body)))
        return fake.answers.get(fake.received[-1].body["message"]["token"], (200, {"name": "projects/p/messages/1"}))

    url, stop = serve_http(respond)
    account = {
        "type": "service_account", "project_id": PROJECT, "private_key_id": "k1", "private_key": pem(key).decode(),
        "client_email": f"firebase-adminsdk@{PROJECT}.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": f"{url}/token",
    }  # fmt: skip
    (tmp_path / "service-account.json").write_text(json.dumps(account))
    settings.PUSH_BACKEND = "apps.push.direct.DirectBackend"
    settings.ANDROID_FCM_CREDENTIALS_PATH = str(tmp_path / "service-account.json")
    settings.FCM_URL = url
    yield fake
    stop()


def send_dm(sender, to):
    return assert_success(api_for(sender).post("/messages", {"type": "direct", "to": [to.id], "content": "ping"}))["id"]


def read(user, message_id):
    assert_success(api_for(user).post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "read"}))


def test_apns_gets_the_notification_with_a_provider_token_and_its_removal(member, admin, apns):
    assert_success(api_for(member).post(APNS, {"token": APNS_TOKEN.upper(), "appid": "org.example.chat"}))
    message_id = send_dm(admin, member)
    run_ready_tasks()
    [push] = apns.received
    assert push.path == f"/3/device/{APNS_TOKEN}"
    assert push.headers["apns-topic"] == "org.example.chat"
    assert (push.headers["apns-push-type"], push.headers["apns-priority"]) == ("alert", "10")
    assert int(push.headers["apns-expiration"]) > timezone.now().timestamp() + 23 * 3600
    scheme, _, provider_token = push.headers["authorization"].partition(" ")
    assert scheme == "bearer"
    assert jwt.get_unverified_header(provider_token) == {"alg": "ES256", "kid": KEY_ID, "typ": "JWT"}
    assert jwt.decode(provider_token, apns.public_key, algorithms=["ES256"])["iss"] == TEAM_ID
    assert push.body["aps"]["alert"]["title"] == admin.full_name
    assert push.body["aps"]["alert"]["body"] == "ping"
    assert push.body["zulip"]["message_ids"] == [message_id]
    assert push.body["zulip"]["user_id"] == member.id

    read(member, message_id)
    run_ready_tasks()
    removal = apns.received[1]
    assert removal.body["zulip"]["event"] == "remove"
    assert removal.body["zulip"]["zulip_message_ids"] == str(message_id)
    assert removal.headers["apns-priority"] == "5"
    # One connection, one provider token for both.
    assert removal.headers["authorization"] == push.headers["authorization"]


@pytest.mark.parametrize("answer", [(410, {"reason": "Unregistered"}), (400, {"reason": "BadDeviceToken"})])
def test_tokens_apns_refuses_are_removed(member, admin, apns, answer):
    assert_success(api_for(member).post(APNS, {"token": APNS_TOKEN, "appid": "org.example.chat"}))
    assert_success(api_for(member).post(APNS, {"token": "beef" * 16, "appid": "org.example.chat"}))
    apns.answers[APNS_TOKEN] = answer
    send_dm(admin, member)
    run_ready_tasks()
    assert len(apns.received) == 2
    assert list(PushDeviceToken.objects.values_list("token", flat=True)) == ["beef" * 16]


def test_apns_down_is_tried_again_later(member, admin, apns):
    assert_success(api_for(member).post(APNS, {"token": APNS_TOKEN, "appid": "org.example.chat"}))
    apns.answers[APNS_TOKEN] = (503, {"reason": "ServiceUnavailable"})
    message_id = send_dm(admin, member)
    run_ready_tasks()
    assert not ActivePushNotification.objects.exists()
    [later] = DBTaskResult.objects.filter(status="READY")
    assert later.args_kwargs["kwargs"] == {"attempt": 2}
    apns.answers.clear()
    DBTaskResult.objects.filter(id=later.id).update(run_after=timezone.now())
    run_ready_tasks()
    assert [r.body["zulip"]["message_ids"] for r in apns.received] == [[message_id], [message_id]]
    assert ActivePushNotification.objects.filter(user=member, message_id=message_id).exists()


def test_apns_refusing_the_server_fails_the_task_without_retrying(member, admin, apns):
    assert_success(api_for(member).post(APNS, {"token": APNS_TOKEN, "appid": "org.example.chat"}))
    apns.answers[APNS_TOKEN] = (403, {"reason": "InvalidProviderToken"})
    send_dm(admin, member)
    run_ready_tasks()
    assert not DBTaskResult.objects.filter(status="READY").exists()
    [failed] = DBTaskResult.objects.filter(status="FAILED")
    assert "InvalidProviderToken" in failed.traceback
    assert PushDeviceToken.objects.filter(user=member).exists()


def test_fcm_gets_a_data_message_with_an_oauth_token(member, admin, fcm):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    message_id = send_dm(admin, member)
    run_ready_tasks()
    [grant] = fcm.token_requests
    assert grant["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assertion = jwt.decode(
        grant["assertion"], fcm.public_key, algorithms=["RS256"], audience="https://oauth2.googleapis.com/token"
    )
    assert assertion["scope"] == "https://www.googleapis.com/auth/firebase.messaging"
    assert assertion["iss"] == f"firebase-adminsdk@{PROJECT}.iam.gserviceaccount.com"
    [push] = fcm.received
    assert push.path == f"/v1/projects/{PROJECT}/messages:send"
    assert push.headers["authorization"] == "Bearer ya29.fake-access"
    message = push.body["message"]
    assert (message["token"], message["android"]) == ("fcm-1", {"priority": "high"})
    assert message["data"]["event"] == "message"
    assert message["data"]["zulip_message_id"] == str(message_id)
    assert message["data"]["content_truncated"] == "False"
    assert all(isinstance(value, str) for value in message["data"].values())

    read(member, message_id)
    run_ready_tasks()
    assert fcm.received[1].body["message"]["android"] == {"priority": "normal"}
    assert fcm.received[1].body["message"]["data"]["event"] == "remove"
    assert len(fcm.token_requests) == 1  # the access token is kept until it expires


def fcm_error(status, code, message):
    details = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}]
    return status, {"error": {"code": status, "message": message, "status": code, "details": details}}


def test_tokens_fcm_refuses_are_removed(member, admin, fcm):
    for token in ("fcm-gone", "fcm-bad", "fcm-good"):
        assert_success(api_for(member).post(FCM, {"token": token}))
    fcm.answers["fcm-gone"] = fcm_error(404, "UNREGISTERED", "Requested entity was not found.")
    fcm.answers["fcm-bad"] = fcm_error(
        400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token"
    )
    send_dm(admin, member)
    run_ready_tasks()
    assert len(fcm.received) == 3
    assert list(PushDeviceToken.objects.values_list("token", flat=True)) == ["fcm-good"]


def test_fcm_down_is_tried_again_and_a_refusal_fails(member, admin, fcm):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    fcm.answers["fcm-1"] = fcm_error(503, "UNAVAILABLE", "The service is currently unavailable.")
    send_dm(admin, member)
    run_ready_tasks()
    [later] = DBTaskResult.objects.filter(status="READY")
    assert later.run_after > timezone.now() + timedelta(seconds=5)
    fcm.answers["fcm-1"] = fcm_error(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied")
    DBTaskResult.objects.filter(id=later.id).update(run_after=timezone.now())
    run_ready_tasks()
    [failed] = DBTaskResult.objects.filter(status="FAILED")
    assert "PERMISSION_DENIED" in failed.traceback
    assert PushDeviceToken.objects.filter(user=member).exists()


def test_both_services_and_the_test_notification(member, apns, fcm):
    assert_success(api_for(member).post(APNS, {"token": APNS_TOKEN, "appid": "org.example.chat"}))
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    out = StringIO()
    call_command("send_test_push", "--user", member.delivery_email, stdout=out)
    assert "reached 2 of 2" in out.getvalue()
    assert apns.received[0].body["aps"]["alert"]["title"] == "Test notification"
    assert fcm.received[0].body["message"]["data"]["event"] == "test"


def check_errors() -> str:
    with pytest.raises(SystemCheckError) as raised:
        call_command("check", stdout=StringIO())
    return str(raised.value)


def test_check_refuses_settings_that_cannot_work(settings, tmp_path):
    settings.PUSH_BACKEND = "apps.push.direct.DirectBackend"
    assert "neither APNS_TOKEN_KEY_FILE nor ANDROID_FCM_CREDENTIALS_PATH is set" in check_errors()
    settings.APNS_TOKEN_KEY_FILE = str(tmp_path / "missing.p8")
    errors = check_errors()
    assert "missing.p8 cannot be read" in errors
    assert "APNS_TEAM_ID is not set" in errors
    (tmp_path / "rsa.p8").write_bytes(pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)))
    settings.APNS_TOKEN_KEY_FILE = str(tmp_path / "rsa.p8")
    assert "is not an APNs key" in check_errors()
    settings.APNS_TOKEN_KEY_FILE = ""
    (tmp_path / "account.json").write_text(json.dumps({"type": "authorized_user"}))
    settings.ANDROID_FCM_CREDENTIALS_PATH = str(tmp_path / "account.json")
    assert "is not a service account key" in check_errors()
    settings.PUSH_BACKEND = "apps.push.backends.BouncerBackend"
    settings.ZULIP_ORG_ID = ""
    assert "ZULIP_ORG_ID is not set" in check_errors()


def test_check_accepts_working_settings(apns, fcm):
    call_command("check", stdout=StringIO())


# --- devices registered for end-to-end encrypted notifications, sealed for the operator's key -------

APP_KEY = base64.b64encode(bytes([0x31]) + bytes(range(32))).decode()


@pytest.fixture
def registration_key(settings):
    key = nacl.public.PrivateKey.generate()
    settings.PUSH_REGISTRATION_PRIVATE_KEYS = [base64.b64encode(bytes(key)).decode()]
    return key.public_key


def sealed_registration(public_key, token, token_kind="fcm", ios_app_id=None, timestamp=None, **changes) -> dict:  # noqa: S107
    """What the app sends (zulip-flutter's PushRegistration, sealed with libsodium's box.seal)."""
    plain = {"token_kind": token_kind, "token": token, "timestamp": int(timestamp or time.time())}
    if ios_app_id is not None:
        plain["ios_app_id"] = ios_app_id
    text = changes.pop("sealed_text", None) or json.dumps(plain)  # or what else is sealed
    sealed = nacl.public.SealedBox(public_key).encrypt(text.encode())
    token_id = base64.b64encode(hashlib.sha256(token.encode()).digest()[:8]).decode()
    return {
        "push_key_id": 7, "push_key": APP_KEY, "token_kind": token_kind, "token_id": token_id,
        "bouncer_public_key": base64.b64encode(bytes(public_key)).decode(),
        "encrypted_push_registration": base64.b64encode(sealed).decode(), **changes,
    }  # fmt: skip


def register_device(user, params) -> Device:
    device_id = assert_success(api_for(user).post("/register_client_device"))["device_id"]
    assert_success(api_for(user).post("/mobile_push/register", {"device_id": device_id, **params}))
    run_ready_tasks()
    return Device.objects.get(id=device_id)


def decrypt(encrypted_data: str) -> dict:
    box = nacl.secret.SecretBox(base64.b64decode(APP_KEY)[1:])
    return json.loads(box.decrypt(base64.b64decode(encrypted_data)))


def test_an_own_app_device_gets_encrypted_notifications_from_fcm(member, admin, fcm, registration_key):
    device = register_device(member, sealed_registration(registration_key, "fcm-e2ee-token"))
    assert device.push_token_id is not None
    assert device.push_registration_error_code is None
    message_id = send_dm(admin, member)
    run_ready_tasks()
    [push] = fcm.received
    message = push.body["message"]
    assert (message["token"], message["android"]) == ("fcm-e2ee-token", {"priority": "high"})
    assert set(message["data"]) == {"push_key_id", "encrypted_data"}
    assert message["data"]["push_key_id"] == "7"
    payload = decrypt(message["data"]["encrypted_data"])
    assert (payload["type"], payload["message_id"], payload["content"]) == ("message", message_id, "ping")

    fcm.answers["fcm-e2ee-token"] = fcm_error(404, "UNREGISTERED", "Requested entity was not found.")
    send_dm(admin, member)
    run_ready_tasks()
    device.refresh_from_db()
    assert device.push_token_id is None


def test_an_own_app_device_gets_encrypted_notifications_from_apns(member, admin, apns, registration_key):
    register_device(member, sealed_registration(registration_key, APNS_TOKEN, "apns", ios_app_id="org.example.chat"))
    send_dm(admin, member)
    run_ready_tasks()
    [push] = apns.received
    assert push.path == f"/3/device/{APNS_TOKEN}"
    assert (push.headers["apns-topic"], push.headers["apns-push-type"]) == ("org.example.chat", "alert")
    assert push.body["aps"] == {"mutable-content": 1, "alert": {"title": "New notification"}, "sound": "default"}
    assert push.body["push_key_id"] == 7
    assert decrypt(push.body["encrypted_data"])["type"] == "message"


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"key": "other"}, "INVALID_BOUNCER_PUBLIC_KEY"),
        ({"token_id": base64.b64encode(bytes(8)).decode()}, "INVALID_ENCRYPTED_PUSH_REGISTRATION"),
        (
            {"encrypted_push_registration": base64.b64encode(b"not sealed").decode()},
            "INVALID_ENCRYPTED_PUSH_REGISTRATION",
        ),
        ({"sealed_text": "[" * 1500 + "]" * 1500}, "INVALID_ENCRYPTED_PUSH_REGISTRATION"),  # too deep to read
        ({"timestamp": time.time() - 2 * 86400}, "REQUEST_EXPIRED"),
        ({"token_kind": "apns"}, "INVALID_ENCRYPTED_PUSH_REGISTRATION"),  # an APNs token without its app
    ],
)
def test_a_registration_that_does_not_open_is_refused_to_the_app(member, fcm, registration_key, changes, code):
    public_key = nacl.public.PrivateKey.generate().public_key if changes.pop("key", None) else registration_key
    timestamp = changes.pop("timestamp", None)
    token_kind = changes.pop("token_kind", "fcm")
    device = register_device(
        member, sealed_registration(public_key, "c0ffee", token_kind, timestamp=timestamp, **changes)
    )
    assert (device.push_token_id, device.push_registration_error_code) == (None, code)


@pytest.mark.parametrize(
    ("backend", "enabled"),
    [("apps.push.direct.DirectBackend", True), ("apps.push.apns.APNsBackend", True),
     ("apps.push.backends.LogBackend", False)],
)  # fmt: skip
def test_clients_are_told_notifications_work_with_a_direct_backend(settings, monkeypatch, backend, enabled):
    monkeypatch.setenv("PUSH_BACKEND", backend)
    computed = runpy.run_path(str(settings.BASE_DIR / "config" / "settings" / "base.py"))
    assert computed["PUSH_NOTIFICATIONS_ENABLED"] is enabled
