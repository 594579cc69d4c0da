"""Without Redis the event queues are in the server's memory: the events another process commits
(the task worker's, a command's; here, this test's own process) reach them through the outbox."""

import time

import pytest
import zulip
from django.conf import settings

from apps.users.actions.user_settings import do_change_full_name

pytestmark = pytest.mark.e2e


def test_a_change_made_in_another_process_reaches_a_connected_client(parley_server, people):
    if settings.REDIS_URL:
        pytest.skip("with Redis every process publishes to the queues itself")
    _, owner, member = people
    client = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=parley_server.url)
    queue = client.register(event_types=["realm_user"])
    do_change_full_name(member, "Renamed Elsewhere", acting_user=None)  # in this process, not the server
    deadline = time.monotonic() + 10
    names: list[str] = []
    while not names and time.monotonic() < deadline:
        events = client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)["events"]
        names = [e["person"]["full_name"] for e in events if "full_name" in e.get("person", {})]
        time.sleep(0.2)
    assert names == ["Renamed Elsewhere"]
