"""GET /users/me's max_message_id from each process's cache (with Redis): read once, then right
after every change of the user's message rows, made in this process or told by another."""

import asyncio
import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.core.redis_client import get_redis, redis_breaker, redis_key
from apps.events import publish
from apps.events.backends.redis import RedisBackend
from apps.events.credentials import credential_cache
from apps.messages.actions.send import do_send_message
from apps.messages.models import UserMessage
from apps.messages.newest import newest_cache, newest_changed_on_commit
from tests.api import ApiClient, assert_success
from tests.factories import create_stream

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _needs_redis(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL: without Redis the newest message is read every time")


def newest(user) -> int:
    return assert_success(ApiClient(user).get("/users/me"))["max_message_id"]


def truth(user) -> int:
    return max(UserMessage.objects.filter(user=user).values_list("message_id", flat=True), default=-1)


def reads_rows(user) -> bool:
    """Whether GET /users/me reads the message rows (not answered from the cache)."""
    with CaptureQueriesContext(connection) as queries:
        newest(user)
    return any(UserMessage._meta.db_table in query["sql"] for query in queries)


def test_read_once_then_again_after_each_change_of_the_rows(realm, owner, member):
    design = create_stream(realm, "design", owner, member)
    lobby = create_stream(realm, "lobby", owner)
    before = newest(member)
    assert before == truth(member)
    assert not reads_rows(member)

    sent = do_send_message(owner, stream=design, topic="plans", content="hi", acting_user=None).id
    assert newest(member) == sent
    to_member = {"type": "private", "to": [member.id], "content": "hey"}
    direct = assert_success(ApiClient(owner).post("/messages", to_member))
    assert newest(member) == direct["id"]
    assert_success(ApiClient(owner).delete(f"/messages/{direct['id']}"))
    assert newest(member) == sent

    elsewhere = do_send_message(owner, stream=lobby, topic="news", content="read me", acting_user=None).id
    assert newest(member) == sent  # not theirs
    flags = {"messages": [elsewhere], "op": "add", "flag": "starred"}
    assert_success(ApiClient(member).post("/messages/flags", flags))  # a row of a message never received
    assert newest(member) == elsewhere
    assert_success(ApiClient(owner).post(f"/streams/{lobby.id}/delete_topic", {"topic_name": "news"}))
    assert newest(member) == sent == truth(member)

    secret = create_stream(realm, "secret", owner, private=True)
    quietly = {"send_notification_to_old_thread": "false", "send_notification_to_new_thread": "false"}
    assert_success(ApiClient(owner).patch(f"/messages/{sent}", {"stream_id": secret.id, **quietly}))  # not theirs
    assert newest(member) == before == truth(member)


def test_another_process_tells_this_one_of_its_changes(realm, owner, member):
    """Rows another process writes (its own cache dropped there) are read here once it says so."""
    lobby = create_stream(realm, "lobby", owner)
    listener, loop = RedisBackend(), asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(listener.start_notifications(), loop).result(5)
        message = do_send_message(owner, stream=lobby, topic="news", content="hi", acting_user=None)
        cached = newest(member)
        UserMessage.objects.create(user=member, message=message, flags=0)  # as another process would
        assert newest(member) == cached  # from the cache: nothing here knows yet

        generation = newest_cache._generation(realm.id)
        listener.outdate_caches("newest", [realm.id])  # what that process's commit publishes
        for _ in range(100):
            if newest_cache._generation(realm.id) != generation:
                break
            threading.Event().wait(0.02)
        assert newest(member) == message.id
    finally:
        asyncio.run_coroutine_threadsafe(listener.stop_notifications(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_a_change_redis_was_not_told_of_is_told_once_it_answers(realm, monkeypatch):
    """A process whose Redis failed lately does not ask it at the commit; it tells the others once
    Redis answers, as the organization's credentials forgotten, which outdates its caches too."""
    monkeypatch.setattr(publish._UndroppedCredentials, "RETRY_SECONDS", (0.05,))
    subscription = get_redis().pubsub(ignore_subscribe_messages=True)
    subscription.subscribe(redis_key("eq", "notify"))
    try:
        redis_breaker.failed()
        with transaction.atomic():
            newest_changed_on_commit(realm.id)
        told = [subscription.get_message(timeout=0.2) for _ in range(10)]
        assert f"a r:{realm.id}".encode() in [message["data"] for message in told if message]
    finally:
        subscription.close()
    generation = newest_cache._generation(realm.id)
    credential_cache.forget(realm_ids=[realm.id])  # what hearing it does in each process
    assert newest_cache._generation(realm.id) != generation
