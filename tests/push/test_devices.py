"""Zulip's current device registration: POST /register_client_device, /mobile_push/register,
/remove_client_device, the `devices` state of POST /register and `device` events; the admin."""

import base64
import hashlib

import pytest
from django.db import connection

from apps.events.models import OutboxEvent
from apps.push.actions import do_complete_push_registration, do_fail_push_registration, do_forget_push_registrations
from apps.push.models import Device, PushDeviceToken
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once, done_or_refused

KEY = base64.b64encode(bytes([0x31]) + bytes(range(32))).decode()
OTHER_KEY = base64.b64encode(bytes([0x31]) + bytes(range(1, 33))).decode()
TOKEN_ID = base64.b64encode((123456789).to_bytes(8, "big", signed=True)).decode()
OTHER_TOKEN_ID = base64.b64encode((-5).to_bytes(8, "big", signed=True)).decode()


def registration(device_id: int, **changes) -> dict:
    return {
        "device_id": device_id,
        "push_key_id": 7,
        "push_key": KEY,
        "token_kind": "fcm",
        "token_id": TOKEN_ID,
        "bouncer_public_key": "bouncer-key",
        "encrypted_push_registration": "ciphertext",
        **changes,
    }


def new_device(user) -> int:
    return assert_success(api_for(user).post("/register_client_device"))["device_id"]


def devices_state(user) -> dict:
    return assert_success(api_for(user).post("/register", {"fetch_event_types": ["device"]}))["devices"]


def device_rows() -> list[tuple]:
    fields = ("id", "user_id", "push_key", "push_key_id", "push_token_id", "push_token_kind")
    return [
        tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in Device.objects.values_list(*fields)
    ]


def refused(user, path, params, msg, code="BAD_REQUEST"):
    before = device_rows(), OutboxEvent.objects.count()
    assert_error(api_for(user).post(path, params), 400, code, msg)
    assert (device_rows(), OutboxEvent.objects.count()) == before


def test_a_device_is_registered_then_removed(member, capture_events):
    with capture_events(member) as events:
        device_id = new_device(member)
    assert events[member.id] == [{"type": "device", "op": "add", "device_id": device_id}]
    assert devices_state(member) == {
        str(device_id): {
            "push_key_id": None,
            "push_token_id": None,
            "pending_push_token_id": None,
            "push_token_last_updated_timestamp": None,
            "push_registration_error_code": None,
        }
    }
    with capture_events(member) as events:
        assert_success(api_for(member).post("/remove_client_device", {"device_id": device_id}))
    assert events[member.id] == [{"type": "device", "op": "remove", "device_id": device_id}]
    assert devices_state(member) == {}


def test_a_server_that_cannot_push_refuses_registrations(member, settings, capture_events):
    """As Zulip's, where nothing reaches phones (the log backend, or the bouncer without this
    server's registration): the app is not told its device is registered (the mobile QA pass: it
    was, and its `devices` said so)."""
    settings.PUSH_NOTIFICATIONS_ENABLED = False
    device_id = new_device(member)
    with capture_events(member) as events:
        assert_error(
            api_for(member).post("/mobile_push/register", registration(device_id)),
            400,
            "PUSH_SERVICE_NOT_CONFIGURED",
            "Server is not configured to use push notification service.",
        )
    assert events[member.id] == []
    assert devices_state(member)[str(device_id)]["push_token_id"] is None


def test_push_registration_is_stored_and_announced(member, capture_events):
    device_id = new_device(member)
    with capture_events(member) as events:
        assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
    [event] = events[member.id]
    assert event["type"] == "device"
    assert event["op"] == "update"
    assert event["device_id"] == device_id
    assert event["push_key_id"] == 7
    assert event["push_token_id"] == TOKEN_ID
    assert event["pending_push_token_id"] is None
    assert event["push_registration_error_code"] is None
    state = devices_state(member)[str(device_id)]
    assert state["push_token_id"] == TOKEN_ID
    assert state["push_token_last_updated_timestamp"] == event["push_token_last_updated_timestamp"]
    device = Device.objects.get(id=device_id)
    assert bytes(device.push_key) == base64.b64decode(KEY)
    assert (device.push_token_kind, device.bouncer_public_key, device.encrypted_push_registration) == (
        "fcm",
        "bouncer-key",
        "ciphertext",
    )
    # The same registration again changes nothing and says nothing.
    with capture_events(member) as events:
        assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
    assert events[member.id] == []


def test_key_and_token_rotate_separately(member, capture_events):
    device_id = new_device(member)
    assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
    with capture_events(member) as events:
        assert_success(
            api_for(member).post(
                "/mobile_push/register", {"device_id": device_id, "push_key": OTHER_KEY, "push_key_id": 8}
            )
        )
    assert events[member.id] == [{"type": "device", "op": "update", "device_id": device_id, "push_key_id": 8}]
    token_only = registration(device_id, token_id=OTHER_TOKEN_ID)
    del token_only["push_key"], token_only["push_key_id"]
    assert_success(api_for(member).post("/mobile_push/register", token_only))
    device = Device.objects.get(id=device_id)
    assert (device.push_key_id, device.push_token_id) == (8, -5)
    assert bytes(device.push_key) == base64.b64decode(OTHER_KEY)


def test_rotating_needs_a_registration(member):
    device_id = new_device(member)
    refused(
        member,
        "/mobile_push/register",
        {"device_id": device_id, "push_key": KEY, "push_key_id": 1},
        "No push registration exists to rotate key for.",
    )
    token_only = registration(device_id)
    del token_only["push_key"], token_only["push_key_id"]
    refused(member, "/mobile_push/register", token_only, "No push registration exists to rotate token for.")


@pytest.mark.parametrize(
    ("changes", "msg"),
    [
        (
            {"push_key": None, "token_kind": None},
            "Missing parameters: must provide either all push key fields, all token fields, or both.",
        ),
        ({"push_key": "not base64!"}, "Invalid `push_key`"),
        ({"push_key": base64.b64encode(bytes([0x32]) + bytes(32)).decode()}, "Invalid `push_key`"),
        ({"push_key": base64.b64encode(bytes([0x31]) + bytes(31)).decode()}, "Invalid `push_key`"),
        ({"token_id": "###"}, "Invalid `token_id`"),
        ({"token_id": base64.b64encode(bytes(9)).decode()}, "Invalid `token_id`"),
        ({"token_kind": "sms"}, "Invalid token_kind"),
    ],
)
def test_bad_registrations_are_refused(member, changes, msg):
    device_id = new_device(member)
    params = {k: v for k, v in registration(device_id, **changes).items() if v is not None}
    refused(member, "/mobile_push/register", params, msg)


@pytest.mark.parametrize(
    ("push_key_id", "msg"), [(2**32, "push_key_id is too large"), (-1, "push_key_id is too small")]
)
def test_push_key_id_is_an_unsigned_32_bit_integer(member, push_key_id, msg):
    device_id = new_device(member)
    refused(
        member,
        "/mobile_push/register",
        registration(device_id, push_key_id=push_key_id),
        msg,
        "REQUEST_VARIABLE_INVALID",
    )


def test_another_persons_device_is_invalid(member, admin, foreign_user):
    theirs = new_device(admin)
    for user in (member, foreign_user):
        refused(user, "/remove_client_device", {"device_id": theirs}, "Invalid `device_id`")
        refused(user, "/mobile_push/register", registration(theirs), "Invalid `device_id`")
    for device_id in (0, -1, 2**63, 10**30):
        refused(member, "/remove_client_device", {"device_id": device_id}, "Invalid `device_id`")


@pytest.mark.parametrize("path", ["/register_client_device", "/remove_client_device", "/mobile_push/register"])
def test_bots_are_refused(bot, path):
    refused(bot, path, {"device_id": 1}, "This endpoint does not accept bot requests.")


def test_admin_lists_and_removes_through_the_actions(staff, member, capture_events):
    device_id = new_device(member)
    assert_success(api_for(member).post("/users/me/android_gcm_reg_id", {"token": "fcm-token"}))
    page = staff.get("/admin/push/device/")
    assert page.status_code == 200
    assert f"/admin/push/device/{device_id}/" in page.content.decode()
    assert staff.get("/admin/push/pushdevicetoken/").status_code == 200
    assert staff.get("/admin/push/device/add/").status_code == 403
    with capture_events(member) as events:
        staff.post(f"/admin/push/device/{device_id}/delete/", {"post": "yes"})
    assert not Device.objects.filter(id=device_id).exists()
    assert events[member.id] == [{"type": "device", "op": "remove", "device_id": device_id}]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_registered_and_removed_at_the_same_moment(member):
    # A registration, or a second removal, at the moment of a removal: each waits for it, then finds
    # no device (it gave a 500, brought the removed device back, or announced its removal twice).
    def race(device_id: int) -> list:
        remove = {"device_id": device_id}
        rotate = {"device_id": device_id, "push_key_id": 9, "push_key": OTHER_KEY}
        return at_once(
            lambda: api_for(member).post("/remove_client_device", remove),
            lambda: api_for(member).post("/remove_client_device", remove),
            lambda: api_for(member).post("/mobile_push/register", registration(device_id, push_key_id=8)),
            lambda: api_for(member).post("/mobile_push/register", rotate),
        )

    for _ in range(3):
        device_id = new_device(member)
        assert_success(api_for(member).post("/mobile_push/register", registration(device_id)))
        answers = race(device_id)
        assert sorted(answer.status_code for answer in answers[:2]) == [200, 400]
        done_or_refused(answers, 400, "BAD_REQUEST", "Invalid `device_id`")
        removed = f'"op": "remove", "device_id": {device_id}}}'
        assert OutboxEvent.objects.filter(event_type="device", payload__contains=removed).count() == 1
    assert device_rows() == []


def test_a_device_removed_while_a_task_talked_to_the_push_service_is_passed_over(member, capture_events):
    # The bouncer's answer (or refusal) arrives after the app removed the device: the task's
    # update found no row (a DatabaseError, the task failed and was retried for nothing).
    device = Device.objects.get(id=new_device(member))
    Device.objects.filter(id=device.id).delete()
    with capture_events(member) as received:
        do_complete_push_registration(device, 5)
        do_fail_push_registration(device, "INVALID_TOKEN")
        do_forget_push_registrations([device])
    assert received[member.id] == []
    assert device_rows() == []


def test_registering_for_encrypted_notifications_drops_the_same_tokens_legacy_registration(member):
    """As Zulip's since feature level 483 (the push QA pass: both forms were sent, twice on iOS): the
    token is known by its id, the first 8 bytes of its SHA-256."""
    api = api_for(member)
    for path, token in (
        ("/users/me/android_gcm_reg_id", "fcm-token-of-this-phone"),
        ("/users/me/android_gcm_reg_id", "fcm-token-of-another-phone"),
        ("/users/me/apns_device_token", "ab" * 32),
    ):
        assert_success(api.post(path, {"token": token, "appid": "org.zulip.Zulip"}))
    token_id = base64.b64encode(hashlib.sha256(b"fcm-token-of-this-phone").digest()[:8]).decode()
    assert_success(api.post("/mobile_push/register", registration(new_device(member), token_id=token_id)))

    def kept() -> list[tuple]:
        return list(PushDeviceToken.objects.filter(user=member).order_by("token").values_list("kind", "token"))

    assert kept() == [(PushDeviceToken.Kind.APNS, "ab" * 32), (PushDeviceToken.Kind.FCM, "fcm-token-of-another-phone")]
    # An APNs token as the iPhone gave it (upper case; kept in lower case).
    apns_id = base64.b64encode(hashlib.sha256(("AB" * 32).encode()).digest()[:8]).decode()
    registered = registration(new_device(member), token_kind="apns", token_id=apns_id)
    assert_success(api.post("/mobile_push/register", registered))
    assert kept() == [(PushDeviceToken.Kind.FCM, "fcm-token-of-another-phone")]
