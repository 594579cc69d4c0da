"""The organization's part of POST /register (apps/realms/events.py): fields Zulip documents that
clients may read directly (the invitations QA pass: these were missing)."""

from tests.api import api_for, assert_success


def test_logos_file_limits_and_invitations_as_zulip(member):
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": '["realm"]'}))
    # No logo uploads: the default source, and the icon shows for both logos.
    assert (state["realm_logo_source"], state["realm_night_logo_source"]) == ("D", "D")
    assert state["realm_logo_url"] == state["realm_night_logo_url"] == state["realm_icon_url"]
    assert (state["max_icon_file_size_mib"], state["max_logo_file_size_mib"]) == (5, 5)
    assert state["realm_invite_required"] is True
