"""Presence with the official `zulip` Python client from PyPI, unchanged, against a real server:
update_presence, get_realm_presence, get_user_presence, and the presence event a ping sends."""

import pytest
import zulip

pytestmark = pytest.mark.e2e


def test_client_pings_and_reads_presence(parley_server, people):
    _, owner, member = people
    mine, theirs = (
        zulip.Client(email=u.delivery_email, api_key=u.api_key, site=parley_server.url) for u in (member, owner)
    )
    queue = theirs.register(event_types=["presence"], fetch_event_types=["presence", "realm"])
    assert queue["presences"] == {}
    assert queue["server_presence_offline_threshold_seconds"] == 200  # Zulip's OFFLINE_THRESHOLD_SECS

    pinged = mine.update_presence({"status": "active", "ping_only": False, "new_user_input": True})
    assert pinged["result"] == "success", pinged
    website = pinged["presences"][member.delivery_email]["website"]
    assert (website["client"], website["status"], website["pushable"]) == ("website", "active", False)
    assert isinstance(pinged["server_timestamp"], float)

    assert theirs.update_presence({"status": "idle", "ping_only": True}) == {"result": "success", "msg": ""}
    realm = theirs.get_realm_presence()
    assert realm["result"] == "success", realm
    assert set(realm["presences"]) == {member.delivery_email, owner.delivery_email}
    assert set(realm["presences"][owner.delivery_email]) == {"website", "aggregated"}

    one = theirs.get_user_presence(member.delivery_email)
    assert one["result"] == "success", one
    assert one["presence"]["aggregated"]["status"] == "active"
    assert set(one["presence"]["website"]) == {"status", "timestamp"}
    missing = theirs.get_user_presence("nobody@e2e.example")
    assert (missing["result"], missing["msg"]) == ("error", "No such user")

    # The modern form: only what changed since the number the client last saw.
    modern = mine.update_presence({"status": "active", "last_update_id": -1})
    assert set(modern["presences"]) == {str(member.id), str(owner.id)}
    since = mine.update_presence({"status": "active", "last_update_id": modern["presence_last_update_id"]})
    assert since["presences"] == {}

    events = theirs.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
    assert [(e["type"], e["user_id"]) for e in events] == [("presence", member.id), ("presence", owner.id)]
    assert events[0]["presence"]["website"]["status"] == "active"
