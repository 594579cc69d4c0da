"""The rules of recording pings: what is written when, which pings send a presence event, the
per-user limit on events, and each queue's form of the event."""

import json
import time

from apps.core import ratelimit
from apps.events.models import OutboxEvent
from apps.presence import limits
from apps.presence.actions import do_update_user_presence
from apps.presence.limits import LEGACY_ACTIVE_OFFSET_SECS, OFFLINE_THRESHOLD_SECS, UPDATE_MIN_FREQ_SECS
from apps.users.actions.activation import do_deactivate_user

T0 = 1_800_000_000


def presence_events() -> list[dict]:
    rows = OutboxEvent.objects.filter(event_type="presence").order_by("id")
    return [{**json.loads(row.payload), "to": sorted(row.user_ids)} for row in rows]


def test_first_ping_writes_and_tells_the_organization(member, admin, bot, foreign_user):
    ping = do_update_user_presence(member, active=True, now=T0)
    assert ping.before is None
    assert (ping.after.active, ping.after.connected) == (T0, T0)
    [event] = presence_events()
    assert event["to"] == sorted([member.id, admin.id, bot.id])  # active users of the organization only
    assert event["user_id"] == member.id
    assert event["email"] == member.delivery_email
    assert event["presence"] == {
        "website": {"client": "website", "status": "active", "timestamp": T0, "pushable": False}
    }
    assert event["presences"] == {str(member.id): {"active_timestamp": T0, "idle_timestamp": T0}}


def test_pings_within_the_minimum_interval_write_nothing(member):
    first = do_update_user_presence(member, active=True, now=T0)
    again = do_update_user_presence(member, active=True, now=T0 + UPDATE_MIN_FREQ_SECS)
    assert not again.written
    assert again.after == first.after
    later = do_update_user_presence(member, active=False, now=T0 + UPDATE_MIN_FREQ_SECS + 1)
    assert later.written
    assert later.after.connected == T0 + UPDATE_MIN_FREQ_SECS + 1
    assert later.after.active == T0  # an idle ping does not move the last activity
    assert later.after.update_id > first.after.update_id


def test_update_ids_increase_across_the_organization(member, admin):
    a = do_update_user_presence(member, active=True, now=T0)
    b = do_update_user_presence(admin, active=True, now=T0)
    assert b.after.update_id == a.after.update_id + 1


def test_regular_pings_send_no_event(member):
    do_update_user_presence(member, active=True, now=T0)
    for minute in range(1, 5):
        assert do_update_user_presence(member, active=True, now=T0 + 60 * minute).written
    assert len(presence_events()) == 1


def test_idle_to_active_sends_an_event(member):
    do_update_user_presence(member, active=True, now=T0)
    idle_since = T0 + LEGACY_ACTIVE_OFFSET_SECS + 60
    do_update_user_presence(member, active=False, now=idle_since)
    ratelimit.clear(f"presence_event:{member.id}")
    do_update_user_presence(member, active=True, now=idle_since + 60)
    events = presence_events()
    assert len(events) == 2
    assert events[1]["presence"]["website"]["status"] == "active"
    assert events[1]["presence"]["website"]["timestamp"] == idle_since + 60


def test_coming_back_online_sends_an_event(member):
    do_update_user_presence(member, active=False, now=T0)
    ratelimit.clear(f"presence_event:{member.id}")
    do_update_user_presence(member, active=False, now=T0 + OFFLINE_THRESHOLD_SECS + 1)
    assert len(presence_events()) == 2


def test_a_flapping_client_sends_at_most_one_event_in_the_window(member):
    do_update_user_presence(member, active=True, now=T0)
    # Offline and back again and again, faster than the event window (real time: the limiter's).
    for n in range(1, 6):
        do_update_user_presence(member, active=True, now=T0 + n * (OFFLINE_THRESHOLD_SECS + 1))
    assert len(presence_events()) == 1


def test_presence_disabled_records_nothing_and_sends_nothing(member):
    member.presence_enabled = False
    assert do_update_user_presence(member, active=True, now=T0) is None
    assert presence_events() == []


def test_events_skip_deactivated_users(member, admin, owner):
    do_deactivate_user(admin, acting_user=None)
    do_update_user_presence(member, active=True, now=time.time())
    assert presence_events()[0]["to"] == sorted([member.id, owner.id])


def test_each_queue_gets_its_form_of_the_event(member, admin, capture_events):
    with capture_events(admin) as legacy:
        do_update_user_presence(member, active=True, now=T0)
    with capture_events(
        admin, client_capabilities={"notification_settings_null": True, "simplified_presence_events": True}
    ) as modern:
        ratelimit.clear(f"presence_event:{member.id}")
        do_update_user_presence(member, active=True, now=T0 + OFFLINE_THRESHOLD_SECS + 1)
    assert legacy[admin.id] == [
        {
            "type": "presence",
            "user_id": member.id,
            "email": member.delivery_email,
            "server_timestamp": T0,
            "presence": {"website": {"client": "website", "status": "active", "timestamp": T0, "pushable": False}},
        }
    ]
    later = T0 + OFFLINE_THRESHOLD_SECS + 1
    assert modern[admin.id] == [
        {"type": "presence", "presences": {str(member.id): {"active_timestamp": later, "idle_timestamp": later}}}
    ]


def test_large_organizations_get_no_presence_events(member, admin, owner, monkeypatch):
    monkeypatch.setattr(limits, "MAX_USERS_FOR_PRESENCE_EVENTS", 2)
    ping = do_update_user_presence(member, active=True, now=T0)
    assert ping.written
    assert presence_events() == []
