"""Where pings are kept: Redis when REDIS_URL is set (any server process answers from it), else the
database (the embedded mode). One interface, two stores; actions write through `ping`, selectors
read through `changed_since` and `of_user`.

A ping is one cheap write, and most pings write nothing: a stored time moves forward at most every
UPDATE_MIN_FREQ_SECS. With Redis a ping is one round trip (a script that reads the user's times,
moves them and numbers the change); in the database it is one transaction on the user's row.
10,000 users pinging every 60 s are ~170 pings a second: benchmarks/presence has the figures.

Times are whole UNIX seconds, as the API gives them."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction

from apps.core.redis_client import get_redis, redis_guarded, redis_key
from apps.presence.limits import UPDATE_MIN_FREQ_SECS
from apps.presence.models import UserPresence

MAX_UPDATE_ID = 2**63 - 1


@dataclass(frozen=True)
class PresenceTimes:
    """A user's stored presence: last active (None: never, only idle pings), last connected, and
    the number of the organization's change that last moved them."""

    user_id: int
    active: int | None
    connected: int
    update_id: int


@dataclass(frozen=True)
class Ping:
    """What a ping did: the times before it (None: the user's first) and after it."""

    before: PresenceTimes | None
    after: PresenceTimes

    @property
    def written(self) -> bool:
        return self.before != self.after


def advanced(before: PresenceTimes | None, user_id: int, now: int, active: bool) -> PresenceTimes:
    """The times after a ping at `now` (update_id unchanged: the store numbers a change)."""
    if before is None:
        return PresenceTimes(user_id, now if active else None, now, -1)
    connected = now if now - before.connected > UPDATE_MIN_FREQ_SECS else before.connected
    last_active = before.active
    if active and (last_active is None or now - last_active > UPDATE_MIN_FREQ_SECS):
        last_active = now
    return replace(before, active=last_active, connected=connected)


class DatabaseStore:
    """UserPresence rows, numbered by PresenceSequence: the embedded mode."""

    @transaction.atomic(savepoint=False)
    def ping(self, realm_id: int, user_id: int, now: int, active: bool) -> Ping:
        row = UserPresence.objects.select_for_update().filter(user_id=user_id).first()
        before = _times_of_row(row) if row is not None else None
        after = advanced(before, user_id, now, active)
        if after == before:
            return Ping(before, after)
        after = replace(after, update_id=self._next_update_id(realm_id))
        UserPresence.objects.bulk_create(
            [
                UserPresence(
                    user_id=user_id,
                    realm_id=realm_id,
                    last_connected_time=_datetime(after.connected),
                    last_active_time=_datetime(after.active) if after.active is not None else None,
                    last_update_id=after.update_id,
                )
            ],
            update_conflicts=True,
            unique_fields=["user"],
            update_fields=["last_connected_time", "last_active_time", "last_update_id"],
        )
        return Ping(before, after)

    @staticmethod
    def _next_update_id(realm_id: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO presence_presencesequence (realm_id, last_update_id) VALUES (%s, 1) "
                "ON CONFLICT (realm_id) DO UPDATE "
                "SET last_update_id = presence_presencesequence.last_update_id + 1 RETURNING last_update_id",
                [realm_id],
            )
            return cursor.fetchone()[0]

    def changed_since(self, realm_id: int, *, after_update_id: int | None, connected_since: int | None):
        rows = UserPresence.objects.filter(realm_id=realm_id)
        if after_update_id is not None:
            rows = rows.filter(last_update_id__gt=min(after_update_id, MAX_UPDATE_ID))
        if connected_since is not None:
            rows = rows.filter(last_connected_time__gte=_datetime(connected_since))
        return [_times_of_row(row) for row in rows]

    def of_user(self, realm_id: int, user_id: int) -> PresenceTimes | None:
        row = UserPresence.objects.filter(user_id=user_id, realm_id=realm_id).first()
        return _times_of_row(row) if row is not None else None


# KEYS: the organization's hash (user id -> "active:connected:update_id", active -1 for never),
# its sorted set of user ids by update id, its counter. ARGV: user id, now, 1 if active, min freq.
# Returns the times before (active, connected, update_id; connected -1 for no row) and after.
_PING_LUA = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
local now = tonumber(ARGV[2])
local min_freq = tonumber(ARGV[4])
local act, con, uid = -1, -1, -1
if old then
  local a, c, u = string.match(old, '^(-?%d+):(-?%d+):(-?%d+)$')
  act, con, uid = tonumber(a), tonumber(c), tonumber(u)
end
local new_act, new_con = act, con
if con < 0 or now - con > min_freq then new_con = now end
if ARGV[3] == '1' and (act < 0 or now - act > min_freq) then new_act = now end
if new_act == act and new_con == con then return {act, con, uid, act, con, uid} end
local new_uid = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[1], ARGV[1], new_act .. ':' .. new_con .. ':' .. new_uid)
redis.call('ZADD', KEYS[2], new_uid, ARGV[1])
return {act, con, uid, new_act, new_con, new_uid}
"""


class RedisStore:
    def __init__(self) -> None:
        self._script = None

    @staticmethod
    def _keys(realm_id: int) -> list[str]:
        return [redis_key("presence", realm_id, kind) for kind in ("times", "updates", "seq")]

    def ping(self, realm_id: int, user_id: int, now: int, active: bool) -> Ping:
        client = get_redis()
        if self._script is None:
            self._script = client.register_script(_PING_LUA)
        args = [user_id, now, "1" if active else "0", UPDATE_MIN_FREQ_SECS]
        with redis_guarded():
            answer = [int(n) for n in self._script(keys=self._keys(realm_id), args=args, client=client)]
        before = _times(user_id, *answer[:3]) if answer[1] >= 0 else None
        return Ping(before, _times(user_id, *answer[3:]))

    def changed_since(self, realm_id: int, *, after_update_id: int | None, connected_since: int | None):
        client = get_redis()
        times_key, updates_key, _ = self._keys(realm_id)
        with redis_guarded():
            if after_update_id is not None and after_update_id >= 0:
                user_ids = client.zrangebyscore(updates_key, f"({after_update_id}", "+inf")
                values = zip(user_ids, client.hmget(times_key, user_ids), strict=True) if user_ids else []
            else:
                values = client.hgetall(times_key).items()
        found = [_parse(int(user_id), value) for user_id, value in values if value is not None]
        if connected_since is not None:
            found = [times for times in found if times.connected >= connected_since]
        return found

    def of_user(self, realm_id: int, user_id: int) -> PresenceTimes | None:
        with redis_guarded():
            value = get_redis().hget(self._keys(realm_id)[0], user_id)
        return _parse(user_id, value) if value is not None else None


def _times(user_id: int, active: int, connected: int, update_id: int) -> PresenceTimes:
    return PresenceTimes(user_id, active if active >= 0 else None, connected, update_id)


def _parse(user_id: int, value: bytes) -> PresenceTimes:
    active, connected, update_id = (int(part) for part in value.split(b":"))
    return _times(user_id, active, connected, update_id)


def _times_of_row(row: UserPresence) -> PresenceTimes:
    active = int(row.last_active_time.timestamp()) if row.last_active_time is not None else None
    return PresenceTimes(row.user_id, active, int(row.last_connected_time.timestamp()), row.last_update_id)


def _datetime(timestamp: int) -> datetime:
    return datetime.fromtimestamp(timestamp, tz=UTC)


_database = DatabaseStore()
_redis = RedisStore()


def store() -> DatabaseStore | RedisStore:
    return _redis if settings.REDIS_URL else _database
