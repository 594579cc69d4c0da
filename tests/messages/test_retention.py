"""Message retention: a channel's message_retention_days deletes its messages older than that, when
the task worker's hourly job runs (oldest first, in batches, within a time budget); "unlimited"
and the organization's default keep everything; clients are told as for a deletion."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.tasks import PERIODIC_JOBS
from apps.messages import retention
from apps.messages.models import Message, UserMessage
from apps.subscriptions.models import Stream
from tests.api import ApiClient, assert_success


def age(message_ids, days: float) -> None:
    Message.objects.filter(id__in=message_ids).update(date_sent=timezone.now() - timedelta(days=days))


def kept(stream) -> list[str]:
    return list(Message.objects.filter(stream=stream).order_by("id").values_list("content", flat=True))


@pytest.fixture
def channels(make_stream, owner, member):
    short = make_stream("short", owner, member)
    forever = make_stream("forever", owner, member)
    default = make_stream("default", owner, member)
    assert_success(ApiClient(owner).patch(f"/streams/{short.id}", {"message_retention_days": "30"}))
    assert_success(ApiClient(owner).patch(f"/streams/{forever.id}", {"message_retention_days": '"unlimited"'}))
    return short, forever, default


def test_the_job_runs_hourly_in_the_task_worker():
    assert (3600, retention.enforce_message_retention) in PERIODIC_JOBS


def test_expired_messages_go_the_others_stay(channels, send, member, capture_events):
    short, forever, default = channels
    old = [send(member, channel, f"old in {channel.name}", topic=topic) for channel in channels for topic in "ab"]
    new = [send(member, channel, f"new in {channel.name}") for channel in channels]
    age(old, 31)
    age(new, 29)
    with capture_events(member, client_capabilities={"bulk_message_deletion": True}) as received:
        assert retention.enforce_message_retention() == 2
    assert kept(short) == ["new in short"]
    assert kept(forever) == ["old in forever", "old in forever", "new in forever"]
    assert kept(default) == ["old in default", "old in default", "new in default"]
    assert not UserMessage.objects.filter(message_id__in=old[:2]).exists()
    deletions = [e for e in received[member.id] if e["type"] == "delete_message"]
    assert sorted((e["topic"], e["message_ids"]) for e in deletions) == [("a", [old[0]]), ("b", [old[1]])]
    first = [e for e in received[member.id] if e["type"] == "stream" and e["property"] == "first_message_id"]
    assert first[-1]["value"] == new[0] == Stream.objects.get(id=short.id).first_message_id
    assert retention.enforce_message_retention() == 0  # nothing more to do


def test_batches_and_the_time_budget(channels, send, member, monkeypatch):
    short = channels[0]
    old = [send(member, short, f"old {n}") for n in range(5)]
    age(old, 40)
    monkeypatch.setattr(retention, "RETENTION_BATCH_SIZE", 2)
    monkeypatch.setattr(retention, "RETENTION_TIME_BUDGET_SECONDS", 0)
    assert retention.enforce_message_retention() == 2  # one batch, then out of time: oldest first
    assert kept(short) == ["old 2", "old 3", "old 4"]
    monkeypatch.setattr(retention, "RETENTION_TIME_BUDGET_SECONDS", 60)
    assert retention.enforce_message_retention() == 3
    assert kept(short) == []


def test_direct_messages_are_kept(channels, send, member, owner):
    message_id = send(member, [owner], "a direct message")
    age([message_id], 400)
    retention.enforce_message_retention()
    assert Message.objects.filter(id=message_id).exists()
