"""Alert words over the API (GET, POST and DELETE /users/me/alert_words): Zulip's cleaning (stripped,
empty words ignored, one of each in any case), its length limit, Parley's cap, refusals that change
nothing, the alert_words event on every change and the alert_words state of POST /register."""

import pytest

from apps.messages.models import AlertWord
from tests.api import ApiClient, assert_error, assert_success
from tests.messages.conftest import api, db_state

PATH = "/users/me/alert_words"


def add(user, words):
    return api(user).post(PATH, {"alert_words": words})


def remove(user, words):
    return api(user).delete(PATH, {"alert_words": words})


def listed(user) -> list[str]:
    return assert_success(api(user).get(PATH))["alert_words"]


def refused(response, msg, before, code="BAD_REQUEST"):
    assert_error(response, 400, code, msg)
    assert db_state() == before


# --- the endpoints -------------------------------------------------------------------------------------


def test_a_user_starts_with_no_words(member):
    assert listed(member) == []


def test_adding_answers_and_keeps_every_word_in_order(member):
    assert assert_success(add(member, ["deploy", "multi-word phrase", "☃"]))["alert_words"] == [
        "deploy",
        "multi-word phrase",
        "☃",
    ]
    assert assert_success(add(member, ["outage"]))["alert_words"] == ["deploy", "multi-word phrase", "☃", "outage"]
    assert listed(member) == ["deploy", "multi-word phrase", "☃", "outage"]


def test_words_are_stripped_and_empty_ones_ignored(member):
    assert assert_success(add(member, ["one ", "\n two", "three", "", "   "]))["alert_words"] == ["one", "two", "three"]


def test_words_are_one_in_any_case_and_keep_their_first_spelling(member):
    assert assert_success(add(member, ["Deploy", "DEPLOY", "deploy"]))["alert_words"] == ["Deploy"]
    # Already there (in another case): ignored, as Zulip.
    assert assert_success(add(member, ["dEpLoY", " deploy "]))["alert_words"] == ["Deploy"]
    assert assert_success(add(member, ["Straße", "STRASSE", "ÉTÉ", "été"]))["alert_words"] == [
        "Deploy",
        "Straße",
        "STRASSE",  # str.lower keeps them apart, as Zulip's matching does
        "ÉTÉ",
    ]
    assert AlertWord.objects.get(user=member, word="ÉTÉ").key == "été"


def test_removing_answers_what_is_left_in_any_case(member):
    add(member, ["one", "Two", "three"])
    assert assert_success(remove(member, ["ONE", " two "]))["alert_words"] == ["three"]
    # Words the user does not have are ignored, as in Zulip.
    assert assert_success(remove(member, ["nothing", "", "x" * 500]))["alert_words"] == ["three"]
    assert listed(member) == ["three"]


def test_an_empty_list_changes_nothing(member):
    add(member, ["one"])
    before = db_state()
    assert assert_success(add(member, []))["alert_words"] == ["one"]
    assert assert_success(remove(member, []))["alert_words"] == ["one"]
    assert db_state() == before


def test_words_are_each_users_own(member, admin, foreign_user):
    add(member, ["deploy"])
    add(foreign_user, ["deploy", "other"])
    assert listed(admin) == []
    assert_success(remove(admin, ["deploy"]))
    assert listed(member) == ["deploy"]
    assert listed(foreign_user) == ["deploy", "other"]


def test_bots_and_guests_have_words_too(bot, guest):
    assert assert_success(add(bot, ["ping"]))["alert_words"] == ["ping"]
    assert assert_success(add(guest, ["help"]))["alert_words"] == ["help"]


def test_a_deleted_user_takes_their_words(member):
    add(member, ["deploy"])
    member.delete()
    assert not AlertWord.objects.exists()


# --- refusals ------------------------------------------------------------------------------------------


def test_a_word_longer_than_zulips_limit_as_sent_is_refused(member):
    add(member, ["kept"])
    before = db_state()
    too_long = "long" * 26
    refused(add(member, ["fine", too_long]), "alert_words[1] is too long (limit: 100 characters)", before,
            code="REQUEST_VARIABLE_INVALID")  # fmt: skip
    # The limit is on the word as sent, before stripping (Zulip's StringConstraints).
    refused(add(member, [" " + "x" * 100]), "alert_words[0] is too long (limit: 100 characters)", before,
            code="REQUEST_VARIABLE_INVALID")  # fmt: skip
    assert_success(add(member, ["y" * 100]))


@pytest.mark.parametrize(
    ("value", "msg"),
    [
        ('"deploy"', "alert_words is not a list"),
        ("deploy", "alert_words is not valid JSON"),
        ("[1]", "alert_words[0] is not a string"),
        ('[["a"]]', "alert_words[0] is not a string"),
        ('{"word": "a"}', "alert_words is not a list"),
        ('["a\\u0000b"]', "alert_words[0] must not contain null bytes"),
        ("null", "alert_words is not a list"),
    ],
)
def test_malformed_lists_are_refused(member, value, msg):
    before = db_state()
    refused(add(member, value), msg, before, code="REQUEST_VARIABLE_INVALID")
    refused(remove(member, value), msg, before, code="REQUEST_VARIABLE_INVALID")


def test_the_list_is_required(member):
    before = db_state()
    refused(api(member).post(PATH), "Missing 'alert_words' argument", before, code="REQUEST_VARIABLE_MISSING")
    refused(api(member).delete(PATH), "Missing 'alert_words' argument", before, code="REQUEST_VARIABLE_MISSING")


def test_a_list_of_more_words_than_a_request_takes_is_refused(member):
    before = db_state()
    msg = "alert_words has too many items (limit: 1000)"
    refused(add(member, ["same"] * 1001), msg, before, code="REQUEST_VARIABLE_INVALID")
    refused(remove(member, ["same"] * 1001), msg, before, code="REQUEST_VARIABLE_INVALID")


def test_a_user_has_at_most_the_cap_and_a_request_past_it_adds_nothing(member):
    cap = AlertWord.MAX_PER_USER
    assert len(assert_success(add(member, [f"word{n}" for n in range(cap - 1)]))["alert_words"]) == cap - 1
    before = db_state()
    refused(add(member, ["one more", "and another"]), f"Too many alert words (limit: {cap})", before)
    # Words the user has, repeated or in another case, do not count twice.
    assert len(assert_success(add(member, ["word0", "WORD1", "last", "Last"]))["alert_words"]) == cap
    assert_success(remove(member, ["last"]))
    assert len(assert_success(add(member, ["again"]))["alert_words"]) == cap


def test_no_credentials_no_words(anonymous, member):
    add(member, ["deploy"])
    for method in ("get", "post", "delete"):
        response = getattr(anonymous, method)(PATH, {"alert_words": ["x"]})
        assert_error(response, 401, "UNAUTHORIZED")
    assert listed(member) == ["deploy"]


# --- events and state -----------------------------------------------------------------------------------


def register_state(user, **params) -> dict:
    return assert_success(ApiClient(user).post("/register", params))


def test_register_always_has_the_list(member):
    assert register_state(member, fetch_event_types=["alert_words"])["alert_words"] == []
    assert register_state(member)["alert_words"] == []  # every type, as the mobile app registers
    add(member, ["Deploy", "outage"])
    assert register_state(member, fetch_event_types=["alert_words"])["alert_words"] == ["Deploy", "outage"]
    assert "alert_words" not in register_state(member, fetch_event_types=["muted_users"])


def test_every_change_tells_the_users_queues_the_whole_list(capture_events, member, admin):
    with capture_events(member, admin, event_types=["alert_words"]) as received:
        assert_success(add(member, ["deploy", "outage"]))
        assert_success(add(member, ["Deploy", "incident"]))
        assert_success(remove(member, ["DEPLOY"]))
    assert received[member.id] == [
        {"type": "alert_words", "alert_words": ["deploy", "outage"]},
        {"type": "alert_words", "alert_words": ["deploy", "outage", "incident"]},
        {"type": "alert_words", "alert_words": ["outage", "incident"]},
    ]
    assert received[admin.id] == []  # nobody else hears of them


def test_requests_that_change_nothing_send_nothing(capture_events, member):
    add(member, ["deploy"])
    with capture_events(member, event_types=["alert_words"]) as received:
        assert_success(add(member, ["DEPLOY", " "]))
        assert_success(remove(member, ["outage"]))
        assert_error(add(member, ["x" * 101]), 400, "REQUEST_VARIABLE_INVALID")
        assert_error(add(member, [f"w{n}" for n in range(AlertWord.MAX_PER_USER)]), 400, "BAD_REQUEST")
    assert received[member.id] == []


@pytest.mark.django_db(transaction=True)  # GET /events answers from another thread
def test_the_event_reaches_a_queue_over_get_events(queue_of, member):
    events = queue_of(member, event_types=["alert_words"])
    assert_success(add(member, ["deploy"]))
    assert events() == [{"type": "alert_words", "alert_words": ["deploy"]}]
