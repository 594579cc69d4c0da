"""Sending events: actions call send_event_on_commit; the event reaches queues after the commit."""

import json
import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction

from apps.events.backends import get_backend
from apps.events.credentials import credential_cache
from apps.events.models import OutboxEvent

logger = logging.getLogger(__name__)


def send_event_on_commit(event: dict[str, Any], user_ids: Iterable[int]) -> None:
    """Queue `event` for every queue of `user_ids` that wants its type, once the transaction commits.

    Nothing is sent if the transaction rolls back. The outbox row written here lets POST /register
    tell which events its initial state already contains. `event` has a "type" and no "id" (each
    queue numbers its own events).
    """
    if "type" not in event or "id" in event:
        raise ValueError("an event has a type and no id")
    recipients = sorted(set(user_ids))
    if not recipients:
        return
    outbox_id = OutboxEvent.objects.create().id
    payload = json.dumps(event)

    def publish() -> None:
        try:
            get_backend().publish(payload, event["type"], recipients, outbox_id)
        except Exception:
            # The change is committed; a lost event is healed when the client re-registers.
            logger.exception("could not publish %s event %s", event["type"], outbox_id)

    transaction.on_commit(publish, robust=False)


def forget_credentials_on_commit(*, user_ids: Iterable[int] = (), realm_ids: Iterable[int] = ()) -> None:
    """After the commit, every server process stops trusting cached credentials of these users or
    organizations (a key rotated, an email changed, a deactivation)."""
    users, realms = sorted(set(user_ids)), sorted(set(realm_ids))
    # This process forgets at once (harmless if the transaction rolls back: entries just refill).
    credential_cache.forget(users, realms)

    def forget() -> None:
        try:
            get_backend().forget_credentials(users, realms)
        except Exception:
            logger.exception("could not drop cached credentials of users %s, organizations %s", users, realms)

    transaction.on_commit(forget)
