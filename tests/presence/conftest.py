"""Presence tests run against both stores: the database (embedded mode) and Redis (when REDIS_URL
is set; a real Redis)."""

import pytest

from apps.events.models import OutboxEvent
from apps.presence.backends import store
from apps.presence.models import UserPresence


@pytest.fixture(params=["database", "redis"], autouse=True)
def presence_store(request, settings):
    if request.param == "redis" and not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    if request.param == "database":
        settings.REDIS_URL = ""
    return store()


def stored_state(realm_id: int) -> tuple:
    """Everything a ping may write: the store's rows of the organization and the events' outbox."""
    times = sorted(store().changed_since(realm_id, after_update_id=None, connected_since=None), key=lambda t: t.user_id)
    return times, UserPresence.objects.count(), OutboxEvent.objects.count()
