"""The HTTP contract of sending and reading messages, their flags and marking them read: status,
envelope, exact message, the Message object's shape, and that a refused request changes no row."""

import json

import pytest
from django.db import connection
from django.db.models import F

from apps.events.models import OutboxEvent
from apps.messages.models import Message, Recipient, UserMessage
from apps.subscriptions.models import Stream, Subscription
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import Role
from apps.users.selectors import api_email
from tests.api import ApiClient, assert_error, assert_success
from tests.concurrency import at_once
from tests.factories import UserFactory
from tests.messages.conftest import api, db_state, flags_of, get_messages, message_ids, post_message

READ, STARRED, MENTIONED, WILDCARD, HISTORICAL = (
    UserMessage.READ,
    UserMessage.STARRED,
    UserMessage.MENTIONED,
    UserMessage.STREAM_WILDCARD_MENTIONED,
    UserMessage.HISTORICAL,
)
MESSAGE_KEYS = {
    "id",
    "type",
    "sender_id",
    "sender_email",
    "sender_full_name",
    "sender_realm_str",
    "avatar_url",
    "client",
    "content",
    "content_type",
    "display_recipient",
    "recipient_id",
    "subject",
    "topic_links",
    "is_me_message",
    "timestamp",
    "reactions",
    "submessages",
    "flags",
}


def refused(response, msg: str, before: dict, code: str = "BAD_REQUEST") -> dict:
    body = assert_error(response, 400, code, msg)
    assert db_state() == before
    return body


@pytest.fixture
def design(make_stream, member, admin, owner):
    return make_stream("design", member, admin, owner)


def flags(api, message_ids, op, flag):
    return api.post("/messages/flags", {"messages": message_ids, "op": op, "flag": flag})


# --- POST /messages: channels ------------------------------------------------------------------------


def test_send_to_channel_by_name_stores_message_and_rows(design, member, admin, owner, moderator):
    body = assert_success(post_message(member, type="stream", to="design", topic="lunch", content="**Hi**"))
    message = Message.objects.get(id=body["id"])
    assert (message.stream_id, message.topic, message.content) == (design.id, "lunch", "**Hi**")
    assert message.rendered_content == "<p><strong>Hi</strong></p>"
    assert message.recipient == Recipient.objects.get(type=Recipient.Type.STREAM, type_id=design.id)
    rows = dict(UserMessage.objects.filter(message=message).values_list("user_id", "flags"))
    # The sender's copy is read; subscribers' are unread; a non-subscriber gets none.
    assert rows == {member.id: READ, admin.id: 0, owner.id: 0}
    assert moderator.id not in rows
    assert Stream.objects.get(id=design.id).first_message_id == message.id


def test_send_to_channel_by_id_and_json_list_and_channel_type(design, member):
    by_id = assert_success(post_message(member, type="channel", to=str(design.id), topic="a", content="x"))["id"]
    by_list = assert_success(post_message(member, type="stream", to='["design"]', topic="b", content="y"))["id"]
    by_json_name = assert_success(post_message(member, type="stream", to='"Design"', subject="c", content="z"))["id"]
    assert list(Message.objects.order_by("id").values_list("id", "stream_id", "topic")) == [
        (by_id, design.id, "a"),
        (by_list, design.id, "b"),
        (by_json_name, design.id, "c"),
    ]


def test_send_answers_ignored_parameters_only_for_unknown_ones(design, member):
    body = assert_success(
        post_message(
            member, type="stream", to="design", topic="t", content="x", queue_id="q1", local_id="1.01", bogus="yes"
        )
    )
    assert body["ignored_parameters_unsupported"] == ["bogus"]


def test_send_to_unknown_channel_name_is_stream_does_not_exist(design, member):
    before = db_state()
    body = refused(
        post_message(member, type="stream", to="nowhere", topic="t", content="x"),
        "Channel 'nowhere' does not exist",
        before,
        code="STREAM_DOES_NOT_EXIST",
    )
    assert body["stream"] == "nowhere"


def test_send_to_unknown_channel_id_names_the_id(design, member):
    before = db_state()
    body = refused(
        post_message(member, type="stream", to="987654", topic="t", content="x"),
        "Channel with ID '987654' does not exist",
        before,
        code="STREAM_DOES_NOT_EXIST",
    )
    assert body["stream_id"] == 987654


@pytest.mark.parametrize("to", [str(10**29), f"[{10**29}]"])
def test_send_to_a_number_beyond_64_bits_is_no_channel(design, member, to):
    """As Zulip, whose JSON parser (orjson) reads such a number as a float: no channel id (the client
    QA pass: taken as an id, it came back in the error as a number no JSON client holds)."""
    before = db_state()
    sent = post_message(member, type="stream", to=to, topic="t", content="x")
    body = refused(sent, "Invalid data type for channel", before)
    assert "stream_id" not in body


def test_send_to_several_channels_is_refused(design, member, make_stream):
    make_stream("other", member)
    before = db_state()
    refused(
        post_message(member, type="stream", to='["design", "other"]', topic="t", content="x"),
        "Expected exactly one channel",
        before,
    )


def test_send_without_topic_to_channel_is_refused(design, member):
    before = db_state()
    refused(post_message(member, type="stream", to="design", content="x"), "Missing topic", before)


def test_send_without_content_is_refused(design, member):
    before = db_state()
    assert_error(
        post_message(member, type="stream", to="design", topic="t"),
        400,
        "REQUEST_VARIABLE_MISSING",
        "Missing 'content' argument",
    )
    refused(
        post_message(member, type="stream", to="design", topic="t", content="  \n "),
        "Message must not be empty",
        before,
    )


def test_send_stores_content_without_blank_lines_around_it(design, member):
    # Zulip's normalize_body: trailing whitespace and leading blank lines go, the first line's
    # indentation stays (a code block).
    content = "\n \n\n    code\nmore \n\n"
    body = assert_success(post_message(member, type="stream", to="design", topic="t", content=content))
    assert Message.objects.get(id=body["id"]).content == " \n\n    code\nmore"
    body = assert_success(post_message(member, type="stream", to="design", topic="t", content="\n\n  hi  \n\n"))
    assert Message.objects.get(id=body["id"]).content == "  hi"


def test_send_with_unknown_type_is_refused(design, member):
    before = db_state()
    refused(
        post_message(member, type="broadcast", to="design", topic="t", content="x"),
        "Invalid type",
        before,
        code="REQUEST_VARIABLE_INVALID",
    )


def test_send_truncates_long_content_and_topic(design, member):
    body = assert_success(post_message(member, type="stream", to="design", topic="t" * 70, content="a" * 10_050))
    message = Message.objects.get(id=body["id"])
    assert len(message.content) == 10_000
    assert message.content.endswith("a\n[message truncated]")
    assert message.topic == "t" * 57 + "..."


def test_send_to_general_chat_stores_the_empty_topic(design, member):
    message_id = assert_success(post_message(member, type="stream", to="design", topic="general chat", content="x"))[
        "id"
    ]
    assert Message.objects.get(id=message_id).topic == ""
    [shape] = get_messages(member, [["topic", "general chat"]])["messages"]
    assert (shape["id"], shape["subject"]) == (message_id, "general chat")
    [raw] = get_messages(member, allow_empty_topic_name=True)["messages"]
    assert raw["subject"] == ""


def test_send_to_no_topic_stores_the_empty_topic(design, member):
    """As Zulip's Addressee since feature level 370: "(no topic)", older clients' name for it."""
    message_id = assert_success(post_message(member, type="stream", to="design", topic="(no topic)", content="x"))["id"]
    assert Message.objects.get(id=message_id).topic == ""


def test_send_with_unprintable_topic_is_refused(design, member):
    before = db_state()
    refused(
        post_message(member, type="stream", to="design", topic="a\x07b", content="x"),
        "Invalid character in topic, at position 2!",
        before,
    )


def test_send_to_private_channel_not_subscribed_acts_as_missing(make_stream, owner, member, admin):
    make_stream("secret", owner, private=True)
    before = db_state()
    refused(
        post_message(member, type="stream", to="secret", topic="t", content="x"),
        "Channel 'secret' does not exist",
        before,
        code="STREAM_DOES_NOT_EXIST",
    )
    # An administrator sees the channel but may not post without being subscribed.
    refused(
        post_message(admin, type="stream", to="secret", topic="t", content="x"),
        "Not authorized to send to channel 'secret'",
        before,
    )


def test_bot_sends_to_private_channel_of_its_owner(make_stream, bot, member, owner):
    secret = make_stream("secret", member, owner, private=True)  # bot's owner is member
    message_id = assert_success(post_message(bot, type="stream", to="secret", topic="t", content="beep"))["id"]
    assert Message.objects.get(id=message_id).stream_id == secret.id
    assert (flags_of(owner, message_id), flags_of(bot, message_id)) == (0, READ)
    make_stream("closed", owner, private=True)
    before = db_state()
    refused(
        post_message(bot, type="stream", to="closed", topic="t", content="beep"),
        "Channel 'closed' does not exist",
        before,
        code="STREAM_DOES_NOT_EXIST",
    )


def test_send_to_public_channel_without_subscribing_is_allowed(design, moderator, member):
    message_id = assert_success(post_message(moderator, type="stream", to="design", topic="t", content="hi"))["id"]
    assert flags_of(moderator, message_id) == READ
    assert flags_of(member, message_id) == 0


def test_send_to_archived_channel_is_refused(design, member):
    from apps.subscriptions.actions.channels import do_deactivate_stream

    do_deactivate_stream(design, acting_user=None)
    before = db_state()
    refused(
        post_message(member, type="stream", to="design", topic="t", content="x"),
        "Not authorized to send to channel 'design'",
        before,
    )


def test_send_by_guest_to_public_channel_not_subscribed_is_refused(design, guest):
    before = db_state()
    refused(
        post_message(guest, type="stream", to="design", topic="t", content="x"),
        "Channel 'design' does not exist",
        before,
        code="STREAM_DOES_NOT_EXIST",
    )


def test_send_to_channel_of_other_organization_acts_as_missing(make_stream, other_realm, foreign_user, member):
    make_stream("theirs", foreign_user, in_realm=other_realm)
    before = db_state()
    refused(
        post_message(member, type="stream", to="theirs", topic="t", content="x"),
        "Channel 'theirs' does not exist",
        before,
        code="STREAM_DOES_NOT_EXIST",
    )


def test_mentions_set_mentioned_and_wildcard_flags(design, member, admin, owner):
    direct = assert_success(
        post_message(member, type="stream", to="design", topic="t", content="@**Adam Admin** and @_**Olivia Owner**")
    )["id"]
    assert (flags_of(admin, direct), flags_of(owner, direct)) == (MENTIONED, 0)  # a silent mention notifies nobody
    wildcard = assert_success(post_message(member, type="stream", to="design", topic="t", content="@**all** look"))[
        "id"
    ]
    assert (flags_of(admin, wildcard), flags_of(owner, wildcard)) == (WILDCARD, WILDCARD)
    [shape] = get_messages(admin, [["id", wildcard]])["messages"]
    assert shape["flags"] == ["stream_wildcard_mentioned", "wildcard_mentioned"]  # the older name too, as Zulip
    assert_success(post_message(admin, type="stream", to="design", topic="t", content="here"))
    topic = assert_success(post_message(member, type="stream", to="design", topic="t", content="@**topic** look"))["id"]
    [shape] = get_messages(admin, [["id", topic]])["messages"]
    assert shape["flags"] == ["topic_wildcard_mentioned", "wildcard_mentioned"]


def test_wildcard_mentions_flag_subscribers_who_turned_them_off_too(design, member, admin, owner):
    """As Zulip: the channel's `wildcard_mentions_notify` off silences its wildcard mentions (the
    notifications' tests) but they still mention: the message is among the user's mentions (the
    flag was left off, so it was missing there)."""
    Subscription.objects.filter(user=owner, stream=design).update(wildcard_mentions_notify=False)
    assert_success(post_message(owner, type="stream", to="design", topic="t", content="joining the topic"))
    for content, flag in (("@**all** look", WILDCARD), ("@**topic** look", UserMessage.TOPIC_WILDCARD_MENTIONED)):
        message_id = assert_success(post_message(member, type="stream", to="design", topic="t", content=content))["id"]
        assert flags_of(owner, message_id) == flag
        assert flags_of(admin, message_id) == (flag if flag == WILDCARD else 0)  # not in the topic
        assert message_id in [m["id"] for m in get_messages(owner, [["is", "mentioned"]])["messages"]]


def test_mentions_of_non_ascii_names_as_written(make_stream, member, realm):
    emile = UserFactory(realm=realm, full_name="Émile Zola")
    make_stream("lettres", member, emile)
    message_id = assert_success(
        post_message(member, type="stream", to="lettres", topic="t", content="@**Émile Zola**")
    )["id"]
    assert flags_of(emile, message_id) == MENTIONED
    assert f'data-user-id="{emile.id}">@Émile Zola</span>' in Message.objects.get(id=message_id).rendered_content


def test_a_mention_by_id_alone(design, member, admin, foreign_user):
    """Zulip's `@**|id**` (the guest-access QA pass: left as text): the person of that id, named;
    an id of nobody active here (another organization's) is text."""
    content = f"@**|{admin.id}** and @_**|{admin.id}** but not @**|{foreign_user.id}** or @**|99999999999999999999**"
    message_id = assert_success(post_message(member, type="stream", to="design", topic="t", content=content))["id"]
    assert flags_of(admin, message_id) == MENTIONED
    rendered = Message.objects.get(id=message_id).rendered_content
    assert f'<span class="user-mention" data-user-id="{admin.id}">@Adam Admin</span>' in rendered
    assert f'<span class="user-mention silent" data-user-id="{admin.id}">Adam Admin</span>' in rendered
    assert f'data-user-id="{foreign_user.id}"' not in rendered


def test_a_mention_whose_id_is_not_a_number_is_text(design, member, admin):
    # "²" is a digit to Python's str.isdigit() but no number to int().
    message_id = assert_success(
        post_message(member, type="stream", to="design", topic="t", content="@**Adam Admin|²**")
    )["id"]
    assert flags_of(admin, message_id) == 0
    assert "user-mention" not in Message.objects.get(id=message_id).rendered_content


def test_mentions_inside_code_mention_nobody(design, member, admin):
    message_id = assert_success(
        post_message(member, type="stream", to="design", topic="t", content="`@**Adam Admin**`\n\n```\n@**all**\n```")
    )["id"]
    assert flags_of(admin, message_id) == 0
    html = Message.objects.get(id=message_id).rendered_content
    assert "user-mention" not in html
    assert "<code>@**Adam Admin**</code>" in html
    assert "<pre><span></span><code>@**all**\n</code></pre>" in html


def test_link_and_image_set_has_columns(design, member):
    plain = assert_success(post_message(member, type="stream", to="design", topic="t", content="plain"))["id"]
    link = assert_success(post_message(member, type="stream", to="design", topic="t", content="see https://a.example"))[
        "id"
    ]
    image = assert_success(
        post_message(member, type="stream", to="design", topic="t", content="![x](https://a.ex/i.png)")
    )["id"]
    rows = dict(Message.objects.values_list("id", "has_link"))
    assert (rows[plain], rows[link], rows[image]) == (False, True, True)
    # No image syntax, as in Zulip: "!" and a link, which no reader's client fetches (the uploads QA
    # pass: any URL was an <img>, a tracking pixel); has_image is for uploaded images (apps.uploads).
    html = Message.objects.get(id=image).rendered_content
    assert "<img" not in html
    assert '!<a href="https://a.ex/i.png"' in html
    assert dict(Message.objects.values_list("id", "has_image")) == {plain: False, link: False, image: False}


def test_content_is_sanitized_html(design, member):
    message_id = assert_success(
        post_message(
            member, type="stream", to="design", topic="t", content="<script>alert(1)</script> [x](javascript:alert(1))"
        )
    )["id"]
    html = Message.objects.get(id=message_id).rendered_content
    assert "<script" not in html
    assert "href" not in html
    assert html.startswith("<p>&lt;script&gt;")


def test_read_by_sender_false_leaves_the_senders_copy_unread(design, member):
    message_id = assert_success(
        post_message(member, type="stream", to="design", topic="t", content="x", read_by_sender="false")
    )["id"]
    assert flags_of(member, message_id) == 0


# --- POST /messages: direct messages -----------------------------------------------------------------


def test_send_direct_message_by_ids_reaches_only_its_people(member, admin, owner):
    body = assert_success(post_message(member, type="private", to=f"[{admin.id}]", content="psst"))
    message = Message.objects.get(id=body["id"])
    assert (message.stream_id, message.topic) == (None, "")
    assert message.recipient == Recipient.objects.get(type=Recipient.Type.PERSONAL, type_id=admin.id)
    assert dict(UserMessage.objects.filter(message=message).values_list("user_id", "flags")) == {
        member.id: READ | UserMessage.IS_PRIVATE,
        admin.id: UserMessage.IS_PRIVATE,
    }
    assert message_ids(owner) == []


def test_send_direct_message_by_emails_and_direct_type(member, admin):
    message_id = assert_success(post_message(member, type="direct", to=admin.delivery_email, content="x"))["id"]
    again = assert_success(post_message(member, type="private", to=f'["{admin.delivery_email}"]', content="y"))["id"]
    assert Message.objects.get(id=message_id).recipient_id == Message.objects.get(id=again).recipient_id


def test_send_group_direct_message_shares_one_recipient(member, admin, owner):
    first = assert_success(post_message(member, type="private", to=[admin.id, owner.id], content="all of us"))["id"]
    second = assert_success(post_message(owner, type="private", to=[member.id, admin.id, owner.id], content="re"))["id"]
    one, two = Message.objects.get(id=first), Message.objects.get(id=second)
    assert one.recipient_id == two.recipient_id
    assert one.recipient.type == Recipient.Type.DIRECT_MESSAGE_GROUP
    assert set(UserMessage.objects.filter(message=one).values_list("user_id", flat=True)) == {
        member.id,
        admin.id,
        owner.id,
    }
    shape = get_messages(admin, [["id", first]])["messages"][0]
    assert [p["id"] for p in shape["display_recipient"]] == sorted([member.id, admin.id, owner.id])


def test_send_direct_message_to_self(member):
    message_id = assert_success(post_message(member, type="private", to=[member.id], content="note"))["id"]
    assert Message.objects.get(id=message_id).recipient == Recipient.objects.get(
        type=Recipient.Type.PERSONAL, type_id=member.id
    )
    [shape] = get_messages(member, [["dm", member.delivery_email]])["messages"]
    assert shape["display_recipient"] == [
        {"id": member.id, "email": member.delivery_email, "full_name": "Mel Member", "is_mirror_dummy": False}
    ]


def test_send_direct_message_to_unknown_user_is_refused(member, foreign_user):
    before = db_state()
    refused(post_message(member, type="private", to=[987654], content="x"), "Invalid user ID 987654", before)
    refused(
        post_message(member, type="private", to=[foreign_user.id], content="x"),
        f"Invalid user ID {foreign_user.id}",
        before,
    )
    refused(
        post_message(member, type="private", to="nobody@example.com", content="x"),
        "Invalid email 'nobody@example.com'",
        before,
    )
    refused(post_message(member, type="private", to="[]", content="x"), "Message must have recipients", before)
    # Ids and emails together, as Zulip: refused (the faults QA pass: both were taken).
    mixed = [foreign_user.id, api_email(member)]
    for to in (mixed, mixed[::-1]):
        refused(
            post_message(member, type="direct", to=to, content="x"),
            "Recipient lists may contain emails or user IDs, but not both.",
            before,
        )


def test_send_direct_message_to_deactivated_user_is_refused(member, admin):
    do_deactivate_user(admin, acting_user=None)
    before = db_state()
    refused(
        post_message(member, type="private", to=[admin.id], content="x"),
        "'admin@example.com' is no longer using Parley.",
        before,
    )
    refused(
        post_message(member, type="private", to="admin@example.com", content="x"),
        "'admin@example.com' is no longer using Parley.",
        before,
    )


def test_send_unauthenticated_is_refused(anonymous, design):
    before = db_state()
    response = anonymous.post("/messages", {"type": "stream", "to": "design", "topic": "t", "content": "x"})
    assert_error(response, 401, "UNAUTHORIZED")
    assert db_state() == before


# --- GET /messages -----------------------------------------------------------------------------------


@pytest.fixture
def history(design, send, member, admin):
    """Five messages in design, from member (ids ascending)."""
    return [send(member, design, f"message {n}", topic="t") for n in range(5)]


def test_get_messages_newest_returns_the_last_ones(history, admin):
    body = get_messages(admin, anchor="newest", num_before=3)
    assert [m["id"] for m in body["messages"]] == history[-3:]
    assert (body["found_anchor"], body["found_oldest"], body["found_newest"], body["history_limited"]) == (
        False,
        False,
        True,
        False,
    )
    assert body["anchor"] == 10_000_000_000_000_000


def test_get_messages_oldest_returns_the_first_ones(history, admin):
    body = get_messages(admin, anchor="oldest", num_before=0, num_after=2)
    assert [m["id"] for m in body["messages"]] == history[:2]
    assert (body["anchor"], body["found_oldest"], body["found_newest"]) == (0, True, False)


def test_get_messages_around_an_anchor(history, admin):
    body = get_messages(admin, anchor=str(history[2]), num_before=1, num_after=1)
    assert [m["id"] for m in body["messages"]] == history[1:4]
    assert (body["anchor"], body["found_anchor"], body["found_oldest"], body["found_newest"]) == (
        history[2],
        True,
        False,
        False,
    )
    whole = get_messages(admin, anchor=str(history[2]), num_before=10, num_after=10)
    assert [m["id"] for m in whole["messages"]] == history
    assert (whole["found_oldest"], whole["found_newest"]) == (True, True)


def test_get_messages_excluding_the_anchor(history, admin):
    body = get_messages(admin, anchor=str(history[2]), num_before=0, num_after=2, include_anchor="false")
    assert [m["id"] for m in body["messages"]] == history[3:5]
    assert body["found_anchor"] is False
    before = get_messages(admin, anchor=str(history[2]), num_before=2, num_after=0, include_anchor="false")
    assert [m["id"] for m in before["messages"]] == history[:2]


def test_get_messages_anchor_excluded_in_the_middle_is_refused(history, admin):
    response = ApiClient(admin).get(
        "/messages", {"anchor": history[2], "num_before": 1, "num_after": 1, "include_anchor": "false"}
    )
    assert_error(response, 400, "BAD_REQUEST", "The anchor can only be excluded at an end of the range")


def test_get_messages_first_unread_anchor(history, admin, member):
    assert_success(flags(ApiClient(admin), history[:2], "add", "read"))
    body = get_messages(admin, anchor="first_unread", num_before=1, num_after=1)
    assert body["anchor"] == history[2]
    assert [m["id"] for m in body["messages"]] == history[1:4]
    legacy = get_messages(admin, anchor="oldest", use_first_unread_anchor="true", num_before=0, num_after=0)
    assert legacy["anchor"] == history[2]
    # Nothing unread (the sender's copies are read): the newest messages.
    assert get_messages(member, anchor="first_unread", num_before=1)["anchor"] == 10_000_000_000_000_000


def test_get_messages_anchor_values(history, admin):
    api = ApiClient(admin)
    assert_error(api.get("/messages", {"num_before": 1}), 400, "BAD_REQUEST", "Missing 'anchor' argument.")
    assert_error(api.get("/messages", {"anchor": "sideways"}), 400, "BAD_REQUEST", "Invalid anchor")
    # Out-of-range anchors are clamped.
    assert get_messages(admin, anchor="-5", num_before=0, num_after=1)["anchor"] == 0
    huge = get_messages(admin, anchor="99999999999999999999", num_before=1)
    assert (huge["anchor"], [m["id"] for m in huge["messages"]]) == (10_000_000_000_000_000, history[-1:])


def test_get_messages_with_too_many_requested_is_refused(history, admin):
    response = ApiClient(admin).get("/messages", {"anchor": "newest", "num_before": 4000, "num_after": 1001})
    assert_error(response, 400, "BAD_REQUEST", "Too many messages requested (maximum 5000).")
    response = ApiClient(admin).get("/messages", {"anchor": "newest", "num_before": -1})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "num_before is too small")


def test_get_messages_message_shape(design, send, member, admin, realm):
    message_id = send(member, design, "**bold** /me", topic="plans")
    [shape] = get_messages(admin)["messages"]
    assert set(shape) == MESSAGE_KEYS | {"stream_id"}
    assert shape == {
        **shape,
        "id": message_id,
        "type": "stream",
        "sender_id": member.id,
        "sender_email": member.delivery_email,
        "sender_full_name": "Mel Member",
        "sender_realm_str": realm.string_id,
        "client": "ZulipMobile",
        "content": "<p><strong>bold</strong> /me</p>",
        "content_type": "text/html",
        "display_recipient": "design",
        "stream_id": design.id,
        "recipient_id": Recipient.objects.get(type=Recipient.Type.STREAM, type_id=design.id).id,
        "subject": "plans",
        "topic_links": [],
        "reactions": [],
        "submessages": [],
        "is_me_message": False,
        "flags": [],
    }
    assert shape["avatar_url"] is None  # client_gravatar defaults to true
    assert get_messages(admin, client_gravatar="false")["messages"][0]["avatar_url"].startswith("https://")
    raw = get_messages(admin, apply_markdown="false")["messages"][0]
    assert (raw["content"], raw["content_type"]) == ("**bold** /me", "text/x-markdown")


def test_get_messages_direct_message_shape(send, member, admin):
    message_id = send(member, [admin], "psst")
    [shape] = get_messages(admin)["messages"]
    assert set(shape) == MESSAGE_KEYS
    assert (shape["id"], shape["type"], shape["subject"], shape["flags"]) == (message_id, "private", "", [])
    assert shape["recipient_id"] == Recipient.objects.get(type=Recipient.Type.PERSONAL, type_id=admin.id).id
    assert shape["display_recipient"] == [
        {"id": member.id, "email": "member@example.com", "full_name": "Mel Member", "is_mirror_dummy": False},
        {"id": admin.id, "email": "admin@example.com", "full_name": "Adam Admin", "is_mirror_dummy": False},
    ]


def test_get_messages_me_message_and_client_name(design, member, admin):
    response = ApiClient(member).post(
        "/messages",
        {"type": "stream", "to": "design", "topic": "t", "content": "/me waves"},
        HTTP_USER_AGENT="ZulipPython/0.9.1 (Linux)",
    )
    assert_success(response)
    [shape] = get_messages(admin)["messages"]
    assert (shape["is_me_message"], shape["client"]) == (True, "ZulipPython")


def test_get_messages_shows_channel_history_as_read_and_historical(design, send, member, moderator):
    message_id = send(member, design, "before you came")
    # moderator is not subscribed: the public channel's history is theirs to read.
    body = get_messages(moderator, [["channel", "design"]])
    assert [(m["id"], m["flags"]) for m in body["messages"]] == [(message_id, ["read", "historical"])]
    assert message_ids(moderator) == []  # without the channel term: only what they received


def test_get_messages_with_bad_params_is_refused(history, admin):
    api = ApiClient(admin)
    response = api.get("/messages", {"anchor": "newest", "narrow": "not json"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "narrow is not valid JSON")
    response = api.get("/messages", {"anchor": "newest", "apply_markdown": "maybe"})
    assert_error(response, 400, "REQUEST_VARIABLE_INVALID", "apply_markdown is not valid JSON")


# --- GET /messages/{message_id} ----------------------------------------------------------------------


def test_get_single_message_returns_raw_content_and_shape(design, send, member, admin):
    message_id = send(member, design, "*hi*", topic="t")
    body = assert_success(ApiClient(admin).get(f"/messages/{message_id}"))
    assert body["raw_content"] == "*hi*"
    assert body["message"]["id"] == message_id
    assert body["message"]["content"] == "<p><em>hi</em></p>"
    assert body["message"]["flags"] == []
    markdown = assert_success(ApiClient(admin).get(f"/messages/{message_id}", {"apply_markdown": "false"}))
    assert markdown["message"]["content"] == "*hi*"


@pytest.mark.parametrize("message_id", ["987654", "0", "9" * 19, "9" * 5000])
def test_get_single_message_unknown_is_invalid(member, message_id):
    # Digits too many for an id name no message either, as in Zulip (not a 404 "Not Found").
    assert_error(ApiClient(member).get(f"/messages/{message_id}"), 400, "BAD_REQUEST", "Invalid message(s)")


# --- POST /messages/flags ----------------------------------------------------------------------------


def test_star_and_unstar_messages(history, admin):
    api = ApiClient(admin)
    body = assert_success(flags(api, history[:2], "add", "starred"))
    assert body["messages"] == history[:2]
    assert [flags_of(admin, m) for m in history[:3]] == [STARRED, STARRED, 0]
    assert_success(flags(api, [history[0]], "remove", "starred"))
    assert [flags_of(admin, m) for m in history[:2]] == [0, STARRED]
    shapes = {m["id"]: m["flags"] for m in get_messages(admin)["messages"]}
    assert shapes[history[1]] == ["starred"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_the_same_change_at_once_is_announced_once(history, admin):
    # The races QA pass: each request found the messages unstarred and announced them starred.
    answers = at_once(*(lambda: flags(ApiClient(admin), history, "add", "starred") for _ in range(4)))
    assert [answer.status_code for answer in answers] == [200] * 4
    events = [json.loads(row.payload) for row in OutboxEvent.objects.filter(event_type="update_message_flags")]
    assert [event["messages"] for event in events if event["flag"] == "starred"] == [history]
    assert [flags_of(admin, m) for m in history] == [STARRED] * 5


def test_mark_read_and_unread_by_flag(history, admin):
    api = ApiClient(admin)
    assert_success(flags(api, history, "add", "read"))
    assert {flags_of(admin, m) for m in history} == {READ}
    assert_success(flags(api, [history[0]], "remove", "read"))
    assert flags_of(admin, history[0]) == 0


def test_collapsed_is_editable(history, admin):
    assert_success(flags(ApiClient(admin), [history[0]], "add", "collapsed"))
    assert flags_of(admin, history[0]) == UserMessage.COLLAPSED
    [shape] = get_messages(admin, [["id", history[0]]])["messages"]
    assert shape["flags"] == ["collapsed"]


def test_reading_channel_history_writes_no_row(design, send, member, moderator):
    message_id = send(member, design)
    assert_success(flags(ApiClient(moderator), [message_id], "add", "read"))
    # Read and historical is how a message without a row shows already.
    assert flags_of(moderator, message_id) is None


def test_flag_on_channel_history_creates_a_historical_row(design, send, member, moderator):
    message_id = send(member, design)
    assert flags_of(moderator, message_id) is None
    assert_success(flags(ApiClient(moderator), [message_id], "add", "starred"))
    assert flags_of(moderator, message_id) == READ | HISTORICAL | STARRED
    [shape] = get_messages(moderator, [["is", "starred"]])["messages"]
    assert shape["flags"] == ["read", "starred", "historical"]


def test_flags_with_invalid_flag_or_op_are_refused(history, admin):
    api = ApiClient(admin)
    before = db_state()
    refused(flags(api, history, "add", "shiny"), "Invalid flag: 'shiny'", before)
    refused(flags(api, history, "add", "mentioned"), "Flag not editable: 'mentioned'", before)
    refused(flags(api, history, "add", "historical"), "Flag not editable: 'historical'", before)
    refused(flags(api, history, "toggle", "read"), "Invalid op", before, code="REQUEST_VARIABLE_INVALID")
    assert_error(
        api.post("/messages/flags", {"op": "add", "flag": "read"}),
        400,
        "REQUEST_VARIABLE_MISSING",
        "Missing 'messages' argument",
    )
    assert db_state() == before


def test_mark_unread_skips_channels_the_user_left(history, send, realm, design, admin):
    from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions

    dm = send(admin, [admin], "note")
    api = ApiClient(admin)
    assert_success(flags(api, [*history, dm], "add", "read"))
    bulk_remove_subscriptions(realm, [admin], [design], acting_user=None)
    body = assert_success(flags(api, [history[0], dm], "remove", "read"))
    assert body["messages"] == [history[0], dm]
    # Unread channel messages are only in subscribed channels: only the direct message changed.
    assert (flags_of(admin, history[0]), flags_of(admin, dm)) == (READ, 0)


def test_unread_state_leaves_out_channels_the_user_left(history, make_stream, send, realm, design, member, admin):
    from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions

    other = make_stream("other", member, admin)
    kept = send(member, other)
    bulk_remove_subscriptions(realm, [admin], [design], acting_user=None)
    state = assert_success(
        ApiClient(admin).post("/register", {"fetch_event_types": ["message", "update_message_flags"]})
    )
    unread = state["unread_msgs"]
    assert unread["streams"] == [{"stream_id": other.id, "topic": "lunch", "unread_message_ids": [kept]}]
    assert unread["count"] == 1


def test_unread_state_lists_the_newest_and_says_older_ones_are_missing(
    make_stream, send, realm, design, member, admin, monkeypatch
):
    """Only the newest MAX_UNREAD_MESSAGES are listed; messages of a channel the user left take no
    place among them (they are left out before counting)."""
    from apps.messages import unread
    from apps.subscriptions.actions.subscriptions import bulk_remove_subscriptions

    monkeypatch.setattr(unread, "MAX_UNREAD_MESSAGES", 3)
    kept = [send(member, design) for _ in range(4)]

    def listed():
        state = assert_success(
            ApiClient(admin).post("/register", {"fetch_event_types": ["message", "update_message_flags"]})
        )
        unread_msgs = state["unread_msgs"]
        ids = [i for bucket in unread_msgs["streams"] for i in bucket["unread_message_ids"]]
        return ids, unread_msgs["old_unreads_missing"]

    assert listed() == (kept[1:], True)
    left = make_stream("left", member, admin)
    [send(member, left) for _ in range(3)]
    bulk_remove_subscriptions(realm, [admin], [left], acting_user=None)
    assert listed() == (kept[1:], True)
    monkeypatch.setattr(unread, "MAX_UNREAD_MESSAGES", 4)
    assert listed() == (kept, False)


@pytest.mark.parametrize("dense", [0, 10**9])
def test_unread_state_is_the_same_for_unread_messages_close_together_or_scattered(
    send, design, member, admin, monkeypatch, dense
):
    """On PostgreSQL, unread messages close together are read with the messages between them (a
    merge), scattered ones one by one (DENSE decides): either way, the same state."""
    from apps.messages import unread

    monkeypatch.setattr(unread, "DENSE", dense)
    api = ApiClient(admin)
    ids = [send(member, design, topic=f"topic {n % 3}") for n in range(12)]
    read = ids[1:5] + ids[6:11]
    assert_success(api.post("/messages/flags", {"messages": read, "op": "add", "flag": "read"}))
    state = assert_success(api.post("/register", {"fetch_event_types": ["message", "update_message_flags"]}))
    unread_msgs = state["unread_msgs"]
    assert unread_msgs["streams"] == [
        {"stream_id": design.id, "topic": "topic 0", "unread_message_ids": [ids[0]]},
        {"stream_id": design.id, "topic": "topic 2", "unread_message_ids": [ids[5], ids[11]]},
    ]
    assert (unread_msgs["count"], unread_msgs["old_unreads_missing"]) == (3, False)


def test_flags_on_unknown_message_are_refused_and_change_nothing(history, admin):
    before = db_state()
    refused(flags(ApiClient(admin), [history[0], 987654], "add", "starred"), "Invalid message(s)", before)


# --- POST /messages/flags/narrow ---------------------------------------------------------------------


def test_flags_for_narrow_marks_the_range(history, admin):
    body = assert_success(
        ApiClient(admin).post(
            "/messages/flags/narrow",
            {
                "anchor": str(history[1]),
                "num_before": 0,
                "num_after": 2,
                "narrow": [["channel", "design"]],
                "op": "add",
                "flag": "read",
            },
        )
    )
    assert body == {
        "result": "success",
        "msg": "",
        "processed_count": 3,
        "updated_count": 3,
        "first_processed_id": history[1],
        "last_processed_id": history[3],
        "found_oldest": False,
        "found_newest": False,
        "ignored_because_not_subscribed_channels": [],
    }
    assert [flags_of(admin, m) for m in history] == [0, READ, READ, READ, 0]


def test_flags_for_narrow_counts_only_changed_messages(history, admin):
    api = ApiClient(admin)
    assert_success(flags(api, history[:2], "add", "starred"))
    body = assert_success(
        api.post(
            "/messages/flags/narrow",
            {"anchor": "oldest", "num_before": 0, "num_after": 10, "narrow": [], "op": "add", "flag": "starred"},
        )
    )
    assert (body["processed_count"], body["updated_count"], body["found_newest"]) == (5, 3, True)


def test_flags_for_narrow_with_invalid_flag_is_refused(history, admin):
    before = db_state()
    refused(
        ApiClient(admin).post(
            "/messages/flags/narrow",
            {"anchor": "oldest", "num_before": 0, "num_after": 10, "narrow": [], "op": "add", "flag": "mentioned"},
        ),
        "Flag not editable: 'mentioned'",
        before,
    )


def test_flags_for_narrow_shortens_a_large_range_and_keeps_the_anchor_inside(history, admin):
    """As Zulip's update_message_flags_for_narrow (the reading QA pass: a range over 5,000 was
    refused, an anchor left out of the middle of one accepted)."""
    api = ApiClient(admin)
    params = {"anchor": "newest", "num_before": 6000, "num_after": 0, "narrow": "[]", "op": "add", "flag": "starred"}
    assert assert_success(api.post("/messages/flags/narrow", params))["processed_count"] == 5
    params = {**params, "anchor": str(history[2]), "num_before": 1, "num_after": 1, "include_anchor": "false"}
    refused(
        api.post("/messages/flags/narrow", params), "The anchor can only be excluded at an end of the range", db_state()
    )


def test_marking_unread_says_which_channels_it_left_alone(design, history, moderator):
    """Zulip's ignored_because_not_subscribed_channels (the reading QA pass: never said)."""
    api = ApiClient(moderator)  # not subscribed to design, which they may read
    body = assert_success(api.post("/messages/flags", {"messages": f"[{history[0]}]", "op": "remove", "flag": "read"}))
    assert body["ignored_because_not_subscribed_channels"] == [design.id]
    narrow = '[["channel", "design"]]'
    params = {"anchor": "newest", "num_before": 3, "num_after": 0, "narrow": narrow, "op": "remove", "flag": "read"}
    body = assert_success(api.post("/messages/flags/narrow", params))
    assert body["ignored_because_not_subscribed_channels"] == [design.id]
    body = assert_success(api.post("/messages/flags", {"messages": f"[{history[0]}]", "op": "add", "flag": "starred"}))
    assert body["ignored_because_not_subscribed_channels"] == []


# --- marking as read ---------------------------------------------------------------------------------


def test_mark_all_as_read(history, send, member, admin):
    dm = send(member, [admin])
    body = assert_success(ApiClient(admin).post("/mark_all_as_read"))
    assert body["complete"] is True
    assert {flags_of(admin, m) for m in [*history, dm]} == {READ}


def test_mark_all_as_read_in_batches_within_a_time_budget(history, send, member, admin, settings):
    """As Zulip: batches of MARK_READ_BATCH_SIZE; past the time budget, `complete: false`, what was
    marked stays marked, and the client's next call goes on."""
    extra = [send(member, [admin]) for _ in range(4)]
    settings.MARK_READ_BATCH_SIZE = 2
    settings.MARK_READ_TIME_BUDGET_SECONDS = 0
    body = assert_success(ApiClient(admin).post("/mark_all_as_read"))
    assert body["complete"] is False
    assert {flags_of(admin, m) for m in [*history, *extra]} == {0}  # the budget was spent at once
    settings.MARK_READ_TIME_BUDGET_SECONDS = 50
    assert assert_success(ApiClient(admin).post("/mark_all_as_read"))["complete"] is True
    assert {flags_of(admin, m) for m in [*history, *extra]} == {READ}


@pytest.mark.parametrize("batch", [1, 2, 3, 7])
def test_mark_all_as_read_batches_cover_unread_messages_between_read_ones(
    history, send, member, admin, settings, batch
):
    """Each batch starts after the message the one before ended at: unread messages among read ones,
    any batch size (dividing their number or not), all end up read and nothing else changes."""
    messages = [*history, *(send(member, [admin]) for _ in range(6))]
    starred = messages[1::3]
    for message in messages[::2]:
        UserMessage.objects.filter(user=admin, message_id=message).update(flags=READ)
    UserMessage.objects.filter(user=admin, message_id__in=starred).update(flags=F("flags").bitor(STARRED))
    settings.MARK_READ_BATCH_SIZE = batch
    assert assert_success(ApiClient(admin).post("/mark_all_as_read"))["complete"] is True
    assert {flags_of(admin, m) for m in messages if m not in starred} == {READ}
    assert {flags_of(admin, m) for m in starred} == {READ | STARRED}


def test_mark_stream_as_read_marks_only_that_channel(history, design, make_stream, send, member, admin):
    other = make_stream("other", member, admin)
    elsewhere = send(member, other)
    dm = send(member, [admin])
    assert_success(ApiClient(admin).post("/mark_stream_as_read", {"stream_id": design.id}))
    assert {flags_of(admin, m) for m in history} == {READ}
    assert (flags_of(admin, elsewhere), flags_of(admin, dm)) == (0, 0)


def test_mark_topic_as_read_marks_only_that_topic(design, send, member, admin):
    lunch = send(member, design, topic="Lunch")
    dinner = send(member, design, topic="dinner")
    assert_success(ApiClient(admin).post("/mark_topic_as_read", {"stream_id": design.id, "topic_name": "lunch"}))
    assert (flags_of(admin, lunch), flags_of(admin, dinner)) == (READ, 0)
    before = db_state()
    refused(
        ApiClient(admin).post("/mark_topic_as_read", {"stream_id": design.id, "topic_name": "breakfast"}),
        "No such topic 'breakfast'",
        before,
    )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_marking_a_topic_read_twice_at_once_is_announced_once(history, design, admin):
    # The verification QA pass: each request listed the messages unread and announced them read.
    mark = {"stream_id": design.id, "topic_name": "t"}
    answers = at_once(*(lambda: ApiClient(admin).post("/mark_topic_as_read", mark) for _ in range(4)))
    assert [answer.status_code for answer in answers] == [200] * 4
    events = [json.loads(row.payload) for row in OutboxEvent.objects.filter(event_type="update_message_flags")]
    assert [event["messages"] for event in events if event["flag"] == "read"] == [history]


def test_mark_stream_as_read_of_invisible_channel_is_refused(make_stream, send, owner, member):
    secret = make_stream("secret", owner, private=True)
    before = db_state()
    refused(ApiClient(member).post("/mark_stream_as_read", {"stream_id": secret.id}), "Invalid channel ID", before)
    refused(
        ApiClient(member).post("/mark_topic_as_read", {"stream_id": secret.id, "topic_name": "t"}),
        "Invalid channel ID",
        before,
    )


def test_a_new_member_starts_with_no_messages(history, realm):
    newcomer = UserFactory(realm=realm, role=Role.MEMBER)
    assert get_messages(newcomer)["messages"] == []


@pytest.mark.parametrize(
    ("user_agent", "params", "sender_flags"),
    [
        ("ZulipMobile/27.192 (Android 14)", {}, 1),  # a person typing: read for them
        ("ZulipTerminal/0.7.0", {}, 1),
        ("ZulipPython/0.9.1 (Linux)", {}, 0),  # a script or integration with the user's key: noticed
        ("", {}, 0),
        ("ZulipPython/0.9.1 (Linux)", {"read_by_sender": True}, 1),
        ("ZulipMobile/27.192 (Android 14)", {"read_by_sender": False}, 0),
    ],
)
def test_the_senders_copy_is_read_when_a_person_typed_it(member, design, user_agent, params, sender_flags):
    body = assert_success(
        api(member).post(
            "/messages",
            {"type": "stream", "to": "design", "topic": "t", "content": "x", **params},
            HTTP_USER_AGENT=user_agent,
        )
    )
    assert flags_of(member, body["id"]) & UserMessage.READ == sender_flags


def test_first_unread_skips_muted_channels_and_topics(make_stream, member, admin):
    quiet = make_stream("quiet", member, admin)
    loud = make_stream("loud", member, admin)
    muted_channel = assert_success(post_message(member, type="stream", to="quiet", topic="t", content="1"))["id"]
    muted_topic = assert_success(post_message(member, type="stream", to="loud", topic="shh", content="2"))["id"]
    wanted = assert_success(post_message(member, type="stream", to="loud", topic="news", content="3"))["id"]
    Subscription.objects.filter(user=admin, stream=quiet).update(is_muted=True)
    assert_success(api(admin).post("/user_topics", {"stream_id": loud.id, "topic": "shh", "visibility_policy": 1}))
    assert get_messages(admin, anchor="first_unread", num_before=0, num_after=0)["anchor"] == wanted
    # Narrowed to the muted channel, its own first unread message is the anchor.
    narrowed = get_messages(admin, [["channel", "quiet"]], anchor="first_unread", num_before=0, num_after=0)
    assert narrowed["anchor"] == muted_channel
    assert muted_topic < wanted
    # Narrowed to a channel, a muted topic of it still does not hold the reader back (the reading
    # QA pass: it was the anchor), as Zulip's exclude_muting_conditions.
    narrowed = get_messages(admin, [["channel", "loud"]], anchor="first_unread", num_before=0, num_after=0)
    assert narrowed["anchor"] == wanted


def test_a_message_arriving_while_a_channel_is_marked_read_stays_unread(design, send, member, admin, capture_events):
    """One that arrives between the listing of the unread messages and their marking (the race QA
    pass: it was marked read, and no event said so: clients showed it unread until they registered
    again) is left unread: what is marked is what the event lists."""
    listed = [send(member, design), send(member, design)]
    late = send(member, design)
    UserMessage.objects.filter(user=admin, message_id=late).delete()  # received while the others are marked
    arriving = [late]
    listing = f'SELECT "{UserMessage._meta.db_table}"."message_id"'

    def arrive_after_the_listing(execute, sql, params, many, context):
        if any(statements) and arriving:  # the statement after the listing (read whole by then)
            UserMessage.objects.create(user=admin, message_id=arriving.pop(), flags=0)
        statements.append(sql.startswith(listing) and "ORDER BY" in sql)
        return execute(sql, params, many, context)

    statements = []  # whether each was the listing
    with capture_events(admin) as received, connection.execute_wrapper(arrive_after_the_listing):
        assert_success(ApiClient(admin).post("/mark_stream_as_read", {"stream_id": design.id}))
    assert [e["messages"] for e in received[admin.id] if e["type"] == "update_message_flags"] == [listed]
    assert [flags_of(admin, m) for m in [*listed, late]] == [READ, READ, 0]
