"""GET /messages/matches_narrow: which of the given messages match a narrow, with search hits
wrapped in `<span class="highlight">` in the rendered content and the HTML-escaped topic."""

import pytest
from django.db import connection

from tests.api import ApiClient, assert_error, assert_success

HL = '<span class="highlight">{}</span>'.format


@pytest.fixture
def design(make_stream, member, admin):
    return make_stream("design", member, admin)


def matches(user, ids, narrow):
    body = assert_success(ApiClient(user).get("/messages/matches_narrow", {"msg_ids": ids, "narrow": narrow}))
    return body["messages"]


def test_only_matching_messages_get_an_entry(design, send, member, admin):
    lunch = send(member, design, "pizza", topic="lunch")
    dinner = send(member, design, "pasta", topic="dinner")
    dm = send(member, [admin], "pizza too")
    result = matches(admin, [lunch, dinner, dm], [["topic", "lunch"]])
    assert result == {str(lunch): {"match_content": "<p>pizza</p>", "match_subject": "lunch"}}
    assert matches(admin, [lunch, dinner, dm], [{"operator": "is", "operand": "dm"}]) == {
        str(dm): {"match_content": "<p>pizza too</p>", "match_subject": ""}
    }
    assert set(matches(admin, [lunch, dinner, dm], [])) == {str(lunch), str(dinner), str(dm)}


def test_search_hits_are_highlighted_in_content_and_topic(design, send, member, admin):
    message_id = send(member, design, "Pizza **party** at noon", topic="pizza plans")
    result = matches(admin, [message_id], [["search", "pizza"]])
    assert result == {
        str(message_id): {
            "match_content": f"<p>{HL('Pizza')} <strong>party</strong> at noon</p>",
            "match_subject": f"{HL('pizza')} plans",
        }
    }


def test_search_highlights_every_word_and_words_they_begin(design, send, member, admin):
    message_id = send(member, design, "walking to the party, then walk home", topic="t")
    [entry] = matches(admin, [message_id], [["search", "walk party"]]).values()
    assert entry["match_content"] == f"<p>{HL('walking')} to the {HL('party')}, then {HL('walk')} home</p>"


def test_search_never_highlights_inside_tags_or_character_references(design, send, member, admin):
    message_id = send(member, design, "R&D amp [link](https://amp.example/amp) amp", topic="a <amp> & b")
    [entry] = matches(admin, [message_id], [["search", "amp"]]).values()
    assert entry["match_content"] == (
        f'<p>R&amp;D {HL("amp")} <a href="https://amp.example/amp" rel="noopener noreferrer">link</a> {HL("amp")}</p>'
    )
    assert entry["match_subject"] == f"a &lt;{HL('amp')}&gt; &amp; b"


def test_topic_is_html_escaped_without_search(design, send, member, admin):
    message_id = send(member, design, "x", topic="<b>bold</b> & more")
    [entry] = matches(admin, [message_id], [["channel", "design"]]).values()
    assert entry["match_subject"] == "&lt;b&gt;bold&lt;/b&gt; &amp; more"


def test_negated_search_highlights_nothing(design, send, member, admin):
    pizza = send(member, design, "pizza", topic="t")
    pasta = send(member, design, "pasta", topic="t")
    result = matches(admin, [pizza, pasta], [{"operator": "search", "operand": "pizza", "negated": True}])
    assert result == {str(pasta): {"match_content": "<p>pasta</p>", "match_subject": "t"}}


def test_flag_terms_use_the_requesters_flags(design, send, member, admin):
    read = send(member, design, "one")
    unread = send(member, design, "two")
    assert_success(ApiClient(admin).post("/messages/flags", {"messages": [read], "op": "add", "flag": "read"}))
    assert list(matches(admin, [read, unread], [["is", "unread"]])) == [str(unread)]
    # The sender's copies are read.
    assert matches(member, [read, unread], [["is", "unread"]]) == {}


def test_mentions_stay_in_match_content(design, send, member, admin):
    message_id = send(member, design, "@**Adam Admin** lunch?", topic="t")
    [entry] = matches(admin, [message_id], [["search", "lunch"]]).values()
    assert entry["match_content"] == (
        f'<p><span class="user-mention" data-user-id="{admin.id}">@Adam Admin</span> {HL("lunch")}?</p>'
    )


def test_unknown_ids_get_no_entry(design, send, member, admin):
    message_id = send(member, design, "pizza")
    assert list(matches(admin, [987654321, message_id], [["search", "pizza"]])) == [str(message_id)]
    assert matches(admin, [], [["search", "pizza"]]) == {}


def test_bad_narrow_is_refused(design, send, member, admin):
    message_id = send(member, design, "pizza")
    response = ApiClient(admin).get("/messages/matches_narrow", {"msg_ids": [message_id], "narrow": [["is", "shiny"]]})
    assert_error(response, 400, "BAD_NARROW", "Invalid narrow operator: unknown 'is' operand")


def test_missing_or_malformed_parameters_are_refused(design, send, member, admin):
    api = ApiClient(admin)
    response = api.get("/messages/matches_narrow", {"narrow": []})
    assert_error(response, 400, "REQUEST_VARIABLE_MISSING", "Missing 'msg_ids' argument")
    response = api.get("/messages/matches_narrow", {"msg_ids": [1]})
    assert_error(response, 400, "REQUEST_VARIABLE_MISSING", "Missing 'narrow' argument")
    response = api.get("/messages/matches_narrow", {"msg_ids": '["x"]', "narrow": []})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID")


def words(count: int, prefix: str = "word") -> str:
    return " ".join(f"{prefix}{n}" for n in range(count))


@pytest.mark.parametrize(
    "narrow",
    [
        [["search", words(101)]],
        [["search", words(60, "a")], {"operator": "search", "operand": words(41, "b"), "negated": True}],
    ],
    ids=["one term", "two terms"],
)
def test_a_search_of_more_than_100_different_words_is_refused(design, send, member, admin, narrow):
    message_id = send(member, design, "word1 word2", topic="t")
    msg = "Invalid narrow operator: search has too many words (limit: 100)"
    api = ApiClient(admin)
    assert_error(
        api.get("/messages/matches_narrow", {"msg_ids": [message_id], "narrow": narrow}), 400, "BAD_NARROW", msg
    )
    fetch = {"anchor": "newest", "num_before": 10, "num_after": 0, "narrow": narrow}
    assert_error(api.get("/messages", fetch), 400, "BAD_NARROW", msg)
    flags = {"anchor": "oldest", "num_before": 0, "num_after": 10, "narrow": narrow, "op": "add", "flag": "starred"}
    assert_error(api.post("/messages/flags/narrow", flags), 400, "BAD_NARROW", msg)


def test_a_search_of_100_different_words_is_served(design, send, member, admin):
    message_id = send(member, design, f"{words(100)} and more", topic="t")
    [entry] = matches(admin, [message_id], [["search", words(100)]]).values()
    assert entry["match_content"] == "<p>" + " ".join(HL(word) for word in words(100).split()) + " and more</p>"
    # Repeating words adds none: 1,400 of them are one word.
    [entry] = matches(admin, [message_id], [["search", " ".join(["word99"] * 1400)]]).values()
    assert entry["match_content"].count("highlight") == 1


def test_highlighting_takes_the_words_of_the_text_that_begin_with_a_search_word(design, send, member, admin):
    message_id = send(member, design, "Partying partly, PARTS of a counterpart; part_time_job", topic="t")
    [entry] = matches(admin, [message_id], [["search", "part party"]]).values()
    assert entry["match_content"] == (
        f"<p>{HL('Partying')} {HL('partly')}, {HL('PARTS')} of a counterpart; {HL('part_time_job')}</p>"
    )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite searches substrings, without stems")
def test_postgresql_highlights_the_words_its_stemmed_search_matched(design, send, member, admin):
    fox = send(member, design, "The quick brown fox jumps", topic="running foxes")
    foxes = send(member, design, "Foxes are running", topic="t")
    result = matches(admin, [fox, foxes], [["search", "foxes run"]])
    assert result[str(foxes)]["match_content"] == f"<p>{HL('Foxes')} are {HL('running')}</p>"
    assert result[str(fox)]["match_subject"] == f"{HL('running')} {HL('foxes')}"
    assert result[str(fox)]["match_content"] == f"<p>The quick brown {HL('fox')} jumps</p>"
    # GET /messages with the same narrow highlights the same words.
    body = assert_success(
        ApiClient(admin).get("/messages", {"anchor": "newest", "num_before": 10, "narrow": [["search", "foxes run"]]})
    )
    assert {m["id"]: m["match_content"] for m in body["messages"]} == {
        fox: result[str(fox)]["match_content"],
        foxes: result[str(foxes)]["match_content"],
    }
