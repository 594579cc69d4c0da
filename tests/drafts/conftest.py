"""Shared helpers of the drafts tests: drafts made over the API, and a snapshot of every row the
draft endpoints write."""

import pytest

from apps.drafts.models import Draft
from apps.events.models import OutboxEvent
from apps.messages.models import DirectMessageGroup, Recipient
from tests.api import api_for, assert_success

api = api_for  # an API client of a user, on their organization's host


def draft(type="", to=(), topic="", content="hello", **extra) -> dict:
    """A draft object as clients send it."""
    return {"type": type, "to": list(to), "topic": topic, "content": content, **extra}


def create(user, *drafts: dict) -> list[int]:
    """POST /drafts; the new drafts' ids."""
    return assert_success(api(user).post("/drafts", {"drafts": list(drafts)}))["ids"]


def listed(user) -> list[dict]:
    """GET /drafts' drafts, checking its count."""
    body = assert_success(api(user).get("/drafts"))
    assert body["count"] == len(body["drafts"])
    return body["drafts"]


def without_ids(drafts: list[dict]) -> list[dict]:
    return [{k: v for k, v in d.items() if k != "id"} for d in drafts]


def db_state() -> dict:
    """Every row the draft endpoints write: equal before and after a refused request."""
    return {
        "drafts": list(Draft.objects.order_by("id").values()),
        "recipients": list(Recipient.objects.order_by("id").values()),
        "groups": list(DirectMessageGroup.objects.order_by("id").values()),
        "events": OutboxEvent.objects.count(),
    }


@pytest.fixture
def design(make_stream, member, admin):
    """A public channel the member and the administrator are subscribed to."""
    return make_stream("design", member, admin)
