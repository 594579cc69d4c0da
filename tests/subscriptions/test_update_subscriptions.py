"""PATCH /users/me/subscriptions (Zulip's update_subscriptions): the caller joins `add` and leaves
`delete` in one request, all or nothing, and the answer is both answers in one."""

from apps.subscriptions.models import Stream
from tests.api import ApiClient, assert_error, assert_success
from tests.subscriptions.test_api import db_state, is_active_subscriber, refused


def update(user, **params):
    return ApiClient(user).patch("/users/me/subscriptions", params)


def test_joins_and_leaves_at_once(member, admin, make_stream, capture_events):
    design = make_stream("design", admin)
    old = make_stream("old", member)
    with capture_events(member, event_types=["subscription"]) as received:
        body = assert_success(update(member, add=[{"name": "design"}, {"name": "new", "color": "#aabbcc"}],
                                     delete=["old"]))  # fmt: skip
    assert body["subscribed"] == {str(member.id): ["design", "new"]}
    assert (body["already_subscribed"], body["removed"], body["not_removed"]) == ({}, ["old"], [])
    new = Stream.objects.get(name="new")
    assert is_active_subscriber(member, design)
    assert is_active_subscriber(member, new)
    assert not is_active_subscriber(member, old)
    ops = [event["op"] for event in received[member.id]]
    assert ops.count("add") == 1
    assert ops.count("remove") == 1


def test_either_list_alone(member, make_stream):
    make_stream("design", member)
    body = assert_success(update(member, delete=["design", "design"]))
    assert body == {"result": "success", "msg": "", "subscribed": {}, "already_subscribed": {},
                    "removed": ["design"], "not_removed": []}  # fmt: skip
    body = assert_success(update(member, add=[{"name": "design"}]))
    assert (body["subscribed"], body["removed"], body["not_removed"]) == ({str(member.id): ["design"]}, [], [])


def test_nothing_to_do(member):
    before = db_state()
    refused(update(member), 'Nothing to do. Specify at least one of "add" or "delete".', before)
    refused(update(member, add=[], delete=[]), 'Nothing to do. Specify at least one of "add" or "delete".', before)


def test_all_or_nothing(member, admin, make_stream):
    make_stream("design", admin)
    make_stream("mine", member)
    before = db_state()
    response = update(member, add=[{"name": "design"}, {"name": "brand new"}], delete=["mine", "nope"])
    refused(response, "Channel 'nope' does not exist", before, code="STREAM_DOES_NOT_EXIST")
    secret = make_stream("secret", admin, private=True)
    before = db_state()
    response = update(member, add=[{"name": secret.name}], delete=["mine"])
    assert_error(response, 400, "BAD_REQUEST")
    assert db_state() == before


def test_guests_leave_but_do_not_join(guest, admin, make_stream):
    make_stream("design", admin, guest)
    before = db_state()
    refused(update(guest, add=[{"name": "design"}]), "Not allowed for guest users", before)
    assert assert_success(update(guest, delete=["design"]))["removed"] == ["design"]


def test_bad_input(member):
    before = db_state()
    for params in ({"add": "[{"}, {"delete": "{}"}, {"add": '[{"color": "#000000"}]'}, {"delete": '["\\u0000"]'}):
        assert_error(ApiClient(member).patch("/users/me/subscriptions", params), 400, "REQUEST_VARIABLE_INVALID")
        assert db_state() == before
