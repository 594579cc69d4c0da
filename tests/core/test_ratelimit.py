"""Per-user and per-IP rate limits, in process and in Redis, with Zulip's headers and 429."""

import os
import time

import pytest
import redis.connection

from apps.core import ratelimit
from apps.core.redis_client import get_redis, redis_breaker, redis_key
from tests.api import ApiClient, assert_error, assert_success


def test_headers_count_down_then_429(rate_limit_backend, settings, member):
    settings.RATE_LIMIT_API_BY_USER = (3, 60)
    api = ApiClient(member)
    before = time.time()
    for remaining in (2, 1, 0):
        response = api.get("/users/me")
        assert_success(response)
        assert response["X-RateLimit-Limit"] == "3"
        assert response["X-RateLimit-Remaining"] == str(remaining)
        assert before + 59 <= int(response["X-RateLimit-Reset"]) <= time.time() + 61
    response = api.get("/users/me")
    body = assert_error(response, 429, "RATE_LIMIT_HIT", "API usage exceeded rate limit")
    assert isinstance(body["retry-after"], float)
    assert 0 < body["retry-after"] <= 60
    assert int(response["Retry-After"]) >= body["retry-after"]
    assert response["X-RateLimit-Remaining"] == "0"


def test_limit_is_per_user(rate_limit_backend, settings, member, admin):
    settings.RATE_LIMIT_API_BY_USER = (1, 60)
    assert_success(ApiClient(member).get("/users/me"))
    assert_error(ApiClient(member).get("/users/me"), 429, "RATE_LIMIT_HIT")
    assert_success(ApiClient(admin).get("/users/me"))


def test_refused_requests_change_nothing(rate_limit_backend, settings, member, admin):
    settings.RATE_LIMIT_API_BY_USER = (1, 60)
    api = ApiClient(admin)
    assert_success(api.get("/users/me"))
    assert_error(api.patch(f"/users/{member.id}", {"full_name": "Changed"}), 429, "RATE_LIMIT_HIT")
    member.refresh_from_db()
    assert member.full_name == "Mel Member"


def test_unauthenticated_requests_are_limited_per_ip(rate_limit_backend, settings, realm):
    settings.RATE_LIMIT_API_BY_IP = (2, 60)
    api = ApiClient()
    assert_success(api.get("/server_settings"))
    assert_success(api.get("/server_settings"))
    assert_error(api.get("/server_settings"), 429, "RATE_LIMIT_HIT")
    assert_success(api.get("/server_settings", REMOTE_ADDR="10.0.0.9"))


def test_window_slides(rate_limit_backend):
    key = f"test-window-{rate_limit_backend}"
    assert not ratelimit.check(key, (2, 1)).blocked
    assert not ratelimit.check(key, (2, 1)).blocked
    assert ratelimit.check(key, (2, 1)).blocked
    time.sleep(1.05)
    state = ratelimit.check(key, (2, 1))
    assert not state.blocked
    assert state.remaining == 1


def test_checking_without_recording_counts_nothing(rate_limit_backend):
    key = f"test-peek-{rate_limit_backend}"
    for _ in range(5):
        assert not ratelimit.check(key, (1, 60), record=False).blocked
    ratelimit.check(key, (1, 60))
    assert ratelimit.check(key, (1, 60), record=False).blocked
    ratelimit.clear(key)
    assert not ratelimit.check(key, (1, 60), record=False).blocked


def test_a_named_hit_can_be_taken_back(rate_limit_backend):
    """What a login the database could not answer does (apps/users/backends.py)."""
    key, limit = f"test-take-back-{rate_limit_backend}", (2, 60)
    ratelimit.check(key, limit)
    attempt = ratelimit.hit_name()
    assert ratelimit.check(key, limit, name=attempt).remaining == 0
    ratelimit.take_back(key, attempt)
    assert ratelimit.check(key, limit, record=False).remaining == 1
    ratelimit.clear(key)


def test_a_weighted_hit_is_recorded_whole_or_not_at_all(rate_limit_backend):
    key, limit = f"test-cost-{rate_limit_backend}", (5, 60)
    assert ratelimit.check(key, limit, cost=3).remaining == 2
    refused = ratelimit.check(key, limit, cost=3)
    assert refused.blocked
    assert refused.remaining == 2
    assert not ratelimit.check(key, limit, cost=2).blocked
    assert ratelimit.check(key, limit).blocked
    with pytest.raises(ValueError, match=r"cost 6 is outside 1\.\.5"):
        ratelimit.check(key, limit, cost=6)


def test_a_weighted_hit_waits_until_enough_hits_expire(rate_limit_backend):
    key, limit = f"test-cost-wait-{rate_limit_backend}", (4, 60)
    ratelimit.check(key, limit, cost=2)
    time.sleep(0.2)
    ratelimit.check(key, limit, cost=2)
    one, three = ratelimit.check(key, limit), ratelimit.check(key, limit, cost=3)
    # One slot frees when the first hits leave the window; three only when the later ones do too.
    assert one.blocked
    assert three.blocked
    assert three.retry_after > one.retry_after


def test_general_limit_fails_open_when_redis_is_down(redis_down, member, caplog, monkeypatch, settings):
    response = ApiClient(member).get("/users/me")
    assert_success(response)
    assert "X-RateLimit-Limit" not in response
    assert "rate limiting skipped while Redis cannot be reached" in caplog.text
    # Then Redis is left alone a while, not asked at each request (a hung one answers each at its
    # timeout: the fault QA pass, 2 s a request): the general limit lets requests through, a strict
    # one (failed logins) refuses at once.

    def unanswered() -> None:  # (the breaker's PINGs, not counted below)
        raise redis.exceptions.ConnectionError("nobody listens")

    monkeypatch.setattr(redis_breaker, "_ping", unanswered)
    connects = []
    real_connect = redis.connection.AbstractConnection.connect
    monkeypatch.setattr(redis.connection.AbstractConnection, "connect", lambda c: connects.append(c) or real_connect(c))
    for _ in range(3):
        assert_success(ApiClient(member).get("/users/me"))
    login = {"username": member.delivery_email, "password": "wrong"}
    assert_error(ApiClient(None).post("/fetch_api_key", login), 503, "SERVICE_UNAVAILABLE")
    assert connects == []
    # Once Redis answers the breaker's PING, requests use it again.
    redis_breaker.answered()
    assert_success(ApiClient(member).get("/users/me"))
    assert len(connects) == 1


def test_rate_limiting_can_be_disabled(settings, member):
    settings.RATE_LIMITING_ENABLED = False
    settings.RATE_LIMIT_API_BY_USER = (1, 60)
    for _ in range(3):
        assert "X-RateLimit-Limit" not in assert_success_response(ApiClient(member).get("/users/me"))


def assert_success_response(response):
    assert_success(response)
    return response


def test_an_ordinary_request_is_one_redis_round_trip(settings, member, monkeypatch):
    """The general limit is one script call; authentication and the organization come from caches."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    api = ApiClient(member)
    assert_success(api.get("/users/me"))  # connects, loads the script, fills the caches
    sent = []
    real_send = redis.connection.AbstractConnection.send_packed_command

    def send(connection, command, check_health=True):
        sent.append(command)
        return real_send(connection, command, check_health)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", send)
    assert_success(api.get("/users/me"))
    assert len(sent) == 1
    packed = sent[0] if isinstance(sent[0], bytes) else b"".join(sent[0])
    assert b"EVALSHA" in packed


def test_a_redis_that_forgot_the_script_gets_it_again(settings, member):
    """A restarted (or flushed) Redis has no scripts: the limit loads its own again, and counts on."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")
    key = f"test-forgotten-{time.time()}"
    assert not ratelimit.check(key, (5, 60)).blocked
    get_redis().script_flush()
    assert ratelimit.check(key, (5, 60)).remaining == 3


def test_hits_are_named_apart_in_a_forked_process():
    """Two servers' hits in one window must not share a name, or the sorted set keeps only one."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its name and leave without running anything of pytest's
        os.write(write_end, ratelimit.hit_name().encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end) as reader:
        child = reader.read()
    mine = ratelimit.hit_name()
    assert mine.split(":")[0] != child.split(":")[0]
    assert ratelimit.hit_name() != mine


def needs_redis(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (a real Redis)")


def counted_in_redis(key: str) -> int:
    return get_redis().zcard(redis_key("ratelimit", key))


def test_the_api_limit_takes_hits_from_redis_a_few_at_a_time(settings, monkeypatch):
    """A burst costs Redis one round trip per lease, not per request; Remaining still counts each."""
    needs_redis(settings)
    leases = []
    real_lease = ratelimit.RedisBackend.lease
    monkeypatch.setattr(ratelimit.RedisBackend, "lease", lambda *args: leases.append(args[5]) or real_lease(*args))
    for served in range(1, 101):
        assert ratelimit.check_api_request("api_by_user:lease", (1000, 60)).remaining == 1000 - served
    assert leases == [1, 2, 4, 8, 16, 32, 32, 32]  # doubling up to LEASE_MAX
    assert counted_in_redis("api_by_user:lease") == 127  # the last lease's 27 unused included


def test_leases_never_let_more_through_than_the_limit(settings):
    """Two processes (two sets of leases) sharing a limit: together never above it, and refused
    short of it by at most what the other holds unused."""
    needs_redis(settings)
    processes = [ratelimit.Leases(), ratelimit.Leases()]
    served = [0, 0]
    for turn in range(300):
        if not processes[turn % 2].check("api_by_user:shared", (100, 60)).blocked:
            served[turn % 2] += 1
    assert 100 - 2 * 5 <= sum(served) <= 100  # leases of at most 100 // 20
    assert counted_in_redis("api_by_user:shared") == 100
    alone = ratelimit.Leases()
    outcomes = [alone.check("api_by_user:alone", (100, 60)).blocked for _ in range(101)]
    assert outcomes == [False] * 100 + [True]


def test_a_lease_gives_back_what_it_did_not_use(settings, monkeypatch):
    needs_redis(settings)
    monkeypatch.setattr(ratelimit.Leases, "LEASE_SECONDS", 0.2)
    key = "api_by_user:idle"
    for _ in range(4):  # leases of 1, 2 and 4: three of the last unused
        ratelimit.check_api_request(key, (1000, 60))
    assert counted_in_redis(key) == 7
    time.sleep(0.25)  # the lease runs out: the next request gives its rest back and takes 2
    assert ratelimit.check_api_request(key, (1000, 60)).remaining == 1000 - 5
    assert counted_in_redis(key) == 6
    ratelimit.clear(key)  # an administrator's reset forgets the process's lease with the hits
    assert ratelimit.check_api_request(key, (1000, 60)).remaining == 999


def test_leases_run_out_are_dropped_when_there_are_many(settings, monkeypatch):
    """Every address of anonymous requests has a lease: the process keeps only those still running."""
    needs_redis(settings)
    monkeypatch.setattr(ratelimit.Leases, "MAX_KEYS", 5)
    leases = ratelimit.Leases()
    leases.check("api_by_ip:10.0.0.1", (1000, 60))
    monkeypatch.setattr(ratelimit.Leases, "LEASE_SECONDS", -2.0)  # the next ones run out at once
    for n in range(2, 6):
        leases.check(f"api_by_ip:10.0.0.{n}", (1000, 60))
    leases.check("api_by_ip:10.0.1.1", (1000, 60))
    assert set(leases._leases) == {"api_by_ip:10.0.0.1", "api_by_ip:10.0.1.1"}


def test_two_threads_taking_leases_at_once_lose_no_hits(settings, monkeypatch):
    """A process serves a user's requests in several threads: two may take a lease at once. Every
    hit recorded is then served or held for the next requests (the leaseqa QA pass: the second
    lease replaced the first, whose unused hits were lost and the client refused early)."""
    needs_redis(settings)
    leases, key = ratelimit.Leases(), "api_by_user:threads"
    for _ in range(3):  # leases of 1 and 2, used up: the next asks for 4
        leases.check(key, (1000, 60))
    real_lease, other_thread = ratelimit.RedisBackend.lease, []

    def lease(*args):
        if not other_thread:  # while this thread waits for Redis, another takes its own lease
            other_thread.append(None)
            other_thread[0] = leases.check(key, (1000, 60))
        return real_lease(*args)

    monkeypatch.setattr(ratelimit.RedisBackend, "lease", lease)
    state = leases.check(key, (1000, 60))
    assert (other_thread[0].remaining, state.remaining) == (996, 995)
    assert counted_in_redis(key) == 5 + len(leases._leases[key].unused)
