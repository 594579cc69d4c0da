"""PATCH /messages/{id} with stream_id: moving messages to another channel (one, later or all of a
topic, with or without a new topic), as Zulip does: who may, until when, and where to; the events
to those who keep, lose or gain the messages; their rows; the channels' first_message_id; topic
policies following a whole topic; the Notification Bot's notices; the edit history."""

import json
import time

import pytest
from django.db import connection

from apps.events.models import OutboxEvent
from apps.messages.models import Message, NotificationBot, UserMessage
from apps.subscriptions.actions.channels import do_deactivate_stream
from apps.subscriptions.actions.user_topics import do_set_user_topic_visibility_policy
from apps.subscriptions.models import Stream, UserTopic
from tests.api import api_for, assert_success
from tests.concurrency import at_once
from tests.messages.test_edit_message import edit, refused, sent_ago, set_group, shown, topic_ids

BULK = '{"bulk_message_deletion": true}'
FOLLOWED, MUTED = UserTopic.VisibilityPolicy.FOLLOWED, UserTopic.VisibilityPolicy.MUTED


@pytest.fixture
def design(make_stream, member, admin, moderator):
    return make_stream("design", member, admin, moderator)


@pytest.fixture
def kitchen(make_stream, member, admin, moderator):
    return make_stream("kitchen", member, admin, moderator)


def mention(user) -> str:
    return f"@_**{user.full_name}|{user.id}**"


def notices(stream, topic) -> list[str]:
    bot = NotificationBot.objects.get(realm=stream.realm).bot
    return list(
        Message.objects.filter(stream=stream, topic=topic, sender=bot).order_by("id").values_list("content", flat=True)
    )


def update_events(events) -> list[dict]:
    return [e for e in events if e["type"] == "update_message"]


def test_a_whole_topic_moves_to_another_channel(design, kitchen, send, member, admin, capture_events):
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(3)]
    with capture_events(member) as received:
        assert_success(
            edit(
                admin, ids[1], stream_id=kitchen.id, propagate_mode="change_all", send_notification_to_old_thread="true"
            )
        )
    assert topic_ids(kitchen, "lunch")[:3] == ids
    assert notices(kitchen, "lunch") == [f"This topic was moved here from #**design>lunch** by {mention(admin)}."]
    assert notices(design, "lunch") == [f"This topic was moved to #**kitchen>lunch** by {mention(admin)}."]
    notice_html = Message.objects.filter(stream=design, topic="lunch").latest("id").rendered_content
    assert f'<a class="stream-topic" data-stream-id="{kitchen.id}" ' in notice_html  # a link, as in Zulip
    [event] = update_events(received[member.id])
    keys = ("message_id", "message_ids", "stream_id", "new_stream_id", "orig_subject", "propagate_mode")
    assert {k: event[k] for k in keys} == {"message_id": ids[1], "message_ids": ids, "stream_id": design.id,
                                           "new_stream_id": kitchen.id, "orig_subject": "lunch",
                                           "propagate_mode": "change_all"}  # fmt: skip
    assert "subject" not in event  # the topic did not change
    message = shown(member, ids[0])
    assert (message["stream_id"], message["subject"]) == (kitchen.id, "lunch")
    entry = message["edit_history"][0]
    assert (entry["prev_stream"], entry["stream"], entry["user_id"]) == (design.id, kitchen.id, admin.id)
    assert "prev_topic" not in entry
    kitchen.refresh_from_db()
    design.refresh_from_db()
    assert kitchen.first_message_id == ids[0]
    # design kept nothing but the notice sent afterwards
    assert design.first_message_id == Message.objects.filter(stream=design).order_by("id").first().id


@pytest.mark.parametrize(
    ("mode", "moved", "new_notice", "old_notice"),
    [
        ("change_one", [1], "[A message]({link}) was moved here from {old} by {user}.",
         "A message was moved from this topic to {new} by {user}."),
        ("change_later", [1, 2], "2 messages were moved here from {old} by {user}.",
         "2 messages were moved from this topic to {new} by {user}."),
    ],
)  # fmt: skip
def test_part_of_a_topic_moves_with_a_new_topic(
    design, kitchen, send, member, admin, mode, moved, new_notice, old_notice
):
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(3)]
    assert_success(
        edit(admin, ids[1], stream_id=kitchen.id, topic="food", propagate_mode=mode,
             send_notification_to_old_thread="true")
    )  # fmt: skip
    assert topic_ids(kitchen, "food")[: len(moved)] == [ids[n] for n in moved]
    assert topic_ids(design, "lunch")[: 3 - len(moved)] == [i for n, i in enumerate(ids) if n not in moved]
    link = f"{admin.realm.url}/#narrow/channel/{kitchen.id}-kitchen/topic/food/near/{ids[1]}"
    words = {"link": link, "old": "#**design>lunch**", "new": "#**kitchen>food**", "user": mention(admin)}
    assert notices(kitchen, "food") == [new_notice.format(**words)]
    assert notices(design, "lunch") == [old_notice.format(**words)]
    entry = shown(member, ids[1])["edit_history"][0]
    assert {k: entry[k] for k in ("prev_stream", "stream", "prev_topic", "topic")} == {
        "prev_stream": design.id, "stream": kitchen.id, "prev_topic": "lunch", "topic": "food"}  # fmt: skip


def test_no_notices_when_not_asked(design, kitchen, send, member, admin):
    message_id = send(member, design, topic="lunch")
    assert_success(edit(admin, message_id, stream_id=kitchen.id, send_notification_to_new_thread="false"))
    assert topic_ids(kitchen, "lunch") == [message_id]
    assert topic_ids(design, "lunch") == []


def test_a_topic_rename_within_a_channel_sends_the_notice_but_resolving_sends_its_own(design, send, member, admin):
    message_id = send(member, design, topic="lunch")
    assert_success(edit(admin, message_id, topic="food", propagate_mode="change_all"))
    assert notices(design, "food") == [f"This topic was moved here from #**design>lunch** by {mention(admin)}."]
    assert_success(edit(admin, message_id, topic="✔ food", propagate_mode="change_all"))
    # The notice moved with the topic; resolving it sent no "moved here", only the resolve notice.
    assert notices(design, "✔ food") == [
        f"This topic was moved here from #**design>lunch** by {mention(admin)}.",
        f"{mention(admin)} has marked this topic as resolved.",
    ]


def test_a_notice_in_a_private_channel_links_what_the_mover_knows(make_stream, send, member, admin):
    """As Zulip's (the notice is rendered with the mover as acting user): the Notification Bot is in
    no channel, yet the link to a private channel the mover is in is a link."""
    secret = make_stream("secret", member, admin, private=True)
    message_id = send(member, secret, topic="lunch")
    assert_success(edit(admin, message_id, topic="food", propagate_mode="change_all"))
    bot = NotificationBot.objects.get(realm=secret.realm).bot
    notice = Message.objects.get(stream=secret, sender=bot)
    assert f'<a class="stream-topic" data-stream-id="{secret.id}"' in notice.rendered_content


# --- who may, until when, where to ----------------------------------------------------------------


def test_who_may_move_between_channels(realm, design, kitchen, send, member, moderator):
    message_id = send(member, design, topic="lunch")
    set_group(realm, "can_move_messages_between_channels_group", "role:moderators")
    refused(member, message_id, "You don't have permission to move this message", stream_id=kitchen.id)
    assert_success(edit(moderator, message_id, stream_id=kitchen.id))


def test_the_time_limit_for_moving_between_channels(realm, design, kitchen, send, member, moderator, admin):
    first, second = send(member, design, topic="lunch"), send(member, design, topic="lunch")
    realm.move_messages_between_streams_limit_seconds = 3600
    realm.save()
    sent_ago(first, 7200)
    refused(member, first, "The time limit for editing this message's channel has passed", stream_id=kitchen.id)
    limited = "You only have permission to move the 1/2 most recent messages in this topic."
    code = "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"
    body = refused(member, second, limited, code=code, stream_id=kitchen.id, propagate_mode="change_all")
    assert (body["first_message_id_allowed_to_move"], body["total_messages_in_topic"]) == (second, 2)
    assert_success(edit(moderator, first, stream_id=kitchen.id, propagate_mode="change_all"))
    assert topic_ids(kitchen, "lunch")[:2] == [first, second]
    assert_success(edit(admin, first, stream_id=design.id, propagate_mode="change_one"))  # nor to administrators


def test_the_destination_must_be_one_the_mover_may_post_in(
    realm, make_stream, design, kitchen, send, member, admin, other_realm
):
    message_id = send(member, design, topic="lunch")
    secret = make_stream("secret", admin, private=True)
    elsewhere = make_stream("elsewhere", in_realm=other_realm)
    refused(member, message_id, "Invalid channel ID", stream_id=secret.id)
    refused(member, message_id, "Invalid channel ID", stream_id=elsewhere.id)
    refused(member, message_id, "Invalid channel ID", stream_id=10**9)
    announce = make_stream("announce", member, admin)
    announce.can_send_message_group = announce.can_administer_channel_group
    announce.save()
    refused(member, message_id, "You do not have permission to post in this channel.", stream_id=announce.id)
    do_deactivate_stream(kitchen, acting_user=None)
    refused(member, message_id, "Invalid channel ID", stream_id=kitchen.id)
    refused(member, message_id, "Cannot change message content while changing channel", stream_id=announce.id,
            content="x")  # fmt: skip


# --- who keeps, loses and gains the messages --------------------------------------------------------


def test_to_a_private_channel_those_not_subscribed_lose_the_messages(
    make_stream, design, send, member, admin, moderator, capture_events
):
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(2)]
    secret = make_stream("secret", admin, moderator, private=True, history_public=False)
    with capture_events(member, admin, moderator, client_capabilities=BULK) as received:
        assert_success(
            edit(admin, ids[0], stream_id=secret.id, propagate_mode="change_all",
                 send_notification_to_new_thread="false")
        )  # fmt: skip
    assert [e["type"] for e in received[member.id]] == ["delete_message", "stream"]  # first_message_id
    deleted = received[member.id][0]
    assert deleted == {"type": "delete_message", "message_type": "stream", "stream_id": design.id, "topic": "lunch",
                       "message_ids": ids}  # fmt: skip
    for keeper in (admin, moderator):
        [event] = update_events(received[keeper.id])
        assert (event["new_stream_id"], event["message_ids"]) == (secret.id, ids)
    assert not UserMessage.objects.filter(user=member, message_id__in=ids).exists()
    assert set(UserMessage.objects.filter(message_id__in=ids).values_list("user_id", flat=True)) == {
        admin.id, moderator.id}  # fmt: skip
    refused(member, ids[0], "Invalid message(s)", topic="x")


def starred(user) -> list[int]:
    narrow = '[{"operator": "is", "operand": "starred"}]'
    body = assert_success(api_for(user).get("/messages", {"anchor": "newest", "num_before": 10, "narrow": narrow}))
    return [m["id"] for m in body["messages"]]


def test_a_star_on_a_public_channels_message_does_not_follow_it_into_a_private_channel(
    make_stream, design, kitchen, send, member, admin, moderator, owner, capture_events
):
    """The permissions QA pass: starring a public channel's message makes a row for someone never
    subscribed; the message moved to a private channel stayed theirs (its channel, its later
    edits). To a public channel they may read, the star stays."""
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(2)]  # the first moves
    star = {"messages": f"[{ids[0]}]", "op": "add", "flag": "starred"}
    assert_success(api_for(owner).post("/messages/flags", star))
    assert_success(edit(admin, ids[0], stream_id=kitchen.id, send_notification_to_new_thread="false"))
    assert starred(owner) == [ids[0]]
    secret = make_stream("secret", admin, moderator, private=True)
    with capture_events(owner, client_capabilities=BULK) as received:
        assert_success(
            edit(admin, ids[0], stream_id=secret.id, propagate_mode="change_all",
                 send_notification_to_new_thread="false")
        )  # fmt: skip
    [deleted] = [e for e in received[owner.id] if e["type"] != "stream"]  # first_message_id
    assert (deleted["type"], deleted["message_ids"]) == ("delete_message", [ids[0]])
    assert not UserMessage.objects.filter(user=owner, message_id=ids[0]).exists()
    assert starred(owner) == []
    refused(owner, ids[0], "Invalid message(s)", topic="x")


def test_subscribers_of_a_protected_history_channel_gain_rows(make_stream, realm, design, send, member, admin, owner):
    message_id = send(member, design, topic="lunch")
    secret = make_stream("secret", admin, member, owner, private=True, history_public=False)
    assert not UserMessage.objects.filter(user=owner, message_id=message_id).exists()
    assert_success(edit(admin, message_id, stream_id=secret.id, send_notification_to_new_thread="false"))
    row = UserMessage.objects.get(user=owner, message_id=message_id)
    assert row.flags & UserMessage.READ
    assert shown(owner, message_id)["stream_id"] == secret.id


def test_a_guest_not_subscribed_to_the_new_public_channel_loses_the_messages(
    make_stream, design, kitchen, send, member, admin, guest, capture_events
):
    from apps.subscriptions.actions.subscriptions import bulk_add_subscriptions

    bulk_add_subscriptions(design.realm, [design], [guest], acting_user=None)
    message_id = send(member, design, topic="lunch")
    with capture_events(guest, member, client_capabilities=BULK) as received:
        assert_success(edit(admin, message_id, stream_id=kitchen.id, send_notification_to_new_thread="false"))
    assert [e["type"] for e in received[guest.id] if e["type"] != "stream"] == ["delete_message"]
    assert [e["type"] for e in received[member.id] if e["type"] != "stream"] == ["update_message"]
    refused(guest, message_id, "Invalid message(s)", topic="x")


# --- topic policies follow a whole topic ------------------------------------------------------------


def test_topic_policies_follow_a_whole_topic(design, kitchen, send, member, admin, moderator, capture_events):
    message_id = send(member, design, topic="lunch")
    send(member, kitchen, topic="food")
    do_set_user_topic_visibility_policy(member, design, "lunch", visibility_policy=FOLLOWED, acting_user=None)
    do_set_user_topic_visibility_policy(moderator, kitchen, "food", visibility_policy=MUTED, acting_user=None)
    with capture_events(member) as received:
        assert_success(edit(admin, message_id, stream_id=kitchen.id, topic="food", propagate_mode="change_all"))
    policies = {(u.user_id, u.stream_id, u.topic_name): u.visibility_policy for u in UserTopic.objects.all()}
    # The member's follow goes with the topic; the moderator's mute yields to the merge (none).
    assert policies == {(member.id, kitchen.id, "food"): FOLLOWED}
    topics = [(e["stream_id"], e["topic_name"], e["visibility_policy"]) for e in received[member.id]
              if e["type"] == "user_topic"]  # fmt: skip
    assert topics == [(design.id, "lunch", 0), (kitchen.id, "food", FOLLOWED)]


def test_topic_policies_follow_a_topic_renamed_in_its_channel(design, send, member, admin):
    message_id = send(member, design, topic="lunch")
    do_set_user_topic_visibility_policy(member, design, "lunch", visibility_policy=MUTED, acting_user=None)
    assert_success(edit(admin, message_id, topic="dinner", propagate_mode="change_all"))
    assert list(UserTopic.objects.values_list("stream_id", "topic_name", "visibility_policy")) == [
        (design.id, "dinner", MUTED)]  # fmt: skip


def test_a_partial_move_leaves_topic_policies(design, kitchen, send, member, admin):
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(2)]
    do_set_user_topic_visibility_policy(member, design, "lunch", visibility_policy=MUTED, acting_user=None)
    assert_success(edit(admin, ids[1], stream_id=kitchen.id, propagate_mode="change_one"))
    assert list(UserTopic.objects.values_list("stream_id", "topic_name")) == [(design.id, "lunch")]


def test_a_stream_the_move_empties_gets_no_first_message(design, kitchen, send, member, admin):
    message_id = send(member, kitchen, topic="old")
    moved = send(member, design, topic="lunch")
    assert_success(edit(admin, moved, stream_id=kitchen.id, send_notification_to_new_thread="false"))
    design.refresh_from_db()
    kitchen.refresh_from_db()
    assert (design.first_message_id, kitchen.first_message_id) == (None, message_id)
    assert Stream.objects.get(id=design.id).first_message_id is None


def test_a_move_from_the_empty_topic_names_it_for_older_clients(design, kitchen, send, member, admin, capture_events):
    message_id = send(member, design, topic="")
    with capture_events(member) as received:
        assert_success(edit(admin, message_id, stream_id=kitchen.id, send_notification_to_new_thread="false"))
    [event] = update_events(received[member.id])
    assert event["orig_subject"] == "general chat"
    assert "subject" not in event


def test_a_move_between_channels_is_shown_where_only_moves_are(realm, design, kitchen, send, member, admin):
    message_id = send(member, design, topic="lunch")
    realm.message_edit_history_visibility_policy = "moves"
    realm.save()
    assert_success(edit(admin, message_id, stream_id=kitchen.id, send_notification_to_new_thread="false"))
    [entry] = shown(member, message_id)["edit_history"]
    assert (entry["prev_stream"], entry["stream"]) == (design.id, kitchen.id)
    history = assert_success(api_for(member).get(f"/messages/{message_id}/history"))["message_history"]
    assert [(v.get("prev_stream"), v["topic"]) for v in history] == [(None, "lunch"), (design.id, "lunch")]


def test_content_and_topic_edited_together_for_later_messages(design, send, member):
    first, second = send(member, design, "hello", topic="lunch"), send(member, design, "later", topic="lunch")
    assert_success(edit(member, first, content="hello!", topic="food", propagate_mode="change_later"))
    assert [(m.content, m.topic) for m in Message.objects.filter(id__in=[first, second]).order_by("id")] == [
        ("hello!", "food"), ("later", "food")]  # fmt: skip


@pytest.mark.parametrize("groups", [20, 0])  # one UPDATE per distinct history; bulk_update past the cap
def test_each_moved_message_keeps_its_own_history(monkeypatch, design, kitchen, send, member, admin, groups):
    monkeypatch.setattr("apps.messages.actions.move.MAX_HISTORY_GROUPS", groups)
    ids = [send(member, design, f"m{n}", topic="lunch") for n in range(3)]
    assert_success(edit(member, ids[0], content="edited"))
    assert_success(edit(admin, ids[2], stream_id=kitchen.id, propagate_mode="change_all"))
    histories = {i: Message.objects.get(id=i).edit_history for i in ids}
    assert [len(histories[i]) for i in ids] == [2, 1, 1]
    assert histories[ids[0]][1]["prev_content"] == "m0"
    assert all(histories[i][0]["stream"] == kitchen.id for i in ids)
    assert set(Message.objects.filter(id__in=ids).values_list("stream_id", "topic")) == {(kitchen.id, "lunch")}


def test_notices_arrive_read_for_the_mover_only(design, kitchen, send, member, admin):
    from apps.messages.models import Message, UserMessage

    ids = [send(member, design, "m", topic="lunch")]
    assert_success(edit(admin, ids[0], stream_id=kitchen.id, propagate_mode="change_all"))
    notice = Message.objects.filter(stream=kitchen, topic="lunch").exclude(id__in=ids).get()
    flags = dict(UserMessage.objects.filter(message=notice).values_list("user_id", "flags"))
    assert flags[admin.id] & UserMessage.READ
    assert not flags[member.id] & UserMessage.READ


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_moves_at_the_same_moment_are_made_one_after_the_other(design, kitchen, send, member, admin, moderator):
    """Moves of one topic from different messages (each locks the topic's messages) and moves
    between two channels both ways (each updates both channels) deadlocked on PostgreSQL, and the
    loser was told the database could not be reached: each now waits for the other."""
    for round_ in range(3):
        ids = [send(member, design, f"m{n}", topic=f"busy {round_}") for n in range(20)]
        back = [send(member, kitchen, f"k{n}", topic=f"back {round_}") for n in range(20)]
        answers = at_once(
            lambda ids=ids, r=round_: edit(admin, ids[0], topic=f"first {r}", propagate_mode="change_all"),
            lambda ids=ids, r=round_: edit(moderator, ids[-1], topic=f"second {r}", propagate_mode="change_all"),
            lambda ids=ids: edit(admin, ids[10], stream_id=kitchen.id, propagate_mode="change_all"),
            lambda back=back: edit(moderator, back[5], stream_id=design.id, propagate_mode="change_all"),
        )
        assert [answer.status_code for answer in answers] == [200] * 4, [a.content for a in answers]
        # The topic moved as a whole each time: its messages are together, wherever the last move put them.
        assert len(set(Message.objects.filter(id__in=ids).values_list("stream_id", "topic"))) == 1
        assert len(set(Message.objects.filter(id__in=back).values_list("stream_id", "topic"))) == 1


def later(call, seconds: float = 0.05):
    """`call`, a moment after the others of at_once have started."""
    time.sleep(seconds)
    return call()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_an_edit_waiting_for_a_move_edits_the_message_where_it_went(design, kitchen, send, member, admin):
    # The races QA pass: a content edit waiting for a move to another channel read the message's new
    # row with none of its channel (a 500 in 8 of 8 rounds).
    for round_ in range(3):
        ids = [send(member, design, f"m{n}", topic=f"moving {round_}") for n in range(20)]
        answers = at_once(
            lambda ids=ids: edit(admin, ids[0], stream_id=kitchen.id, propagate_mode="change_all"),
            lambda ids=ids: later(lambda: edit(member, ids[-1], content="edited")),
        )
        assert [answer.status_code for answer in answers] == [200, 200], [a.content for a in answers]
        assert Message.objects.get(id=ids[-1]).stream_id == kitchen.id
        assert Message.objects.get(id=ids[-1]).content == "edited"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["topic", "channel"])
def test_a_deletion_at_the_moment_of_a_move(design, kitchen, send, member, admin, owner, where):
    # The races QA pass: a move locks the channel, then the messages; a deletion locked its message,
    # then the channel: a deadlock, the move (or the deletion) answered 503. And a deletion that
    # waited for the move announced the message where it was no more.
    for round_ in range(3):
        ids = [send(member, design, f"m{n}", topic=f"busy {round_}") for n in range(10)]
        move = {"topic": f"moved {round_}"} if where == "topic" else {"stream_id": kitchen.id}
        answers = at_once(
            lambda ids=ids, move=move: edit(owner, ids[0], propagate_mode="change_all", **move),
            lambda ids=ids: api_for(admin).delete(f"/messages/{ids[3]}"),
        )
        assert [answer.status_code for answer in answers] == [200, 200], [a.content for a in answers]
        assert not Message.objects.filter(id=ids[3]).exists()
        [deleted] = OutboxEvent.objects.filter(event_type="delete_message", payload__contains=f"[{ids[3]}]")
        place = Message.objects.filter(id=ids[0]).values_list("stream_id", "topic").get()
        assert (json.loads(deleted.payload)["stream_id"], json.loads(deleted.payload)["topic"]) in (
            place,
            (design.id, f"busy {round_}"),  # deleted before the move
        )
