"""The organization's part of POST /register (apps/realms/events.py): fields Zulip documents that
clients may read directly (the invitations QA pass: these were missing)."""

import hashlib

from tests.api import api_for, assert_success


def test_the_icon_is_gravatars_identicon_of_the_organizations_id(member, foreign_user, settings):
    """As Zulip's realm_icon_url (the mobile-app QA pass: every organization's was the identicon of
    its name, the default organization's that of an empty string)."""
    settings.ENABLE_GRAVATAR = True
    icons = [assert_success(api_for(user).get("/server_settings"))["realm_icon"] for user in (member, foreign_user)]
    for user, icon in zip((member, foreign_user), icons, strict=True):
        digest = hashlib.md5(str(user.realm_id).encode(), usedforsecurity=False).hexdigest()
        assert icon == f"https://secure.gravatar.com/avatar/{digest}?d=identicon"


def test_logos_file_limits_and_invitations_as_zulip(member):
    state = assert_success(api_for(member).post("/register", {"fetch_event_types": '["realm"]'}))
    # No logo uploads: the default source, and the icon shows for both logos.
    assert (state["realm_logo_source"], state["realm_night_logo_source"]) == ("D", "D")
    assert state["realm_logo_url"] == state["realm_night_logo_url"] == state["realm_icon_url"]
    assert (state["max_icon_file_size_mib"], state["max_logo_file_size_mib"]) == (5, 5)
    assert state["realm_invite_required"] is True
