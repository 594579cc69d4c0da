"""Push registrations with the official `zulip` Python client from PyPI, unchanged, against a real
server, sending what the Zulip mobile app sends at start-up: a token (the legacy endpoints), a device
and its push registration (refused: the log backend reaches no phone), a test notification through
the log backend, and the device's events."""

import base64
import time

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_mobile_app_registers_its_device(parley_server, people):
    _, _, member = people
    client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=parley_server.url)
    queue = client.register(event_types=["device"], fetch_event_types=["device"])
    assert queue["devices"] == {}

    added = client.call_endpoint(url="users/me/android_gcm_reg_id", method="POST", request={"token": "fcm-token-1"})
    assert added == {"result": "success", "msg": ""}
    tested = client.call_endpoint(url="mobile_push/test_notification", method="POST", request={"token": "fcm-token-1"})
    assert tested == {"result": "success", "msg": ""}
    unknown = client.call_endpoint(url="mobile_push/test_notification", method="POST", request={"token": "nope"})
    assert (unknown["code"], unknown["msg"]) == ("INVALID_PUSH_DEVICE_TOKEN", "Device not recognized")

    device_id = client.call_endpoint(url="register_client_device", method="POST")["device_id"]
    registration = {
        "device_id": device_id,
        "push_key_id": 1,
        "push_key": base64.b64encode(bytes([0x31]) + bytes(32)).decode(),
        "token_kind": "fcm",
        "token_id": base64.b64encode((42).to_bytes(8, "big")).decode(),
        "bouncer_public_key": "key",
        "encrypted_push_registration": "sealed",
    }
    # The log backend reaches no phone: registering for encrypted notifications is refused, as by a
    # Zulip server without a push service.
    refused = client.call_endpoint(url="mobile_push/register", method="POST", request=registration)
    assert (refused["code"], refused["msg"]) == (
        "PUSH_SERVICE_NOT_CONFIGURED",
        "Server is not configured to use push notification service.",
    )
    devices = client.register(fetch_event_types=["device"])["devices"]
    assert devices[str(device_id)]["push_token_id"] is None
    assert (
        client.call_endpoint(url="remove_client_device", method="POST", request={"device_id": device_id})["result"]
        == "success"
    )

    events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e["op"], e["device_id"]) for e in events] == [
        ("device", "add", device_id),
        ("device", "remove", device_id),
    ]
    assert parley_server.log().count("push (log backend) to user") == 1


def test_a_direct_message_to_someone_away_pushes_once_and_reading_removes_it(
    transactional_db, live_server_factory, people
):
    """The server started as `make run` starts it, with its task worker: a direct message to someone
    with a registered phone is pushed exactly once through the log backend, and reading it sends
    the removal."""
    _, owner, member = people
    server = live_server_factory(TASK_WORKER="1")
    phone = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    assert (
        phone.call_endpoint(url="users/me/android_gcm_reg_id", method="POST", request={"token": "fcm-e2e"})["result"]
        == "success"
    )
    sender = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=server.url)
    sent = sender.send_message({"type": "private", "to": [member.delivery_email], "content": "Lunch?"})
    message_id = sent["id"]

    pushed = wait_for_log(server, f"'zulip_message_id': {message_id}")
    assert len(pushed) == 1
    assert f"to user {member.id}, FCM token fcm-e2e" in pushed[0]
    assert "'content': 'Lunch?'" in pushed[0]

    assert phone.update_message_flags({"messages": [message_id], "op": "add", "flag": "read"})["result"] == "success"
    removed = wait_for_log(server, f"'zulip_message_ids': '{message_id}'")
    assert len(removed) == 1
    assert "'event': 'remove'" in removed[0]
    # Nothing more arrives: still exactly one notification of the message.
    time.sleep(1.5)
    assert len([line for line in server.log().splitlines() if f"'zulip_message_id': {message_id}," in line]) == 1


def wait_for_log(server, text: str, timeout: float = 20.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [line for line in server.log().splitlines() if "push (log backend)" in line and text in line]
        if lines:
            return lines
        time.sleep(0.2)
    raise AssertionError(f"no push with {text!r} within {timeout} s; server log:\n{server.log()[-3000:]}")
