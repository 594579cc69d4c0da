"""POST /register as the Zulip mobile app sends it (no event types: everything, with its client
capabilities) answers every key the app's InitialSnapshot requires, and the nullable ones it reads,
so that the app can start. The list comes from zulip-flutter's generated model, at the commit
recorded beside it (tests/events/data/zulip_flutter_initial_snapshot.json)."""

import json
from pathlib import Path

from apps.messages.actions.send import do_send_message
from tests.api import api_for, assert_success

APP = json.loads((Path(__file__).parent / "data" / "zulip_flutter_initial_snapshot.json").read_text())


def test_register_answers_every_key_the_app_requires(member):
    # As the app registers (lib/api/route/events.dart): its capabilities, slim presence, and a
    # queue that outlives the app's time in the background.
    params = {"client_capabilities": APP["client_capabilities"], "slim_presence": True, "apply_markdown": True}
    state = assert_success(api_for(member).post("/register", {**params, "idle_queue_timeout": "mobile"}))
    missing = [key for key in APP["required_keys"] + APP["nullable_keys_read"] if key not in state]
    assert missing == []
    assert isinstance(state["realm_emoji"], dict)
    assert state["realm_topics_policy"] in ("allow_empty_topic", "disable_empty_topic")
    assert isinstance(state["max_file_upload_size_mib"], int)
    assert state["idle_queue_timeout_secs"] > 600


def test_recent_private_conversations(member, admin, owner, guest):
    one = do_send_message(member, dm_with=[admin], content="hi", acting_user=member)
    reply = do_send_message(admin, dm_with=[member], content="hello", acting_user=admin)
    group = do_send_message(owner, dm_with=[member, admin], content="all of us", acting_user=owner)
    own = do_send_message(member, dm_with=[member], content="note to self", acting_user=member)
    do_send_message(guest, dm_with=[admin], content="not with member", acting_user=guest)
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": ["recent_private_conversations"]}))
    assert state["recent_private_conversations"] == [
        {"max_message_id": own.id, "user_ids": []},
        {"max_message_id": group.id, "user_ids": sorted([admin.id, owner.id])},
        {"max_message_id": reply.id, "user_ids": [admin.id]},
    ]
    assert one.id < reply.id
