"""Names and emails a client sends are compared case-insensitively however long they are: a value
longer than anything stored is simply not found (SQLite refused them as LIKE patterns past 50,000
bytes, and the request answered 503 as if the database were down)."""

from tests.api import ApiClient, assert_error, assert_success

LONG = "x" * 60_000


def test_a_very_long_name_or_email_is_not_found(member):
    api = ApiClient(member)
    assert_success(api.post("/users/me/subscriptions", {"subscriptions": [{"name": "general"}]}))
    assert_error(api.get("/get_stream_id", {"stream": LONG}), 400, "BAD_REQUEST", f"Invalid channel name '{LONG}'")
    assert_error(api.get(f"/users/{LONG}@example.com"), 400, "BAD_REQUEST", "No such user")
    narrow = [{"operator": "channel", "operand": LONG}]
    response = api.get("/messages", {"anchor": "newest", "num_before": 1, "num_after": 0, "narrow": narrow})
    assert_error(response, 400, "BAD_NARROW", f"Invalid narrow operator: unknown channel {LONG}")


def test_case_insensitive_lookups_fold_case_and_take_wildcards_literally(member):
    api = ApiClient(member)
    assert_success(api.post("/users/me/subscriptions", {"subscriptions": [{"name": "General_%"}]}))
    assert assert_success(api.get("/get_stream_id", {"stream": "gENERAL_%"}))["stream_id"]
    assert_error(api.get("/get_stream_id", {"stream": "generalx%"}), 400, "BAD_REQUEST")
    assert_error(api.get("/get_stream_id", {"stream": "General__"}), 400, "BAD_REQUEST")
    assert assert_success(api.get(f"/users/{member.delivery_email.upper()}"))["user"]["user_id"] == member.id
