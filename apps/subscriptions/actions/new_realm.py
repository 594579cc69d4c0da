"""The channels a new organization starts with."""

from apps.realms.actions import do_change_realm_settings
from apps.realms.models import Realm
from apps.subscriptions.actions.channels import NewChannel, create_streams, do_set_default_channel

# As a new Zulip organization's: both default channels (everyone who joins joins them), #general
# where new channels are announced.
INITIAL_CHANNELS = (
    NewChannel("general", "For team-wide conversations"),
    NewChannel("sandbox", "Experiment here: try out messages, formatting and topics. :test_tube:"),
)


def create_initial_channels(realm: Realm) -> None:
    """Before the organization's first person (the realm_created hook), who joins them."""
    general, sandbox = create_streams(realm, INITIAL_CHANNELS, acting_user=None)
    for stream in (general, sandbox):
        do_set_default_channel(stream, True, acting_user=None)
    do_change_realm_settings(
        realm,
        {"new_stream_announcements_stream": general, "zulip_update_announcements_stream": general},
        acting_user=None,
    )
