"""apps.linkifiers.patterns on its own: what an administrator's linkifier must satisfy, and what a
set of linkifiers links in a text (Zulip's boundaries, order and overlaps, topic links)."""

import pytest

from apps.linkifiers.patterns import (
    MAX_ALTERNATIVE_URL_TEMPLATES,
    MAX_PATTERN_LENGTH,
    CompiledLinkifier,
    LinkifierFields,
    LinkifierInvalid,
    LinkifierRules,
    check_linkifier_fields,
)

ISSUE = r"#(?P<id>[0-9]+)"
ISSUE_URL = "https://github.com/zulip/zulip/issues/{id}"


def errors_of(**fields) -> dict[str, list[str]]:
    fields = {"pattern": ISSUE, "url_template": ISSUE_URL, **fields}
    with pytest.raises(LinkifierInvalid) as caught:
        check_linkifier_fields(LinkifierFields(**fields))
    return caught.value.errors


def rules(*linkifiers: tuple[str, str]) -> LinkifierRules:
    return LinkifierRules([CompiledLinkifier(pattern, template) for pattern, template in linkifiers])


def linked(rules: LinkifierRules, text: str) -> list[tuple[str, str]]:
    return [(link.text, link.url) for link in rules.links(text)]


# --- checking -------------------------------------------------------------------------------------


def test_a_valid_linkifier_is_stored_stripped_with_empty_optionals_as_none():
    checked = check_linkifier_fields(
        LinkifierFields(
            f"  {ISSUE} ", f" {ISSUE_URL}\n", example_input="", reverse_template="", alternative_url_templates=()
        )
    )
    assert checked == LinkifierFields(ISSUE, ISSUE_URL, None, None, ())


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(foo", "Bad regular expression: missing ): (foo"),
        ("a????", "Bad regular expression: bad repetition operator: ???"),
        (r"(?P<x>a)\1", "Bad regular expression: invalid escape sequence: \\1"),
        ("(?=lookahead)", "Bad regular expression: invalid perl operator: (?="),
        ("(?<!x)y", "Bad regular expression: invalid perl operator: (?<"),
        ("(((.{100}){100}){100}){100}", "Bad regular expression: invalid repetition size: {100}"),
        ("a{1001}", "Bad regular expression: invalid repetition size: {1001}"),
        # The wrapper's own group names cannot be taken.
        ("(?P<linkifier_actual_match>x)", "Bad regular expression: the group name linkifier_actual_match is reserved"),
        ("(?P<id>a)|(?P<id>b)", "Bad regular expression: duplicate capture group name: id"),
    ],
)
def test_patterns_re2_cannot_run_in_linear_time_are_refused(pattern, message):
    errors = errors_of(pattern=pattern, url_template="https://example.com/")
    assert errors["pattern"][0].startswith(message), errors


def test_a_blank_or_overlong_pattern_is_refused():
    assert errors_of(pattern="   ")["pattern"] == ["This field cannot be blank."]
    long = "a" * (MAX_PATTERN_LENGTH + 1)
    assert errors_of(pattern=long, url_template="https://example.com/")["pattern"] == [
        f"Ensure this value has at most {MAX_PATTERN_LENGTH} characters (it has {MAX_PATTERN_LENGTH + 1})."
    ]


@pytest.mark.parametrize(
    "template",
    ["https://example.com/{id", "https://example.com/{id}}", "https://example.com/{a b}", "https://example.com/{}"],
)
def test_templates_that_are_not_rfc_6570_are_refused(template):
    assert errors_of(url_template=template) == {"url_template": ["Invalid URL template."]}


@pytest.mark.parametrize(
    "template",
    ["javascript:alert({id})", "{id}", "/issues/{id}", "ftp://example.com/{id}", "https:{/id}", "{+id}://x.com/"],
)
def test_templates_must_expand_to_an_http_url(template):
    assert errors_of(url_template=template) == {"url_template": ["URL template must expand to an http or https URL."]}


def test_template_variables_must_be_the_patterns_groups():
    assert errors_of(url_template="https://x.com/{id}/{other}") == {
        "__all__": ["Group 'other' in URL template is not present in linkifier pattern."]
    }
    assert errors_of(pattern=r"(?P<org>\w+)#(?P<id>\d+)") == {
        "__all__": ["Group 'org' in linkifier pattern is not present in URL template."]
    }


def test_every_rfc_6570_operator_is_taken():
    checked = check_linkifier_fields(
        LinkifierFields(r"(?P<repo>[a-z]+)#(?P<id>\d+)", "https://x.com{/repo}/issues{?id}")
    )
    assert checked.url_template == "https://x.com{/repo}/issues{?id}"


def test_alternative_templates_follow_the_same_rules():
    good = ("https://gh.example.com/issues/{id}",)
    assert (
        check_linkifier_fields(
            LinkifierFields(ISSUE, ISSUE_URL, alternative_url_templates=good)
        ).alternative_url_templates
        == good
    )
    errors = errors_of(alternative_url_templates=("https://ok.com/{id}", "nope{id}", "https://x.com/{ticket}", ""))
    assert errors == {
        "alternative_url_templates": [
            "URL template must expand to an http or https URL.",
            "This field cannot be blank.",
        ],
        "__all__": ["Group 'ticket' in URL template is not present in linkifier pattern."],
    }
    too_many = tuple(f"https://x{n}.com/{{id}}" for n in range(MAX_ALTERNATIVE_URL_TEMPLATES + 1))
    assert errors_of(alternative_url_templates=too_many) == {
        "alternative_url_templates": [f"At most {MAX_ALTERNATIVE_URL_TEMPLATES} alternative URL templates."]
    }


def test_the_example_input_must_be_all_matched_by_the_pattern():
    assert check_linkifier_fields(LinkifierFields(ISSUE, ISSUE_URL, example_input="#123")).example_input == "#123"
    assert errors_of(example_input="#12x") == {"example_input": ["The example input does not match the pattern."]}
    assert errors_of(example_input="see #12") == {"example_input": ["The example input does not match the pattern."]}


def test_a_reverse_template_round_trips_the_example_input():
    checked = check_linkifier_fields(
        LinkifierFields(r"(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>\d+)", "https://github.com/{org}/{repo}/pull/{id}",
                        example_input="zulip/zulip#123", reverse_template="{org}/{repo}#{id}")
    )  # fmt: skip
    assert checked.reverse_template == "{org}/{repo}#{id}"
    # {{ and }} are literal braces.
    braces = LinkifierFields(
        r"\{(?P<id>\d+)\}", "https://x.com/{id}", example_input="{42}", reverse_template="{{{id}}}"
    )
    assert check_linkifier_fields(braces).reverse_template == "{{{id}}}"


@pytest.mark.parametrize(
    ("reverse", "error"),
    [
        ("T{id}", {"reverse_template": ["The reverse template gives 'T123', not the example input '#123'."]}),
        (
            "#{ticket}",
            {"reverse_template": ["Group 'ticket' in reverse template is not present in linkifier pattern."]},
        ),
        ("#{id", {"reverse_template": ["Invalid reverse template."]}),
        ("#{id!r}", {"reverse_template": ["Invalid reverse template."]}),
        ("#{id:>5}", {"reverse_template": ["Invalid reverse template."]}),
        ("#{0}", {"reverse_template": ["Invalid reverse template."]}),
        ("#{id.real}", {"reverse_template": ["Invalid reverse template."]}),
    ],
)
def test_reverse_templates_that_do_not_round_trip_are_refused(reverse, error):
    assert errors_of(example_input="#123", reverse_template=reverse) == error


def test_a_reverse_template_needs_an_example_input():
    assert errors_of(reverse_template="#{id}") == {
        "example_input": ["An example input is required for a reverse template."]
    }


def test_every_problem_is_reported_by_field_the_first_one_as_the_message():
    with pytest.raises(LinkifierInvalid) as caught:
        check_linkifier_fields(LinkifierFields("(", "javascript:x"))
    assert caught.value.errors == {
        "pattern": ["Bad regular expression: missing ): ("],
        "url_template": ["URL template must expand to an http or https URL."],
    }
    assert str(caught.value) == "Bad regular expression: missing ): ("


# --- running --------------------------------------------------------------------------------------


def test_matches_need_a_boundary_before_and_no_letter_or_digit_after():
    issues = rules((ISSUE, ISSUE_URL))
    url = ISSUE_URL.format(id="12")
    assert linked(issues, "#12") == [("#12", url)]
    assert linked(issues, "see #12, (#12) '#12' :#12 <#12") == [("#12", url)] * 5
    assert linked(issues, "x#12 #12a #12é") == []
    assert linked(issues, "#1 #2\u00a0#3\u3000#4") == [(f"#{n}", ISSUE_URL.format(id=n)) for n in range(1, 5)]


def test_adjacent_matches_share_the_character_between_them():
    assert linked(rules((ISSUE, ISSUE_URL)), "#1,#2 #3") == [
        ("#1", ISSUE_URL.format(id=1)),
        ("#2", ISSUE_URL.format(id=2)),
        ("#3", ISSUE_URL.format(id=3)),
    ]


def test_group_values_are_escaped_by_the_template():
    words = rules((r"wiki:(?P<page>\S+)", "https://wiki.example.com/{page}"))
    assert linked(words, "wiki:a/b?c&d=<e>") == [
        ("wiki:a/b?c&d=<e>", "https://wiki.example.com/a%2Fb%3Fc%26d%3D%3Ce%3E")
    ]
    assert linked(rules((r"wiki:(?P<page>\S+)", "https://wiki.example.com/{+page}")), "wiki:a/b") == [
        ("wiki:a/b", "https://wiki.example.com/a/b")
    ]


def test_an_optional_group_that_did_not_match_is_left_out():
    optional = rules((r"T(?P<id>\d+)(?:\.(?P<part>\d+))?", "https://x.com/{id}{?part}"))
    assert linked(optional, "T1 T2.5") == [("T1", "https://x.com/1"), ("T2.5", "https://x.com/2?part=5")]


def test_the_earlier_linkifier_wins_where_two_overlap():
    jira = (r"(?P<key>[A-Z]+-\d+)", "https://jira.example.com/{key}")
    digits = (r"[A-Z]+-(?P<n>\d+)", "https://other.example.com/{n}")
    assert linked(rules(jira, digits), "ABC-1") == [("ABC-1", "https://jira.example.com/ABC-1")]
    assert linked(rules(digits, jira), "ABC-1") == [("ABC-1", "https://other.example.com/1")]
    # Matches of a later linkifier that overlap nothing are kept, in order of appearance.
    issues = (ISSUE, ISSUE_URL)
    assert [text for text, _ in linked(rules(jira, issues), "#1 ABC-2 #3")] == ["#1", "ABC-2", "#3"]


def test_text_with_multibyte_characters_gives_character_offsets():
    text = "é😀 #7 ü #8"
    links = rules((ISSUE, ISSUE_URL)).links(text)
    assert [text[link.start : link.end] for link in links] == ["#7", "#8"]


def test_a_pattern_that_may_match_nothing_links_nothing_and_ends():
    assert linked(rules((r"(?P<x>a*)", "https://x.com/{x}")), "b b aa") == [("aa", "https://x.com/aa")]


def test_a_stored_pattern_that_no_longer_compiles_matches_nothing():
    assert linked(rules(("(", "https://x.com/"), (ISSUE, ISSUE_URL)), "#5") == [("#5", ISSUE_URL.format(id=5))]


def test_topic_links_are_the_linkifiers_then_raw_urls_in_order():
    topic_rules = rules((ISSUE, ISSUE_URL))
    assert topic_rules.topic_links("fix #4 see zulip.com/x and https://a.example.com/b?c=1") == [
        {"text": "#4", "url": ISSUE_URL.format(id=4)},
        {"text": "zulip.com/x", "url": "https://zulip.com/x"},
        {"text": "https://a.example.com/b?c=1", "url": "https://a.example.com/b?c=1"},
    ]
    assert rules().topic_links("plain topic") == []
    assert rules().topic_links("mail me: mailto:x@example.com") == []
