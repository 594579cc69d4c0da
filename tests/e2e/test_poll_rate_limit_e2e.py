"""The long-poll's rate limit is one budget per user for the whole deployment: two server processes
sharing a Redis (of the test's own) together refuse polls past it."""

import pytest
import requests

pytestmark = [pytest.mark.e2e, pytest.mark.redis]


def test_server_processes_share_the_poll_rate_limit(live_server_factory, people, own_redis):
    _, _, member = people
    servers = [live_server_factory(REDIS_URL=own_redis.url, RATE_LIMIT_EVENTS_BY_USER="6") for _ in range(2)]
    auth = (member.delivery_email, member.api_key)
    queue_id = requests.post(f"{servers[0].url}/api/v1/register", auth=auth, timeout=30).json()["queue_id"]
    params = {"queue_id": queue_id, "last_event_id": -1, "dont_block": "true"}
    answers = [
        requests.get(f"{servers[i % 2].url}/api/v1/events", params=params, auth=auth, timeout=30) for i in range(8)
    ]
    assert [r.status_code for r in answers] == [200] * 6 + [429] * 2
    assert [r.headers["X-RateLimit-Remaining"] for r in answers] == ["5", "4", "3", "2", "1", "0", "0", "0"]
    assert {r.json()["code"] for r in answers[6:]} == {"RATE_LIMIT_HIT"}
    assert all(int(r.headers["Retry-After"]) > 0 for r in answers[6:])
