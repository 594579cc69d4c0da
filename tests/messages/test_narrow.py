"""Every narrow operator of GET /messages, on whichever database the suite runs (SQLite by default,
PostgreSQL with DATABASE_URL): positive and negated, in both term shapes (`{"operator", "operand",
"negated"}` objects and `[operator, operand]` pairs), and the BAD_NARROW errors."""

from dataclasses import dataclass

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.messages.models import Message, UserMessage
from tests.api import ApiClient, assert_error, assert_success
from tests.messages.conftest import get_messages, message_ids

on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL full-text search")


@dataclass
class Scene:
    """Messages admin can see, by name; `all` is every one of them."""

    design: object
    other: object
    lunch: int  # member -> design/lunch
    link: int  # admin -> design/dinner, a link
    image: int  # member -> other/Lunch, an image
    mention: int  # member -> design/"✔ done", mentions admin
    dm: int  # member -> admin
    group: int  # owner -> admin, member
    note: int  # admin -> admin
    unseen: int  # owner -> moderator: admin never sees it

    @property
    def all(self) -> set[int]:
        return {self.lunch, self.link, self.image, self.mention, self.dm, self.group, self.note}


@pytest.fixture
def scene(make_stream, send, member, admin, owner, moderator):
    design = make_stream("design", member, admin, owner)
    other = make_stream("other", member, admin)
    return Scene(
        design=design,
        other=other,
        lunch=send(member, design, "Pizza at noon, walking there", topic="lunch"),
        link=send(admin, design, "the menu: https://example.com/m", topic="dinner"),
        image=with_image(send(member, other, "[menu](https://example.com/menu.png)", topic="Lunch")),
        mention=send(member, design, "@**Adam Admin** please review", topic="✔ done"),
        dm=send(member, [admin], "secret plans"),
        group=send(owner, [admin, member], "group chat"),
        note=send(admin, [admin], "note to self"),
        unseen=send(owner, [moderator], "not for admin"),
    )


def with_image(message_id: int) -> int:
    """The message marked as one with an uploaded image is (apps.uploads sets has_image)."""
    Message.objects.filter(id=message_id).update(has_image=True)
    return message_id


def as_dict(operator, operand, negated=False):
    return {"operator": operator, "operand": operand, "negated": negated}


def matching(user, *terms) -> set[int]:
    ids = message_ids(user, list(terms), anchor="oldest", num_before=0, num_after=1000)
    assert ids == sorted(ids)
    return set(ids)


def check_operator(user, scene, operator, operand, expected: set[int]) -> None:
    """The term selects `expected` in both shapes; negated, it selects the rest."""
    assert matching(user, as_dict(operator, operand)) == expected
    assert matching(user, [operator, operand]) == expected
    assert matching(user, as_dict(operator, operand, negated=True)) == scene.all - expected
    assert matching(user, ["-" + operator, operand]) == scene.all - expected


def bad_narrow(user, narrow, msg):
    response = ApiClient(user).get("/messages", {"anchor": "newest", "num_before": 10, "narrow": narrow})
    assert_error(response, 400, "BAD_NARROW", msg)


def test_empty_narrow_selects_everything_received(scene, admin):
    assert matching(admin) == scene.all
    assert scene.unseen not in matching(admin)


def test_channel_selects_its_messages_by_name_id_or_alias(scene, admin):
    design = {scene.lunch, scene.link, scene.mention}
    check_operator(admin, scene, "channel", "design", design)
    check_operator(admin, scene, "stream", "DESIGN", design)
    check_operator(admin, scene, "channel", scene.design.id, design)
    assert matching(admin, ["channel", str(scene.other.id)]) == {scene.image}


def test_topic_is_case_insensitive(scene, admin):
    check_operator(admin, scene, "topic", "lunch", {scene.lunch, scene.image})
    check_operator(admin, scene, "subject", "LUNCH", {scene.lunch, scene.image})
    assert matching(admin, ["channel", "design"], ["topic", "lunch"]) == {scene.lunch}


def test_topic_general_chat_is_the_empty_topic(scene, send, member, admin):
    empty = send(member, scene.design, "untitled", topic="")
    assert matching(admin, ["topic", "general chat"]) == {empty}
    assert matching(admin, ["topic", ""]) == {empty}


def test_sender_selects_their_messages_by_email_or_id(scene, admin, member, owner):
    from_member = {scene.lunch, scene.image, scene.mention, scene.dm}
    check_operator(admin, scene, "sender", member.delivery_email, from_member)
    check_operator(admin, scene, "sender", member.id, from_member)
    assert matching(admin, ["sender", owner.delivery_email.upper()]) == {scene.group}


def test_dm_with_one_user_selects_both_directions(scene, send, admin, member):
    reply = send(admin, [member], "re: plans")
    scene_all = scene.all | {reply}
    expected = {scene.dm, reply}
    assert matching(admin, as_dict("dm", [member.id])) == expected
    assert matching(admin, ["pm-with", member.delivery_email]) == expected
    # Operators may be spelled with underscores, as zulip-terminal spells them.
    assert matching(admin, ["pm_with", member.delivery_email]) == expected
    assert matching(admin, as_dict("dm", member.id)) == expected
    # Naming oneself too changes nothing.
    assert matching(admin, as_dict("dm", [member.id, admin.id])) == expected
    assert matching(admin, as_dict("dm", [member.id], negated=True)) == scene_all - expected
    assert matching(member, ["dm", admin.delivery_email]) == expected


def test_dm_with_a_group_or_oneself_selects_that_conversation(scene, admin, member, owner):
    check_operator(admin, scene, "dm", [member.id, owner.id], {scene.group})
    check_operator(admin, scene, "dm", f"{owner.delivery_email},{member.delivery_email}", {scene.group})
    check_operator(admin, scene, "dm", [admin.id], {scene.note})
    check_operator(admin, scene, "dm", admin.delivery_email, {scene.note})


def test_dm_with_people_never_written_to_is_empty(scene, admin, moderator, owner):
    assert matching(admin, ["dm", moderator.delivery_email]) == set()
    assert matching(admin, as_dict("dm", [moderator.id, owner.id])) == set()


def test_dm_including_a_user_selects_their_conversations(scene, admin, member, owner):
    check_operator(admin, scene, "dm-including", member.id, {scene.dm, scene.group})
    check_operator(admin, scene, "dm-including", owner.delivery_email, {scene.group})
    assert matching(admin, ["group-pm-with", owner.delivery_email]) == {scene.group}
    assert matching(admin, ["group_pm_with", owner.delivery_email]) == {scene.group}
    # group-pm-with: group conversations only (the reading QA pass: it was dm-including).
    assert matching(admin, ["group-pm-with", member.delivery_email]) == {scene.group}
    # Oneself: every direct message.
    assert matching(admin, as_dict("dm-including", admin.id)) == {scene.dm, scene.group, scene.note}


def test_is_dm_selects_direct_messages_under_both_names(scene, admin):
    check_operator(admin, scene, "is", "dm", {scene.dm, scene.group, scene.note})
    check_operator(admin, scene, "is", "private", {scene.dm, scene.group, scene.note})


def test_is_starred_selects_starred_messages(scene, admin):
    assert_success(
        ApiClient(admin).post("/messages/flags", {"messages": [scene.lunch, scene.dm], "op": "add", "flag": "starred"})
    )
    check_operator(admin, scene, "is", "starred", {scene.lunch, scene.dm})


def test_is_mentioned_includes_wildcards(scene, send, admin, member):
    wildcard = send(member, scene.design, "@**everyone** hi", topic="news")
    scene_all = scene.all | {wildcard}
    assert matching(admin, ["is", "mentioned"]) == {scene.mention, wildcard}
    assert matching(admin, as_dict("is", "mentioned", negated=True)) == scene_all - {scene.mention, wildcard}


def test_is_unread_selects_messages_not_yet_read(scene, admin):
    # admin's own messages are read; the others' are not.
    check_operator(admin, scene, "is", "unread", {scene.lunch, scene.image, scene.mention, scene.dm, scene.group})
    assert_success(ApiClient(admin).post("/messages/flags", {"messages": [scene.lunch], "op": "add", "flag": "read"}))
    assert matching(admin, ["is", "unread"]) == {scene.image, scene.mention, scene.dm, scene.group}


def test_is_alerted_selects_alert_words(scene, admin):
    UserMessage.objects.filter(user=admin, message_id=scene.link).update(flags=UserMessage.HAS_ALERT_WORD)
    check_operator(admin, scene, "is", "alerted", {scene.link})


def test_is_resolved_selects_resolved_topics(scene, admin):
    check_operator(admin, scene, "is", "resolved", {scene.mention})


def set_policy(user, stream, topic, policy):
    assert_success(
        ApiClient(user).post("/user_topics", {"stream_id": stream.id, "topic": topic, "visibility_policy": policy})
    )


def test_is_followed_selects_followed_topics(scene, admin):
    set_policy(admin, scene.design, "LUNCH", 3)
    check_operator(admin, scene, "is", "followed", {scene.lunch})


def test_is_muted_selects_muted_topics_and_channels(scene, admin):
    check_operator(admin, scene, "is", "muted", set())
    set_policy(admin, scene.design, "dinner", 1)
    check_operator(admin, scene, "is", "muted", {scene.link})
    assert_success(
        ApiClient(admin).patch(f"/users/me/subscriptions/{scene.other.id}", {"property": "is_muted", "value": True})
    )
    check_operator(admin, scene, "is", "muted", {scene.link, scene.image})


def test_is_muted_spares_unmuted_and_followed_topics_of_a_muted_channel(scene, send, admin, member):
    followed = send(member, scene.other, "kept", topic="followed")
    unmuted = send(member, scene.other, "kept too", topic="unmuted")
    assert_success(
        ApiClient(admin).patch(f"/users/me/subscriptions/{scene.other.id}", {"property": "is_muted", "value": True})
    )
    set_policy(admin, scene.other, "followed", 3)
    set_policy(admin, scene.other, "unmuted", 2)
    assert matching(admin, ["is", "muted"]) == {scene.image}
    assert {followed, unmuted} <= matching(admin, as_dict("is", "muted", negated=True))


def test_in_home_leaves_out_what_is_muted_and_in_all_leaves_out_nothing(scene, admin):
    check_operator(admin, scene, "in", "home", scene.all)
    set_policy(admin, scene.design, "dinner", 1)
    assert_success(
        ApiClient(admin).patch(f"/users/me/subscriptions/{scene.other.id}", {"property": "is_muted", "value": True})
    )
    check_operator(admin, scene, "in", "home", scene.all - {scene.link, scene.image})
    assert matching(admin, ["in", "all"]) == scene.all
    bad_narrow(admin, [["in", "nowhere"]], "Invalid narrow operator: unknown 'in' operand")


def narrow_queries(user, narrow) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        message_ids(user, narrow, anchor="newest", num_before=5, num_after=0)
    return [q["sql"] for q in queries.captured_queries]


def test_a_term_repeated_costs_what_one_does(scene, admin):
    """The hostile-input QA pass: 100 times `in:home` with 3,000 muted topics held a worker 467 s,
    each term the whole condition again, built a topic at a time."""
    for n in range(30):
        set_policy(admin, scene.design, f"muted topic {n}", 1)
    once = narrow_queries(admin, [["in", "home"]])
    repeated = narrow_queries(admin, [["in", "home"]] * 50 + [as_dict("is", "muted", negated=True)] * 50)
    assert len(repeated) == len(once)
    assert max(sql.count("muted topic 29") for sql in repeated) == 2  # `in:home`, `-is:muted`
    assert matching(admin, *[["in", "home"]] * 50) == scene.all


def test_each_person_a_narrow_names_is_looked_up_once(scene, admin, member):
    one = narrow_queries(admin, [["sender", member.delivery_email]])
    spellings = [f"{' ' * n}{member.delivery_email}" for n in range(20)]  # twenty terms, one person
    assert len(narrow_queries(admin, [["sender", email] for email in spellings])) == len(one)
    assert matching(admin, *[["sender", email] for email in spellings]) == matching(admin, ["sender", member.id])
    crowd = ",".join(f"nobody{n}@example.com" for n in range(1001))
    bad_narrow(admin, [["dm", crowd]], "Invalid narrow operator: too many people named (limit: 1000)")


def test_dm_including_reads_only_the_users_own_groups(scene, send, admin, member, owner, moderator):
    """Not every group direct message of the organization, each decoded for each term (the QA
    pass: 20,000 groups took 31 s)."""
    send(member, [owner, moderator], "not admin's")  # a group admin is not in
    assert matching(admin, ["dm-including", member.id]) == {scene.dm, scene.group}
    queries = narrow_queries(admin, [["dm-including", member.id]])
    groups = [sql for sql in queries if "directmessagegroup" in sql and "realm_id" in sql]  # by organization
    assert len(groups) == 1
    if connection.vendor == "postgresql":
        assert '"user_ids" @>' in groups[0]


def test_has_link_and_image_select_by_content(scene, admin):
    check_operator(admin, scene, "has", "link", {scene.link, scene.image})
    check_operator(admin, scene, "has", "image", {scene.image})


def test_has_attachment_selects_nothing_here(scene, admin):
    check_operator(admin, scene, "has", "attachment", set())


def test_has_reaction_selects_messages_with_a_reaction(scene, admin, member, owner, moderator, make_stream, send):
    check_operator(admin, scene, "has", "reaction", set())
    assert_success(ApiClient(member).post(f"/messages/{scene.lunch}/reactions", {"emoji_name": "smile"}))
    assert_success(ApiClient(owner).post(f"/messages/{scene.group}/reactions", {"emoji_name": "tada"}))
    assert_success(ApiClient(admin).post(f"/messages/{scene.group}/reactions", {"emoji_name": "tada"}))
    assert_success(ApiClient(moderator).post(f"/messages/{scene.unseen}/reactions", {"emoji_name": "tada"}))
    check_operator(admin, scene, "has", "reaction", {scene.lunch, scene.group})
    assert_success(ApiClient(member).delete(f"/messages/{scene.lunch}/reactions", {"emoji_name": "smile"}))
    check_operator(admin, scene, "has", "reaction", {scene.group})
    # Also where the user has no rows: a public channel they read without subscribing.
    public = make_stream("public", member)
    plain, liked = send(member, public, "plain"), send(member, public, "liked")
    assert_success(ApiClient(member).post(f"/messages/{liked}/reactions", {"emoji_name": "heart"}))
    assert matching(admin, ["channel", "public"]) == {plain, liked}
    assert matching(admin, ["channel", "public"], ["has", "reaction"]) == {liked}


def test_id_selects_one_message_as_number_or_string(scene, admin):
    check_operator(admin, scene, "id", scene.dm, {scene.dm})
    check_operator(admin, scene, "id", str(scene.link), {scene.link})
    # A message admin does not have is not found by its id.
    assert matching(admin, ["id", scene.unseen]) == set()


def test_near_only_moves_the_anchor_and_with_narrows_to_the_conversation(scene, admin):
    assert matching(admin, ["near", str(scene.dm)]) == scene.all
    assert matching(admin, as_dict("with", scene.dm)) == {scene.dm}  # tests/messages/test_fetch_by_message.py
    assert matching(admin, as_dict("with", scene.lunch)) == {scene.lunch}


def test_channels_public_selects_public_channel_messages(scene, make_stream, send, owner, admin):
    secret = make_stream("secret", owner, admin, private=True)
    hidden = send(owner, secret, "in private")
    scene_all = scene.all | {hidden}
    public = {scene.lunch, scene.link, scene.image, scene.mention}
    assert matching(admin, ["channels", "public"]) == public
    assert matching(admin, ["streams", "public"]) == public
    assert matching(admin, as_dict("channels", "public", negated=True)) == scene_all - public


def test_channels_public_reads_every_public_channels_history(scene, make_stream, send, owner, admin, guest):
    """As Zulip's search of all public channels: messages of public channels the user never
    received are found too (not by guests, who read only what they received)."""
    elsewhere = make_stream("elsewhere", owner, guest)
    unreceived = send(owner, elsewhere, "in a channel admin is not in")
    hidden = send(owner, make_stream("secret", owner, private=True), "private")
    found = matching(admin, ["channels", "public"])
    assert unreceived in found
    assert hidden not in found
    assert found == {scene.lunch, scene.link, scene.image, scene.mention, unreceived}
    assert matching(admin, ["channels", "public"], ["search", "channel admin"]) == {unreceived}
    assert matching(guest, ["channels", "public"]) == {unreceived}  # received: guest is subscribed
    assert scene.lunch not in matching(guest, ["channels", "public"])


def test_channels_web_public_selects_web_public_channel_messages(scene, admin):
    # As Zulip's; Parley has no web-public channels ("Web-public channels are not enabled"): none.
    assert matching(admin, ["channels", "web-public"]) == set()
    assert matching(admin, as_dict("channels", "web-public", negated=True)) == scene.all


def test_search_matches_every_word_in_content_or_topic(scene, admin):
    check_operator(admin, scene, "search", "pizza", {scene.lunch})
    check_operator(admin, scene, "search", "PIZZA noon", {scene.lunch})
    assert matching(admin, ["search", "pizza plans"]) == set()
    check_operator(admin, scene, "search", "dinner", {scene.link})  # the topic
    check_operator(admin, scene, "search", "plans", {scene.dm})


def test_a_quoted_phrase_is_found_only_as_written(scene, admin):
    """Zulip's exact phrase matching (the reading QA pass: its words were found in any order)."""
    # scene.lunch: "Pizza at noon, walking there"
    check_operator(admin, scene, "search", '"pizza at noon"', {scene.lunch})
    check_operator(admin, scene, "search", '"AT NOON" walking', {scene.lunch})
    assert matching(admin, ["search", '"noon at pizza"']) == set()
    assert matching(admin, ["search", '"pizza at" dinner']) == set()


def test_search_combined_with_other_terms(scene, admin, member):
    assert matching(admin, ["search", "menu"]) == {scene.link, scene.image}
    assert matching(admin, ["search", "menu"], ["channel", "other"]) == {scene.image}
    assert matching(admin, ["search", "menu"], as_dict("sender", member.id, negated=True)) == {scene.link}


def test_several_search_terms_are_one_condition(scene, admin):
    """Every positive `search` term's words and phrases are wanted, each negated one's refused; the
    positive ones are one condition, so a narrow repeating them costs what one does (the
    hostile-input QA pass: 100 times `search x` held PostgreSQL 82 s, a subquery each)."""
    # scene.lunch: "Pizza at noon, walking there"
    assert matching(admin, ["search", "pizza"], ["search", "noon"]) == {scene.lunch}
    assert matching(admin, ["search", '"pizza at"'], ["search", "walking"]) == {scene.lunch}
    assert matching(admin, ["search", "pizza"], ["search", "plans"]) == set()
    assert matching(admin, ["search", "pizza"], ["search", "✔"]) == set()
    assert matching(admin, ["search", "menu"], as_dict("search", "dinner", negated=True)) == {scene.image}
    assert matching(admin, *[["search", "pizza"]] * 100) == {scene.lunch}
    with CaptureQueriesContext(connection) as queries:
        message_ids(admin, [["search", f"word{n}"] for n in range(50)], anchor="newest", num_before=5, num_after=0)
    fetch = [q["sql"] for q in queries.captured_queries if "chat_messages" in q["sql"] and "word1" in q["sql"]]
    assert fetch, "the narrow's query"
    if connection.vendor == "postgresql":
        assert [sql.count("plainto_tsquery") for sql in fetch] == [1] * len(fetch)


def test_a_narrow_of_more_than_100_terms_is_refused(scene, admin):
    api = ApiClient(admin)
    narrow = [["search", "pizza"]] * 101
    params = {"anchor": "newest", "num_before": 5, "num_after": 0, "narrow": narrow}
    msg = "Invalid narrow operator: too many terms (limit: 100)"
    assert_error(api.get("/messages", params), 400, "BAD_NARROW", msg)


def test_search_with_query_syntax_characters_is_plain_text(scene, send, member, admin):
    quoted = send(member, scene.design, "O'Brien said: 100% & more!", topic="quotes")
    assert matching(admin, ["search", "o'brien"]) == {quoted}
    assert matching(admin, ["search", "100% & !more | x:*"]) == set()
    assert matching(admin, ["search", "said & more"]) == {quoted}
    # No words: nothing found, as in Zulip, whose empty text query matches no message ("✔" too).
    assert matching(admin, ["search", "%"]) == set()
    assert matching(admin, ["search", "✔"]) == set()
    assert matching(admin, as_dict("search", "✔", negated=True)) == scene.all | {quoted}


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_search_is_refused(scene, admin, blank):
    # Zulip's validator: "operand cannot be blank" (a client's empty search box is no narrow at all).
    for term in (as_dict("search", blank), ["search", blank]):
        response = ApiClient(admin).get("/messages", {"anchor": "newest", "num_before": 5, "narrow": [term]})
        assert_error(response, 400, "BAD_REQUEST", "operand cannot be blank.")


@on_postgresql
def test_search_on_postgresql_is_stemmed(scene, admin):
    # English stemming: "walks" and "walking" share the stem "walk"; "pizzas" finds "Pizza".
    assert matching(admin, ["search", "walks"]) == {scene.lunch}
    assert matching(admin, ["search", "pizzas"]) == {scene.lunch}
    assert matching(admin, ["search", "reviewing"]) == {scene.mention}


def test_terms_are_anded(scene, admin, member):
    assert matching(admin, ["channel", "design"], ["sender", member.delivery_email]) == {scene.lunch, scene.mention}
    assert matching(admin, ["is", "dm"], as_dict("dm", [admin.id], negated=True)) == {scene.dm, scene.group}
    assert matching(admin, ["channel", "design"], as_dict("is", "dm", negated=True)) == matching(
        admin, ["channel", "design"]
    )


@pytest.mark.parametrize("dm_term", [["is", "dm"], ["is", "private"], ["dm", "[2]"], ["dm-including", "2"]])
def test_a_channel_and_a_direct_message_term_together_are_bad_narrow(scene, admin, dm_term):
    """Zulip's check_not_both_channel_and_dm_narrow (the reading QA pass: an empty answer)."""
    bad_narrow(
        admin,
        [["channel", "design"], dm_term],
        "Invalid narrow operator: No message can be both a channel message and direct message",
    )


def test_narrow_on_a_channels_history_applies_every_operator(scene, make_stream, send, moderator, member):
    # moderator is subscribed to neither channel: the channel term reads design's history.
    history = {scene.lunch, scene.link, scene.mention}
    assert matching(moderator, ["channel", "design"]) == history
    assert matching(moderator, ["channel", "design"], ["topic", "lunch"]) == {scene.lunch}
    assert matching(moderator, ["channel", "design"], ["sender", member.id]) == {scene.lunch, scene.mention}
    assert matching(moderator, ["channel", "design"], ["has", "link"]) == {scene.link}
    assert matching(moderator, ["channel", "design"], ["search", "pizza"]) == {scene.lunch}
    assert matching(moderator, ["channel", "design"], ["is", "resolved"]) == {scene.mention}
    assert matching(moderator, ["channel", "design"], as_dict("topic", "lunch", negated=True)) == {
        scene.link,
        scene.mention,
    }
    # Flag terms read only what the user received (nothing here).
    assert matching(moderator, ["channel", "design"], ["is", "unread"]) == set()
    assert matching(moderator, ["channel", "design"], ["is", "starred"]) == set()


def test_unknown_operator_is_bad_narrow(scene, admin):
    bad_narrow(admin, [["colour", "red"]], "Invalid narrow operator: unknown operator colour")
    bad_narrow(admin, [as_dict("reacted_by", "home")], "Invalid narrow operator: unknown operator reacted_by")


def test_unknown_operands_are_bad_narrow(scene, admin):
    bad_narrow(admin, [["is", "shiny"]], "Invalid narrow operator: unknown 'is' operand")
    bad_narrow(admin, [["has", "cats"]], "Invalid narrow operator: unknown 'has' operand")
    bad_narrow(admin, [["id", "seven"]], "Invalid narrow operator: invalid message ID")
    bad_narrow(admin, [["channels", "all"]], "Invalid narrow operator: invalid channels operand")
    bad_narrow(admin, [["channels", "web_public"]], "Invalid narrow operator: invalid channels operand")
    bad_narrow(admin, [["channel", "nowhere"]], "Invalid narrow operator: unknown channel nowhere")
    bad_narrow(admin, [as_dict("channel", 987654)], "Invalid narrow operator: unknown channel 987654")
    bad_narrow(admin, [["sender", "nobody@example.com"]], "Invalid narrow operator: unknown user nobody@example.com")
    bad_narrow(admin, [as_dict("sender", 987654)], "Invalid narrow operator: unknown user 987654")
    bad_narrow(admin, [as_dict("dm", [987654])], "Invalid narrow operator: unknown user in [987654]")
    bad_narrow(admin, [["dm", "nobody@example.com"]], "Invalid narrow operator: unknown user in nobody@example.com")


def test_digits_that_are_not_numbers_are_bad_narrow_not_a_crash(scene, admin):
    # "²" is a digit to Python's str.isdigit() but no number to int(): it names nobody.
    bad_narrow(admin, [["sender", "²"]], "Invalid narrow operator: unknown user ²")
    bad_narrow(admin, [["dm", "²"]], "Invalid narrow operator: unknown user in ²")
    bad_narrow(admin, [["channel", "²"]], "Invalid narrow operator: unknown channel ²")


def test_dm_with_nobody_is_bad_narrow(scene, admin):
    bad_narrow(admin, [["dm", ""]], "Invalid narrow operator: unknown user in ")
    bad_narrow(admin, [as_dict("dm", [])], "Invalid narrow operator: unknown user in []")


def test_search_results_carry_highlighted_match_fields(scene, admin):
    [message] = get_messages(admin, [["search", "pizza"]], apply_markdown="false")["messages"]
    assert message["content"] == "Pizza at noon, walking there"  # the Markdown, as asked
    assert message["match_content"] == '<p><span class="highlight">Pizza</span> at noon, walking there</p>'
    assert message["match_subject"] == "lunch"
    [topic_hit] = get_messages(admin, [["search", "dinner"]])["messages"]
    assert topic_hit["match_subject"] == '<span class="highlight">dinner</span>'
    # Only searches carry them.
    assert all("match_content" not in m for m in get_messages(admin, [["channel", "design"]])["messages"])


def test_dm_including_several_users_is_bad_narrow(scene, admin, member, owner):
    bad_narrow(
        admin, [as_dict("dm-including", [member.id, owner.id])], "Invalid narrow operator: dm-including takes one user"
    )


def test_private_channel_unseen_and_foreign_users_are_bad_narrow(
    scene, make_stream, owner, admin, member, foreign_user
):
    secret = make_stream("secret", owner, private=True)
    # A private channel member may not see does not exist for them, by name or id.
    bad_narrow(member, [["channel", "secret"]], "Invalid narrow operator: unknown channel secret")
    bad_narrow(member, [as_dict("channel", secret.id)], f"Invalid narrow operator: unknown channel {secret.id}")
    bad_narrow(admin, [as_dict("sender", foreign_user.id)], f"Invalid narrow operator: unknown user {foreign_user.id}")


def test_malformed_narrows_are_refused(scene, admin):
    api = ApiClient(admin)

    def refused(narrow, msg):
        response = api.get("/messages", {"anchor": "newest", "num_before": 10, "narrow": narrow})
        assert_error(response, 400, "BAD_REQUEST", msg)

    refused(["channel", "design"], "Invalid narrow[0]: dict or list required")
    refused([["channel", "design", "extra"]], "Invalid narrow[0]: element is not a string pair")
    refused([{"operator": "is", "operand": 5}], "Invalid operand for is")
    refused([{"operator": "channel", "operand": ["design"]}], "Invalid operand for channel")
    refused([{"operator": "channel", "operand": "design", "negated": "yes"}], "Invalid narrow element")
    refused([{"operand": "design"}], "Invalid narrow element")
