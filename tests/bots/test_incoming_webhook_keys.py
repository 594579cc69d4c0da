"""An incoming webhook bot's key sends messages and does nothing else: every other endpoint answers
Zulip's 401 "This API is not available to incoming webhook bots." and changes nothing, on the
ordinary path, the long-poll path (GET /events registers lazily) and file downloads alike."""

import pytest

from apps.messages.models import Message
from apps.subscriptions.models import Subscription
from apps.users.models import BotType, User
from tests.api import ApiClient, assert_error, assert_success
from tests.factories import BotFactory

REFUSED = "This API is not available to incoming webhook bots."


@pytest.fixture
def hook(realm, member):
    return BotFactory(realm=realm, bot_owner=member, bot_type=BotType.INCOMING_WEBHOOK, full_name="Hook Bot")


def test_it_sends_messages_to_channels_and_people(hook, member, make_stream):
    make_stream("alerts", member)
    api = ApiClient(hook)
    sent = assert_success(api.post("/messages", {"type": "stream", "to": "alerts", "topic": "ci", "content": "red"}))
    assert Message.objects.get(id=sent["id"]).sender_id == hook.id
    assert_success(api.post("/messages", {"type": "private", "to": f"[{member.id}]", "content": "hi"}))


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("get", "/messages", {"anchor": "newest", "num_before": 10, "num_after": 0}),
        ("get", "/users", {}),
        ("get", "/users/me", {}),
        ("get", "/streams", {}),
        ("post", "/users/me/subscriptions", {"subscriptions": '[{"name": "alerts"}]'}),
        ("post", "/register", {}),
        ("delete", "/events", {"queue_id": "1:x"}),
        ("post", "/bots", {"full_name": "Reader", "short_name": "reader"}),
        ("get", "/user_uploads/1/ab/file.txt", {}),
    ],
)
def test_every_other_endpoint_refuses_it(hook, member, make_stream, method, path, params):
    make_stream("alerts", member)
    before = (Subscription.objects.count(), User.objects.count())
    response = getattr(ApiClient(hook), method)(path, params)
    assert_error(response, 401, "UNAUTHORIZED", REFUSED)
    assert (Subscription.objects.count(), User.objects.count()) == before


# The long-poll path reads the database outside the request (apps.core.asgi.outside_request), so its
# tests commit what they make.


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("params", [{"dont_block": "true"}, {"queue_id": "1:x", "last_event_id": -1}])
def test_the_long_poll_path_refuses_it(event_backend, hook, params):
    assert_error(ApiClient(hook).get("/events", params), 401, "UNAUTHORIZED", REFUSED)
    assert event_backend.queue_ids_of_user(hook.id) == []


@pytest.mark.django_db(transaction=True)
def test_other_bots_and_people_are_not_refused(event_backend, bot, member):
    for user in (bot, member):
        assert assert_success(ApiClient(user).get("/users/me"))["user_id"] == user.id
        assert assert_success(ApiClient(user).get("/events", {"dont_block": "true"}))["queue_id"]


@pytest.mark.django_db(transaction=True)
def test_the_refusal_holds_after_a_send_was_cached(event_backend, hook, member, make_stream):
    """Sending authenticates the key (and caches it); the next request elsewhere is still refused."""
    make_stream("alerts", member)
    api = ApiClient(hook)
    newest = {"anchor": "newest", "num_before": 1, "num_after": 0}
    for _ in range(2):
        assert_success(api.post("/messages", {"type": "stream", "to": "alerts", "topic": "ci", "content": "x"}))
        assert_error(api.get("/messages", newest), 401, "UNAUTHORIZED", REFUSED)
        assert_error(api.get("/events", {"dont_block": "true"}), 401, "UNAUTHORIZED", REFUSED)
