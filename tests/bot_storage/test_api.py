"""PUT, GET and DELETE /bot_storage: bots only, each bot its own keys, a missing key refusing the whole
request, the size limit, and one indexed query per request whatever the number of keys."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.bot_storage.models import BotStorageEntry, BotStorageUsage
from tests.api import api_for, assert_error, assert_success
from tests.factories import BotFactory


def stored(bot) -> dict[str, str]:
    return dict(BotStorageEntry.objects.filter(bot=bot).values_list("key", "value"))


def db_state() -> dict:
    """Every row the endpoints write: equal before and after a refused request."""
    return {
        "entries": list(BotStorageEntry.objects.order_by("id").values()),
        "usage": list(BotStorageUsage.objects.order_by("bot").values()),
    }


def call(user, method: str, params: dict):
    """A request as clients send it: GET's parameters in the query string, the others' in the body."""
    api = api_for(user)
    return api.get("/bot_storage", params) if method == "GET" else api.request(method, "/bot_storage", params)


def put(bot, storage: dict):
    return api_for(bot).put("/bot_storage", {"storage": storage})


def test_put_get_and_delete(bot):
    assert assert_success(put(bot, {"number": "0", "message_id": "null"})) == {"result": "success", "msg": ""}
    assert_success(put(bot, {"number": "1", "topic": '"plans"'}))
    assert stored(bot) == {"number": "1", "message_id": "null", "topic": '"plans"'}

    everything = assert_success(api_for(bot).get("/bot_storage"))
    assert everything == {
        "result": "success",
        "msg": "",
        "storage": {"message_id": "null", "number": "1", "topic": '"plans"'},
    }
    some = assert_success(api_for(bot).get("/bot_storage", {"keys": ["number", "topic", "number"]}))
    assert some["storage"] == {"number": "1", "topic": '"plans"'}

    assert_success(api_for(bot).delete("/bot_storage", {"keys": ["number"]}))
    assert stored(bot) == {"message_id": "null", "topic": '"plans"'}
    assert_success(api_for(bot).delete("/bot_storage"))
    assert stored(bot) == {}
    assert assert_success(api_for(bot).get("/bot_storage"))["storage"] == {}


def test_no_keys_are_no_keys_and_null_every_key(bot):
    """As Zulip's: an empty list reads and deletes nothing (the bots QA pass: it deleted every key),
    null is every key, as leaving `keys` out is."""
    assert_success(put(bot, {"a": "1", "b": "2"}))
    assert assert_success(api_for(bot).get("/bot_storage", {"keys": "[]"}))["storage"] == {}
    assert_success(api_for(bot).delete("/bot_storage", {"keys": "[]"}))
    assert stored(bot) == {"a": "1", "b": "2"}
    assert assert_success(api_for(bot).get("/bot_storage", {"keys": "null"}))["storage"] == {"a": "1", "b": "2"}
    assert_success(api_for(bot).delete("/bot_storage", {"keys": "null"}))
    assert stored(bot) == {}


def test_a_missing_key_refuses_the_whole_request(bot):
    assert_success(put(bot, {"kept": "yes", "also": "yes"}))
    assert_error(
        api_for(bot).get("/bot_storage", {"keys": ["kept", "nope"]}), 400, "BAD_REQUEST", "Key does not exist."
    )
    before = db_state()
    assert_error(
        api_for(bot).delete("/bot_storage", {"keys": ["kept", "nope"]}), 400, "BAD_REQUEST", "Key does not exist."
    )
    assert db_state() == before
    assert stored(bot) == {"kept": "yes", "also": "yes"}


@pytest.mark.parametrize("role", ["owner", "admin", "member", "guest"])
def test_people_are_refused(request, role, bot):
    person = request.getfixturevalue(role)
    assert_success(put(bot, {"k": "v"}))
    before = db_state()
    for method, params in (
        ("PUT", {"storage": {"k": "theirs"}}),
        ("GET", {}),
        ("DELETE", {"keys": ["k"]}),
        ("DELETE", {}),
    ):
        response = call(person, method, params)
        assert_error(response, 403, "PERMISSION_DENIED", "This endpoint is only available to bots.")
    assert db_state() == before


def test_each_bot_sees_only_its_own_keys(bot, realm, member, foreign_user):
    other = BotFactory(realm=realm, bot_owner=member)
    foreign_bot = BotFactory(realm=foreign_user.realm, bot_owner=foreign_user)
    assert_success(put(bot, {"shared name": "mine"}))
    assert_success(put(other, {"shared name": "other's", "only theirs": "x"}))
    assert_success(put(foreign_bot, {"shared name": "foreign"}))

    assert assert_success(api_for(bot).get("/bot_storage"))["storage"] == {"shared name": "mine"}
    assert_error(api_for(bot).get("/bot_storage", {"keys": ["only theirs"]}), 400, "BAD_REQUEST", "Key does not exist.")
    assert_error(
        api_for(bot).delete("/bot_storage", {"keys": ["only theirs"]}), 400, "BAD_REQUEST", "Key does not exist."
    )
    assert_success(api_for(bot).delete("/bot_storage"))
    assert stored(bot) == {}
    assert stored(other) == {"shared name": "other's", "only theirs": "x"}
    assert stored(foreign_bot) == {"shared name": "foreign"}


def test_unauthenticated_is_refused(realm, anonymous):
    assert_error(anonymous.get("/bot_storage"), 401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    ("params", "code", "msg"),
    [
        ({}, "REQUEST_VARIABLE_MISSING", "Missing 'storage' argument"),
        ({"storage": "not json"}, "REQUEST_VARIABLE_INVALID", "storage is not valid JSON"),
        ({"storage": ["a", "b"]}, "REQUEST_VARIABLE_INVALID", "storage is not a dict"),
        ({"storage": {"k": 1}}, "REQUEST_VARIABLE_INVALID", 'storage["k"] is not a string'),
        ({"storage": {"k": None}}, "REQUEST_VARIABLE_INVALID", 'storage["k"] is not a string'),
        ({"storage": {"k": "a\x00b"}}, "REQUEST_VARIABLE_INVALID", 'storage["k"] must not contain null bytes'),
        ({"storage": {"k\x00": "v"}}, "REQUEST_VARIABLE_INVALID", 'storage["k\\u0000"] must not contain null bytes'),
    ],
)
def test_bad_storage_is_refused(bot, params, code, msg):
    assert_success(put(bot, {"k": "v"}))
    before = db_state()
    assert_error(api_for(bot).put("/bot_storage", params), 400, code, msg)
    assert db_state() == before


@pytest.mark.parametrize(
    ("keys", "msg"),
    [("number", "keys is not valid JSON"), ({"a": "b"}, "keys is not a list"), ([1], "keys[0] is not a string")],
)
def test_bad_keys_are_refused(bot, keys, msg):
    assert_success(put(bot, {"number": "1"}))
    before = db_state()
    for method in ("GET", "DELETE"):
        assert_error(call(bot, method, {"keys": keys}), 400, "REQUEST_VARIABLE_INVALID", msg)
    assert db_state() == before


def test_long_and_unusual_keys(bot):
    long_key = "é" * 5000  # longer than a PostgreSQL index entry can hold: found by its digest
    keys = {long_key: "long", "": "empty key", "emoji 🎉": "", "Number": "upper", "number": "lower"}
    assert_success(put(bot, keys))
    assert assert_success(api_for(bot).get("/bot_storage", {"keys": [long_key, ""]}))["storage"] == {
        long_key: "long",
        "": "empty key",
    }
    assert assert_success(api_for(bot).get("/bot_storage"))["storage"] == keys
    assert_success(api_for(bot).delete("/bot_storage", {"keys": [long_key, "Number"]}))
    assert stored(bot) == {"": "empty key", "emoji 🎉": "", "number": "lower"}


def test_size_limit(bot, monkeypatch):
    monkeypatch.setattr(BotStorageEntry, "MAX_CHARACTERS_PER_BOT", 20)
    assert_success(put(bot, {"abc": "0123456789"}))  # 13 characters
    before = db_state()
    assert_error(
        put(bot, {"de": "012345", "f": "g"}),  # 13 + 8 + 2 = 23
        400,
        "BAD_REQUEST",
        "Request exceeds storage limit by 3 characters. The limit is 20 characters.",
    )
    assert db_state() == before
    # Replacing a value counts the difference: 3 + 17 = 20 fits exactly.
    assert_success(put(bot, {"abc": "0" * 17}))
    assert_error(
        put(bot, {"x": ""}),
        400,
        "BAD_REQUEST",
        "Request exceeds storage limit by 1 characters. The limit is 20 characters.",
    )
    # Deleting frees the space.
    assert_success(api_for(bot).delete("/bot_storage", {"keys": ["abc"]}))
    assert_success(put(bot, {"xy": "z" * 18}))
    assert_success(api_for(bot).delete("/bot_storage"))
    assert_success(put(bot, {"a" * 10: "b" * 10}))
    assert BotStorageUsage.objects.get(bot=bot).characters == 20


def test_the_real_limit_is_zulips(bot):
    """10,000,000 characters, filled in requests a form body can carry (Django's 2.5 MB each)."""
    assert BotStorageEntry.MAX_CHARACTERS_PER_BOT == 10_000_000
    for n in range(5):
        assert_success(put(bot, {f"k{n}": "v" * 1_999_998}))
    assert BotStorageUsage.objects.get(bot=bot).characters == 10_000_000
    assert_error(
        put(bot, {"k": ""}),
        400,
        "BAD_REQUEST",
        "Request exceeds storage limit by 1 characters. The limit is 10000000 characters.",
    )
    assert_success(put(bot, {"k0": "v"}))  # a smaller value fits


def test_one_indexed_query_per_request_whatever_the_number_of_keys(bot):
    assert_success(put(bot, {f"key {n}": str(n) for n in range(50)}))
    for keys in (["key 1"], [f"key {n}" for n in range(40)]):
        with CaptureQueriesContext(connection) as queries:
            body = assert_success(api_for(bot).get("/bot_storage", {"keys": keys}))
        assert len(body["storage"]) == len(keys)
        storage_queries = [q["sql"] for q in queries if "bot_storage_botstorageentry" in q["sql"]]
        assert len(storage_queries) == 1
        assert '"key_digest" IN' in storage_queries[0]


def test_writes_take_the_same_queries_for_one_key_or_many(bot):
    assert_success(put(bot, {"warm": "up"}))

    def count(storage: dict) -> int:
        with CaptureQueriesContext(connection) as queries:
            assert_success(put(bot, storage))
        return sum("bot_storage_" in q["sql"] for q in queries)

    assert count({"one": "1"}) == count({f"many {n}": "x" for n in range(30)})
