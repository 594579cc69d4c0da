"""Push registrations with the official `zulip` Python client from PyPI, unchanged, against a real
server, sending what the Zulip mobile app sends at start-up: a token (the legacy endpoints), a device
and its push registration, a test notification through the log backend, and the device's events."""

import base64

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
    assert client.call_endpoint(url="mobile_push/register", method="POST", request=registration)["result"] == "success"
    devices = client.register(fetch_event_types=["device"])["devices"]
    assert devices[str(device_id)]["push_token_id"] == registration["token_id"]
    assert (
        client.call_endpoint(url="remove_client_device", method="POST", request={"device_id": device_id})["result"]
        == "success"
    )

    events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e["op"], e["device_id"]) for e in events] == [
        ("device", "add", device_id),
        ("device", "update", device_id),
        ("device", "remove", device_id),
    ]
    assert parley_server.log().count("push (log backend) to user") == 1
