"""The has_alert_word flag: which messages contain a recipient's alert words (Zulip's matching:
whole words, in any case, with its punctuation, never inside fenced code), who gets the flag (the
recipients, never the sender), the message event's flags, and `is:alerted` narrows."""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.messages.alert_words import alerted_user_ids
from apps.messages.models import UserMessage
from tests.api import assert_success
from tests.factories import UserFactory
from tests.messages.conftest import api, flags_of, message_ids

ALERT, READ = UserMessage.HAS_ALERT_WORD, UserMessage.READ


def words(user, *alert_words):
    assert_success(api(user).post("/users/me/alert_words", {"alert_words": list(alert_words)}))


def alerts(content: str, *alert_words: str) -> bool:
    """Whether a message of `content` alerts a user with these words."""
    return alerted_user_ids(content, {word.lower(): {7} for word in alert_words}) == {7}


# --- Zulip's matching ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "Normal alert one time",  # Zulip's test_alert_flags
        "Normal alert one",
        "one normal alert",
        "This one? should alert",
        "Definitely time for one.",
        "One two three o'clock",
        "Case of ONE, won't stop me",
        "(one)",
        "[one]",
        '"one"',
        "'one'",
        "*one*",
        "**one**",
        "`one`",
        "> one",
        ">one",
        "one!",
        "one:",
        "one;",
        "line\none\nline",
        "tab\tone",
        "one\r\nnext",
        "- one",
        "@**one**",  # a mention's name is text, as in Zulip
    ],
)
def test_a_whole_word_alerts(content):
    assert alerts(content, "one")


@pytest.mark.parametrize(
    "content",
    [
        "Don't alert on clone, twofold or seventytwofold",
        "Don't alert on http://t.co/one/ URLs",
        "Don't alert on http://t.co/one URLs",
        "ones",
        "oneself",
        "someone",
        "one-time",  # "-" does not end a word
        "#one",
        "@one",
        "one/two",
        "one_two",
        "xone",  # the second character (Zulip's check of the first is off by one: not copied)
        "```\none\n```",  # fenced code is not looked in, as in Zulip
        "~~~\nsay one\n~~~",
        "> ```\n> one\n> ```",
        "```\nnever closed\none",
        "",
    ],
)
def test_a_word_inside_another_or_inside_fenced_code_does_not(content):
    assert not alerts(content, "one")


def test_inline_code_and_text_around_fenced_code_alert():
    assert alerts("```\nx\n```\nnow one", "one")
    assert alerts("see `one` here", "one")


@pytest.mark.parametrize(
    ("content", "word"),
    [
        ("the multi-word phrase is here", "multi-word phrase"),
        ("MULTI-WORD Phrase.", "multi-word phrase"),
        ("a ☃ falls", "☃"),
        ("Été arrive", "été"),
        ("ÉTÉ!", "Été"),
        ("straße gesperrt", "Straße"),
        ("Привет, мир", "привет"),
        ("e.g. this", "e.g."),
        ("it's done", "it's"),
        ("İstanbul calling", "İstanbul"),  # str.lower lengthens it: both sides alike
    ],
)
def test_phrases_punctuation_and_unicode_in_any_case(content, word):
    assert alerts(content, word)


def test_unicode_letters_are_not_boundaries():
    assert not alerts("naïveté", "na")
    assert not alerts("straßen", "straße")
    assert not alerts("Приветик", "привет")


def test_only_the_users_whose_words_are_found():
    users_by_key = {"deploy": {1, 2}, "outage": {3}, "multi word": {4}, "ship": {5}}
    assert alerted_user_ids("Deploy after the multi word outage", users_by_key) == {1, 2, 3, 4}
    assert alerted_user_ids("nothing here", users_by_key) == set()
    assert alerted_user_ids("deploy", {}) == set()


def test_a_long_message_against_many_words_takes_little_time():
    """The work is bounded by the message: at each place a word may start, one lookup per distinct
    length of the words. Words of every length that never match, against the longest message made
    of places a word may start, is the worst case."""
    hostile = {"." * length + "x": {1} for length in range(1, 100)}
    many = {f"word{n}": {n} for n in range(50_000)}
    started = time.monotonic()
    assert alerted_user_ids("." * 10_000, hostile) == set()
    assert alerted_user_ids("word " * 2000, many) == set()
    assert alerted_user_ids("(" * 5000 + "a" * 5000, {"a" * k: {k} for k in range(1, 100)}) == set()
    assert time.monotonic() - started < 5  # about 0.3 s here; quadratic work would take minutes


# --- the flag on send ---------------------------------------------------------------------------------


@pytest.fixture
def design(make_stream, member, admin, owner, guest):
    return make_stream("design", member, admin, owner, guest)


def test_recipients_with_a_word_get_the_flag_others_do_not(design, send, member, admin, owner, guest):
    words(admin, "deploy")
    words(owner, "outage", "Deploy")
    words(guest, "lunch")
    message = send(member, design, "Deploy is done!")
    assert flags_of(admin, message) & ALERT
    assert flags_of(owner, message) & ALERT
    assert not flags_of(guest, message) & ALERT
    assert not flags_of(member, message) & ALERT
    # Another message, another set of words found.
    other = send(member, design, "lunch?")
    assert [bool(flags_of(user, other) & ALERT) for user in (admin, owner, guest)] == [False, False, True]


def test_direct_messages_alert_their_people(send, member, admin, owner, moderator):
    words(admin, "deploy")
    words(moderator, "deploy")  # not one of the message's people
    one = send(member, [admin], "deploy now")
    group = send(member, [admin, owner], "DEPLOY now")
    assert flags_of(admin, one) & ALERT
    assert flags_of(admin, group) & ALERT
    assert flags_of(moderator, one) is None


def test_never_the_sender(design, send, member, admin):
    words(member, "deploy")
    words(admin, "deploy")
    message = send(member, design, "deploy")
    assert not flags_of(member, message) & ALERT
    assert flags_of(admin, message) & ALERT
    to_self = send(member, [member], "deploy")  # a note to self alerts nobody
    assert flags_of(member, to_self) == READ


def test_a_muted_sender_alerts_but_arrives_read(design, send, member, admin):
    """As Zulip: muting marks the message read; its flags (mentions, alert words) stay."""
    words(admin, "deploy")
    assert_success(api(admin).post(f"/users/me/muted_users/{member.id}"))
    message = send(member, design, "deploy")
    assert flags_of(admin, message) == READ | ALERT


def test_whole_words_only_over_the_api(design, send, member, admin):
    words(admin, "one", "☃", "multi-word phrase")
    alerting = [
        send(member, design, "Case of ONE, won't stop me"),
        send(member, design, "it's a ☃!"),
        send(member, design, "(the MULTI-WORD phrase)"),
    ]
    quiet = [
        send(member, design, "clone, twofold"),
        send(member, design, "http://t.co/one/"),
        send(member, design, "```\none\n```"),
    ]
    assert [bool(flags_of(admin, m) & ALERT) for m in alerting + quiet] == [True, True, True, False, False, False]


def test_words_removed_alert_no_more(design, send, member, admin):
    words(admin, "deploy")
    first = send(member, design, "deploy")
    assert_success(api(admin).delete("/users/me/alert_words", {"alert_words": ["DEPLOY"]}))
    second = send(member, design, "deploy")
    assert flags_of(admin, first) & ALERT  # what was flagged stays flagged
    assert not flags_of(admin, second) & ALERT


def test_the_message_event_carries_the_flag(capture_events, design, send, member, admin, owner):
    words(admin, "deploy")
    with capture_events(admin, owner, member, event_types=["message"]) as received:
        message = send(member, design, "deploy")
    [to_admin], [to_owner], [to_member] = received[admin.id], received[owner.id], received[member.id]
    assert to_admin["message"]["id"] == message
    assert to_admin["flags"] == ["has_alert_word"]
    assert to_owner["flags"] == []
    assert to_member["flags"] == ["read"]


def test_get_messages_shows_the_flag(design, send, member, admin):
    words(admin, "deploy")
    message = send(member, design, "deploy")
    body = assert_success(api(admin).get(f"/messages/{message}"))
    assert body["message"]["flags"] == ["has_alert_word"]


def test_is_alerted_finds_them(design, send, member, admin, owner):
    words(admin, "deploy")
    words(owner, "outage")
    alerted = send(member, design, "deploy")
    mentioned = send(member, design, "@**Adam Admin** hi")
    dm = send(member, [admin], "deploy?")
    send(member, design, "outage")
    assert message_ids(admin, [{"operator": "is", "operand": "alerted"}]) == [alerted, dm]
    assert mentioned not in message_ids(admin, [{"operator": "is", "operand": "alerted"}])
    negated = message_ids(admin, [{"operator": "is", "operand": "alerted", "negated": True}])
    assert alerted not in negated
    assert mentioned in negated
    assert message_ids(member, [{"operator": "is", "operand": "alerted"}]) == []


def test_a_send_reads_every_recipients_words_in_one_query(realm, make_stream, member):
    people = [UserFactory(realm=realm) for _ in range(30)]
    stream = make_stream("all", member, *people)
    for n, person in enumerate(people[:3]):
        words(person, f"word{n}", "shared")
    api(member).post("/messages", {"type": "stream", "to": "all", "topic": "t", "content": "first"})

    def queries_reading_words() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert_success(
                api(member).post("/messages", {"type": "stream", "to": "all", "topic": "t", "content": "shared word2"})
            )
        return sum('FROM "chat_messages_alertword"' in query["sql"] for query in queries)

    assert queries_reading_words() == 1
    for n, person in enumerate(people[3:]):
        words(person, f"more{n}", f"other{n}")
    assert queries_reading_words() == 1
    newest = UserMessage.objects.filter(message__stream=stream).order_by("-message_id").first().message_id
    rows = UserMessage.objects.filter(message_id=newest).values_list("user_id", "flags")
    assert {user_id for user_id, flags in rows if flags & ALERT} == {person.id for person in people[:3]}
