import pytest

from apps.subscriptions.actions import NewChannel, bulk_add_subscriptions, create_streams


@pytest.fixture
def make_stream(realm):
    """`make_stream(name, *subscribers, private=False, realm=realm, creator=None)`: a channel, as the
    actions create it (no events leave: tests that need them commit for real)."""

    def make(name, *subscribers, private=False, in_realm=None, creator=None, description=""):
        target = in_realm or realm
        [stream] = create_streams(target, [NewChannel(name, description)], invite_only=private, acting_user=creator)
        if subscribers:
            bulk_add_subscriptions(target, [stream], list(subscribers), acting_user=None)
        return stream

    return make
