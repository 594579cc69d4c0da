"""End-to-end encrypted notifications through the push bouncer (apps/push/e2ee.py, the bouncer
backend) against a fake bouncer on 127.0.0.1: a device's registration handed to the bouncer (pending
until it has it), notifications encrypted with the device's key in the shape the app decrypts, the
bouncer's stale token ids, an organization it does not know yet, and a registration it refuses."""

import base64
import json
import uuid

import nacl.secret
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.push.models import Device
from apps.push.tasks import REGISTRATION_MAX_ATTEMPTS
from tests.api import api_for, assert_error, assert_success
from tests.push.test_devices import KEY, TOKEN_ID, new_device, registration
from tests.tasks import run_ready_tasks

NOTIFY, REGISTER = "/api/v1/remotes/push/e2ee/notify", "/api/v1/remotes/push/e2ee/register"
SENT = {"result": "success", "android_successfully_sent_count": 1, "apple_successfully_sent_count": 0,
        "delete_token_ids": []}  # fmt: skip


def registered_device(user, bouncer, **changes) -> int:
    device_id = new_device(user)
    assert_success(api_for(user).post("/mobile_push/register", registration(device_id, **changes)))
    run_ready_tasks()
    bouncer.received.clear()
    return device_id


def decrypt(encrypted_data: str) -> dict:
    box = nacl.secret.SecretBox(base64.b64decode(KEY)[1:])
    return json.loads(box.decrypt(base64.b64decode(encrypted_data)))


def send_dm(sender, to, content="ping"):
    return assert_success(api_for(sender).post("/messages", {"type": "direct", "to": [to.id], "content": content}))[
        "id"
    ]


def test_a_registration_is_pending_until_the_bouncer_has_it(member, bouncer, capture_events):
    device_id = new_device(member)
    with capture_events(member) as events:
        assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
    device = Device.objects.get(id=device_id)
    assert (device.push_token_id, device.pending_push_token_id) == (None, 123456789)
    [event] = events[member.id]
    assert event["pending_push_token_id"] == TOKEN_ID
    assert event["push_key_id"] == 7
    assert "push_token_id" not in event

    with capture_events(member) as events:
        run_ready_tasks()
    [register] = bouncer.received
    assert register.path == REGISTER
    assert register.credentials == ("6cde5f7a-1f7e-4978-9716-49f69ebfc9fe", "org-key")
    assert uuid.UUID(register.body.pop("realm_uuid")).version == 4
    assert register.body == {"token_id": TOKEN_ID, "bouncer_public_key": "bouncer-key",
                             "encrypted_push_registration": "ciphertext"}  # fmt: skip
    device.refresh_from_db()
    assert (device.push_token_id, device.pending_push_token_id) == (123456789, None)
    assert events[member.id] == [
        {"type": "device", "op": "update", "device_id": device_id, "push_token_id": TOKEN_ID,
         "pending_push_token_id": None},
    ]  # fmt: skip


def test_a_message_reaches_the_device_encrypted_for_it(member, admin, bouncer):
    registered_device(member, bouncer)
    bouncer.routes[NOTIFY] = [(200, SENT)]
    message_id = send_dm(admin, member, content="Are you **there**?")
    run_ready_tasks()
    [notify] = bouncer.received
    assert notify.path == NOTIFY
    [request] = notify.body["push_requests"]
    assert (request["token_id"], request["fcm_priority"]) == (TOKEN_ID, "high")
    assert request["payload"]["push_key_id"] == 7
    payload = decrypt(request["payload"]["encrypted_data"])
    assert payload["type"] == "message"
    assert payload["message_id"] == message_id
    assert payload["content"] == "Are you there?"
    assert payload["recipient_user_ids"] == sorted([member.id, admin.id])
    assert (payload["user_id"], payload["sender_id"]) == (member.id, admin.id)
    # Nothing readable reaches the bouncer.
    assert "there" not in json.dumps(notify.body)

    assert_success(api_for(member).post("/mark_all_as_read"))
    run_ready_tasks()
    [request] = bouncer.received[1].body["push_requests"]
    assert request["fcm_priority"] == "normal"
    assert decrypt(request["payload"]["encrypted_data"])["message_ids"] == [message_id]


def test_an_apns_device_gets_an_alert_its_app_decrypts(member, admin, bouncer):
    registered_device(member, bouncer, token_kind="apns")
    bouncer.routes[NOTIFY] = [(200, SENT)]
    send_dm(admin, member)
    run_ready_tasks()
    [request] = bouncer.received[0].body["push_requests"]
    assert request["http_headers"] == {"apns_priority": 10, "apns_push_type": "alert"}
    assert request["payload"]["aps"]["mutable-content"] == 1
    assert decrypt(request["payload"]["encrypted_data"])["type"] == "message"


def test_a_token_the_bouncer_deleted_unregisters_the_device(member, admin, bouncer, capture_events):
    device_id = registered_device(member, bouncer)
    bouncer.routes[NOTIFY] = [(200, {**SENT, "android_successfully_sent_count": 0, "delete_token_ids": [TOKEN_ID]})]
    send_dm(admin, member)
    with capture_events(member) as events:
        run_ready_tasks()
    assert Device.objects.get(id=device_id).push_token_id is None
    assert {"type": "device", "op": "update", "device_id": device_id, "push_token_id": None} in events[member.id]
    # Nothing more goes to it.
    bouncer.received.clear()
    send_dm(admin, member)
    run_ready_tasks()
    assert bouncer.received == []


def test_an_organization_the_bouncer_does_not_know_is_told_first(member, admin, bouncer):
    registered_device(member, bouncer)
    missing = (400, {"result": "error", "msg": "Organization not registered", "code": "MISSING_REMOTE_REALM"})
    bouncer.routes[NOTIFY] = [missing, (200, SENT)]
    send_dm(admin, member)
    run_ready_tasks()
    assert [r.path for r in bouncer.received] == [NOTIFY, "/api/v1/remotes/server/analytics", NOTIFY]
    [realm] = [r for r in json.loads(bouncer.received[1].body["realms"]) if r["id"] == member.realm_id]
    assert realm["uuid"] == bouncer.received[0].body["realm_uuid"] == bouncer.received[2].body["realm_uuid"]
    assert realm["url"] == member.realm.url
    assert realm["uuid_owner_secret"].startswith("zuliprealm_")
    assert json.loads(bouncer.received[1].body["realm_counts"]) == []


def test_a_registration_the_bouncer_refuses_is_marked_for_the_app(member, bouncer, capture_events):
    device_id = new_device(member)
    bouncer.routes[REGISTER] = [(400, {"result": "error", "msg": "Invalid bouncer_public_key",
                                       "code": "INVALID_BOUNCER_PUBLIC_KEY"})]  # fmt: skip
    assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
    with capture_events(member) as events:
        run_ready_tasks()
    device = Device.objects.get(id=device_id)
    assert (device.push_token_id, device.push_registration_error_code) == (None, "INVALID_BOUNCER_PUBLIC_KEY")
    assert events[member.id] == [
        {"type": "device", "op": "update", "device_id": device_id,
         "push_registration_error_code": "INVALID_BOUNCER_PUBLIC_KEY"},
    ]  # fmt: skip
    # The app may register again.
    bouncer.routes.clear()
    assert_success(api_for(member).post("/mobile_push/register", registration(device_id, push_key_id=8)))
    run_ready_tasks()
    device.refresh_from_db()
    assert (device.push_token_id, device.push_registration_error_code) == (123456789, None)
    assert device.push_token_last_updated_timestamp <= timezone.now()


def test_an_encrypted_test_notification(member, admin, bouncer):
    device_id = registered_device(member, bouncer)
    other = new_device(member)  # no registration: not a target
    bouncer.routes[NOTIFY] = [(200, SENT)]
    assert_success(api_for(member).post("/mobile_push/e2ee/test_notification", {"device_id": device_id}))
    [request] = bouncer.received[0].body["push_requests"]
    payload = decrypt(request["payload"]["encrypted_data"])
    assert (payload["type"], payload["user_id"], payload["realm_url"]) == ("test", member.id, member.realm.url)
    assert_success(api_for(member).post("/mobile_push/e2ee/test_notification"))
    assert len(bouncer.received) == 2
    for params, user in (({"device_id": other}, member), ({"device_id": device_id}, admin), ({}, admin)):
        response = api_for(user).post("/mobile_push/e2ee/test_notification", params)
        assert_error(response, 400, "NO_ACTIVE_PUSH_DEVICE", "No active registered push device")
    assert len(bouncer.received) == 2


def test_a_registration_the_bouncer_never_gets_expires_for_the_app(member, bouncer):
    device_id = new_device(member)
    bouncer.routes[REGISTER] = [(503, {})]
    assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
    for _ in range(REGISTRATION_MAX_ATTEMPTS):
        DBTaskResult.objects.filter(status="READY").update(run_after=timezone.now())
        run_ready_tasks()
    assert len(bouncer.received) == REGISTRATION_MAX_ATTEMPTS
    device = Device.objects.get(id=device_id)
    assert (device.push_token_id, device.push_registration_error_code) == (None, "REQUEST_EXPIRED")
    assert not DBTaskResult.objects.filter(status="READY").exists()
