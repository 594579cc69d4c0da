"""The rules of the messages actions, called directly: who may send where (channel permissions,
topic policies, direct messages to deactivated users, bots and guests), what a send keeps out of its
transaction, the flags a user may change, muting, alert words, topic deletion and its audit log, and
who may act for whom."""

import threading

import pytest
from django.db import close_old_connections, connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.core.errors import JsonableError
from apps.groups.models import SystemGroups
from apps.messages.actions.alert_words import check_add_alert_words, do_add_alert_words, do_remove_alert_words
from apps.messages.actions.delete_topic import check_delete_topic
from apps.messages.actions.flags import check_update_message_flags, do_mark_messages_read
from apps.messages.actions.muted_users import check_mute_user, do_unmute_user
from apps.messages.actions.send import check_send_message, do_send_message
from apps.messages.models import AlertWord, Message, MutedUser, UserMessage
from apps.realms.models import AuditLogEventType, RealmAuditLog
from apps.subscriptions.models import Stream, UserTopic
from apps.users.actions.activation import do_deactivate_user
from apps.users.models import User
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory
from tests.messages.conftest import db_state, flags_of

READ, STARRED, HISTORICAL = UserMessage.READ, UserMessage.STARRED, UserMessage.HISTORICAL


@pytest.fixture
def design(make_stream, member, admin, owner):
    return make_stream("design", member, admin, owner)


def send(sender, to, content="hello", topic="lunch", *, acting_user="sender") -> Message:
    """check_send_message as POST /messages calls it: to a channel (by name) or to users (ids)."""
    acting = sender if acting_user == "sender" else acting_user
    if isinstance(to, Stream):
        return check_send_message(sender, kind="stream", to=to.name, topic=topic, content=content, acting_user=acting)
    return check_send_message(
        sender, kind="private", to=[u.id for u in to], topic=None, content=content, acting_user=acting
    )


def refused(msg: str, call, *args, **kwargs) -> None:
    """The action refuses with `msg` and writes nothing."""
    before = db_state()
    with pytest.raises(JsonableError) as error:
        call(*args, **kwargs)
    assert error.value.msg == msg
    assert db_state() == before


def patch_stream(admin, stream, **params) -> None:
    assert_success(ApiClient(admin).patch(f"/streams/{stream.id}", params))


# --- who may send to a channel ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "allowed"),
    [("owner", True), ("admin", True), ("moderator", True), ("member", True), ("guest", False), ("bot", True)],
)
def test_a_public_channel_takes_messages_from_everyone_but_guests_who_are_not_in_it(
    request, make_stream, owner, role, allowed
):
    public = make_stream("public", owner)
    user = request.getfixturevalue(role)
    if allowed:
        assert send(user, public).stream_id == public.id
    else:  # a public channel a guest is not in does not exist for them
        refused("Channel 'public' does not exist", send, user, public)


def test_a_private_channel_takes_messages_from_its_subscribers_only(make_stream, owner, admin, member, moderator):
    secret = make_stream("secret", owner, member, private=True)
    assert send(member, secret).stream_id == secret.id
    refused("Channel 'secret' does not exist", send, moderator, secret)
    # An administrator sees the channel, but may not post without being subscribed.
    refused("Not authorized to send to channel 'secret'", send, admin, secret)


def test_a_guest_sends_to_the_channels_they_are_subscribed_to(make_stream, owner, guest):
    public = make_stream("public", owner, guest)
    assert send(guest, public).stream_id == public.id


def test_a_bot_sends_where_its_owner_is_subscribed(make_stream, owner, member, bot):
    theirs = make_stream("theirs", owner, member, private=True)  # the bot's owner is member
    assert send(bot, theirs).stream_id == theirs.id
    closed = make_stream("closed", owner, private=True)
    refused("Channel 'closed' does not exist", send, bot, closed)


def test_an_archived_channel_takes_no_messages(design, member, admin):
    assert_success(ApiClient(admin).delete(f"/streams/{design.id}"))
    refused("Not authorized to send to channel 'design'", send, member, Stream.objects.get(id=design.id))


def test_can_send_message_group_decides_who_posts(design, sys_groups, owner, admin, moderator, member, bot):
    patch_stream(admin, design, can_send_message_group={"new": sys_groups[SystemGroups.MODERATORS].id})
    for user in (owner, admin, moderator):
        assert send(user, design).stream_id == design.id
    refused("You do not have permission to post in this channel.", send, member, design)
    refused("You do not have permission to post in this channel.", send, bot, design)  # as its owner


def test_a_bot_posts_where_its_owner_may_post(design, sys_groups, admin, member, bot):
    patch_stream(admin, design, can_send_message_group={"new": {"direct_members": [member.id], "direct_subgroups": []}})
    assert send(bot, design).stream_id == design.id


# --- topics ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["inherit", "allow_empty_topic"])
def test_topics_policies_that_allow_every_topic(design, admin, member, policy):
    patch_stream(admin, design, topics_policy=policy)
    assert send(member, design, topic="general chat").topic == ""
    assert send(member, design, topic="lunch").topic == "lunch"


def test_disable_empty_topic_refuses_the_empty_topic(design, admin, member):
    patch_stream(admin, design, topics_policy="disable_empty_topic")
    msg = 'Sending messages to the "general chat" topic is not allowed in this channel.'
    for topic in ("", "  ", "general chat"):
        refused(msg, send, member, design, topic=topic)
    assert send(member, design, topic="lunch").topic == "lunch"


def test_empty_topic_only_takes_only_the_empty_topic(design, admin, member):
    patch_stream(admin, design, topics_policy="empty_topic_only")
    refused('Only the "general chat" topic is allowed in this channel.', send, member, design, topic="lunch")
    assert send(member, design, topic="general chat").topic == ""


def test_a_topic_is_stripped_cut_to_its_length_and_refused_with_unprintable_characters(design, member):
    assert send(member, design, topic="  lunch  ").topic == "lunch"
    assert send(member, design, topic="x" * 100).topic == "x" * 57 + "..."
    refused("Invalid character in topic, at position 3!", send, member, design, topic="ab\x07c")


def test_a_channel_message_needs_a_topic(design, member):
    refused("Missing topic", check_send_message, member, kind="stream", to="design", topic=None, content="x",
            acting_user=member)  # fmt: skip


# --- direct messages ---------------------------------------------------------------------------------


def test_a_direct_message_to_a_deactivated_user_is_refused(member, admin):
    do_deactivate_user(admin, acting_user=None)
    refused("'admin@example.com' is no longer using Parley.", send, member, [admin])


def test_direct_messages_reach_bots_and_guests_and_guests_send_them(member, guest, bot):
    to_bot = send(member, [bot])
    assert flags_of(bot, to_bot.id) == 0
    to_guest = send(member, [guest])
    assert flags_of(guest, to_guest.id) == 0
    from_guest = send(guest, [member, bot])
    assert (flags_of(member, from_guest.id), flags_of(bot, from_guest.id)) == (0, 0)


def test_a_direct_message_to_another_organization_is_refused(member, foreign_user):
    refused(f"Invalid user ID {foreign_user.id}", send, member, [foreign_user])


# --- the send's transaction --------------------------------------------------------------------------


def statements(queries) -> list[str]:
    return [query["sql"] for query in queries]


def test_a_refused_message_opens_no_transaction(design, member):
    with CaptureQueriesContext(connection) as queries, pytest.raises(JsonableError):
        send(member, design, topic="ab\x07c")
    assert not any(sql.startswith("SAVEPOINT") for sql in statements(queries))


@pytest.mark.parametrize("to", ["channel", "people"])
def test_a_message_is_checked_and_rendered_before_its_transaction(design, member, admin, owner, to):
    """The transaction holds the writes: the access checks, the mentions' lookup and the
    recipients' reads come before it; inside, only what the writes need (the recipient row; which
    of the people are outgoing-webhook bots, whose deliveries are queued with the message; whether
    one of those mentioned may be emailed about it, whose task is queued with it too)."""
    target = design if to == "channel" else [admin, owner]
    send(member, target, "the first")  # not the channel's first message: that one announces it
    check_add_alert_words(admin, ["hi"], acting_user=admin)
    with CaptureQueriesContext(connection) as queries:
        message = send(member, target, "hi @**Adam Admin** and @**all**")
    sql = statements(queries)
    begin = next(index for index, statement in enumerate(sql) if statement.startswith("SAVEPOINT"))
    assert any("full_name" in statement for statement in sql[:begin])  # the mentions' lookup
    assert any('FROM "chat_messages_alertword"' in statement for statement in sql[:begin])  # the recipients' words
    assert flags_of(admin, message.id) & UserMessage.HAS_ALERT_WORD
    reads = [s for s in sql[begin:] if s.startswith("SELECT")]
    emailable = [s for s in reads if 'FROM "users_user"' in s and "enable_offline_email_notifications" in s]
    webhook_bots = [s for s in reads if 'FROM "users_user"' in s and "bot_type" in s and s not in emailable]
    assert len(webhook_bots) == len(emailable) == 1
    assert all(
        'FROM "chat_messages_recipient"' in s or 'FROM "chat_messages_directmessagegroup"' in s
        for s in reads
        if s not in webhook_bots + emailable
    )


# --- who may act ------------------------------------------------------------------------------------


def test_nobody_acts_for_someone_else(design, member, admin):
    message = send(member, design)
    before = db_state()
    with pytest.raises(ValueError, match="cannot act for"):
        send(member, design, acting_user=admin)
    with pytest.raises(ValueError, match="cannot act for"):
        check_update_message_flags(member, op="add", flag="starred", message_ids=[message.id], acting_user=admin)
    with pytest.raises(ValueError, match="cannot act for"):
        do_mark_messages_read(member, acting_user=admin)
    with pytest.raises(ValueError, match="cannot act for"):
        check_mute_user(member, admin, acting_user=admin)
    with pytest.raises(ValueError, match="cannot act for"):
        check_add_alert_words(member, ["word"], acting_user=admin)
    with pytest.raises(ValueError, match="cannot act for"):
        do_remove_alert_words(member, ["word"], acting_user=admin)
    assert db_state() == before


def test_the_server_acts_for_anyone(design, member, admin):
    message = do_send_message(member, stream=design, topic="news", content="from a command", acting_user=None)
    assert message.sender_id == member.id
    check_update_message_flags(admin, op="add", flag="starred", message_ids=[message.id], acting_user=None)
    assert flags_of(admin, message.id) & STARRED


# --- flags -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "msg"),
    [("bogus", "Invalid flag: 'bogus'"), ("mentioned", "Flag not editable: 'mentioned'"),
     ("historical", "Flag not editable: 'historical'")],
)  # fmt: skip
def test_only_editable_flags_change(design, member, admin, flag, msg):
    message = send(member, design)
    refused(msg, check_update_message_flags, admin, op="add", flag=flag, message_ids=[message.id], acting_user=admin)


def test_flags_of_a_message_the_user_may_not_see_are_refused_with_the_others(make_stream, design, member, admin, owner):
    secret = make_stream("secret", owner, private=True)
    hidden = send(owner, secret)
    seen = send(member, design)
    refused("Invalid message(s)", check_update_message_flags, admin, op="add", flag="starred",
            message_ids=[seen.id, hidden.id], acting_user=admin)  # fmt: skip


def test_a_flag_on_channel_history_makes_a_historical_row_but_read_does_not(design, member, moderator):
    message = send(member, design)  # the moderator is not subscribed: they never received it
    assert check_update_message_flags(
        moderator, op="add", flag="read", message_ids=[message.id], acting_user=moderator
    ).changed == []  # fmt: skip
    assert flags_of(moderator, message.id) is None
    change = check_update_message_flags(
        moderator, op="add", flag="starred", message_ids=[message.id, message.id], acting_user=moderator
    )
    assert change.changed == [message.id]
    assert flags_of(moderator, message.id) == READ | HISTORICAL | STARRED


def test_marking_unread_skips_channels_the_user_is_not_subscribed_to(make_stream, design, member, admin, owner):
    elsewhere = make_stream("elsewhere", member, owner)
    mine, theirs = send(member, design), send(member, elsewhere)
    do_mark_messages_read(owner, acting_user=owner)
    assert_success(ApiClient(owner).delete("/users/me/subscriptions", {"subscriptions": ["elsewhere"]}))
    change = check_update_message_flags(
        owner, op="remove", flag="read", message_ids=[mine.id, theirs.id], acting_user=owner
    )
    assert change == ([mine.id], [elsewhere.id])  # the channel whose messages were not marked unread
    assert (flags_of(owner, mine.id), flags_of(owner, theirs.id)) == (0, READ)


def test_changing_flags_tells_the_user_which_changed(capture_events, design, member, admin):
    first, second = send(member, design), send(member, design)
    check_update_message_flags(admin, op="add", flag="starred", message_ids=[first.id], acting_user=admin)
    with capture_events(admin, member, event_types=["update_message_flags"]) as received:
        check_update_message_flags(
            admin, op="add", flag="starred", message_ids=[first.id, second.id], acting_user=admin
        )
    [event] = received[admin.id]
    assert (event["op"], event["flag"], event["messages"], event["all"]) == ("add", "starred", [second.id], False)
    assert received[member.id] == []


def test_marking_read_by_channel_topic_or_sender(make_stream, design, member, admin, owner):
    other = make_stream("other", member, admin)
    lunch, general, elsewhere = send(member, design), send(member, design, topic=""), send(member, other)
    by_owner = send(owner, design, topic="dinner")
    unread = [lunch, general, elsewhere, by_owner]
    assert do_mark_messages_read(admin, stream=design, topic_name="LUNCH", acting_user=admin) == 1
    assert do_mark_messages_read(admin, stream=design, topic_name="general chat", acting_user=admin) == 1
    assert do_mark_messages_read(admin, sender=owner, acting_user=admin) == 1
    assert [flags_of(admin, m.id) for m in unread] == [READ, READ, 0, READ]
    assert do_mark_messages_read(admin, acting_user=admin) == 1


# --- muting ------------------------------------------------------------------------------------------


def test_muting_rules(member, admin, moderator, bot):
    refused("Cannot mute self", check_mute_user, admin, admin, acting_user=admin)
    check_mute_user(admin, member, acting_user=admin)
    refused("User already muted", check_mute_user, admin, member, acting_user=admin)
    check_mute_user(admin, bot, acting_user=admin)
    do_deactivate_user(moderator, acting_user=None)
    check_mute_user(admin, moderator, acting_user=admin)  # deactivated users too
    assert sorted(MutedUser.objects.filter(user=admin).values_list("muted_user_id", flat=True)) == sorted(
        [member.id, bot.id, moderator.id]
    )
    do_unmute_user(admin, member, acting_user=admin)
    refused("User is not muted", do_unmute_user, admin, member, acting_user=admin)
    refused("User is not muted", do_unmute_user, member, admin, acting_user=member)  # muting is one-way


def test_muting_marks_their_messages_read_for_the_muter_only(capture_events, design, member, admin, owner):
    theirs, other = send(member, design), send(owner, design)
    with capture_events(admin, owner, event_types=["update_message_flags", "muted_users"]) as received:
        check_mute_user(admin, member, acting_user=admin)
    assert [e["type"] for e in received[admin.id]] == ["update_message_flags", "muted_users"]
    assert received[admin.id][0]["messages"] == [theirs.id]
    assert received[owner.id] == []
    assert (flags_of(admin, theirs.id), flags_of(admin, other.id), flags_of(owner, theirs.id)) == (READ, 0, 0)
    assert flags_of(admin, send(member, design).id) == READ  # and what they send next


# --- deleting a topic --------------------------------------------------------------------------------


def audit_entries() -> list[tuple]:
    rows = RealmAuditLog.objects.filter(event_type=AuditLogEventType.STREAM_TOPIC_DELETED).order_by("id")
    return [(row.acting_user_id, row.modified_stream_id, row.extra_data) for row in rows]


def test_deleting_a_topic_deletes_it_whatever_its_case_and_nothing_else(make_stream, design, member, admin):
    other = make_stream("other", member, admin)
    gone = [send(member, design, topic="Lunch"), send(member, design, topic="lunch")]
    kept = [send(member, design, topic="lunch break"), send(member, other, topic="lunch"), send(member, [admin])]
    assert check_delete_topic(design, "LUNCH", acting_user=admin) is True
    assert not Message.objects.filter(id__in=[m.id for m in gone]).exists()
    assert Message.objects.filter(id__in=[m.id for m in kept]).count() == 3


def test_deleting_a_topic_is_in_the_audit_log_batch_by_batch(settings, design, member, admin):
    settings.DELETE_TOPIC_BATCH_SIZE = 2
    for n in range(3):
        send(member, design, f"m{n}", topic="")
    assert check_delete_topic(design, "general chat", acting_user=admin) is True
    entry = {"topic_name": "", "message_count": 2}
    assert audit_entries() == [(admin.id, design.id, entry), (admin.id, design.id, {**entry, "message_count": 1})]


def test_deleting_an_empty_topic_writes_no_audit_entry(design, member, admin):
    send(member, design, topic="kept")
    assert check_delete_topic(design, "never used", acting_user=admin) is True
    assert audit_entries() == []
    assert Message.objects.count() == 1


def test_deleting_a_topic_of_protected_history_deletes_what_the_administrator_received(
    make_stream, realm, owner, member, admin
):
    secret = make_stream("secret", owner, member, private=True)
    unseen = send(owner, secret, topic="gone")
    assert_success(
        ApiClient(owner).post(
            "/users/me/subscriptions", {"subscriptions": [{"name": "secret"}], "principals": [admin.id]}
        )
    )
    seen = send(owner, secret, topic="gone")
    assert check_delete_topic(Stream.objects.get(id=secret.id), "gone", acting_user=admin) is True
    assert list(Message.objects.filter(stream=secret).values_list("id", flat=True)) == [unseen.id]
    assert audit_entries() == [(admin.id, secret.id, {"topic_name": "gone", "message_count": 1})]
    assert not Message.objects.filter(id=seen.id).exists()


def test_deleting_a_topic_resets_users_policies_for_it(design, member, admin):
    send(member, design, topic="gone")
    for topic in ("Gone", "kept"):
        assert_success(
            ApiClient(member).post("/user_topics", {"stream_id": design.id, "topic": topic, "visibility_policy": 1})
        )
    check_delete_topic(design, "gone", acting_user=admin)
    assert list(UserTopic.objects.values_list("topic_name", flat=True)) == ["kept"]


def test_the_administrator_who_deletes_a_topic_is_told_even_if_not_subscribed(
    capture_events, make_stream, member, admin, owner
):
    """As in Zulip (do_delete_messages): the deletion reaches the client that asked for it."""
    public = make_stream("public", member, owner)  # its history is public: the administrator may read it
    gone = send(member, public, topic="gone")
    with capture_events(
        admin, event_types=["delete_message"], client_capabilities={"bulk_message_deletion": True}
    ) as received:
        check_delete_topic(public, "gone", acting_user=admin)
    assert [e["message_ids"] for e in received[admin.id]] == [[gone.id]]


# --- alert words ------------------------------------------------------------------------------------


def test_alert_words_are_cleaned_as_zulip_cleans_them(member):
    assert check_add_alert_words(member, [" Deploy ", "", "deploy", "\tship it\n"], acting_user=member) == [
        "Deploy",
        "ship it",
    ]
    assert list(AlertWord.objects.order_by("id").values_list("word", "key")) == [
        ("Deploy", "deploy"),
        ("ship it", "ship it"),
    ]
    assert do_remove_alert_words(member, ["SHIP IT  "], acting_user=member) == ["Deploy"]


def test_a_word_too_long_after_stripping_is_refused_by_the_action(member):
    """The API's parameters refuse it first (as sent); commands call the action."""
    refused("Alert word too long (limit: 100 characters)", check_add_alert_words, member, ["x" * 101], acting_user=None)
    assert check_add_alert_words(member, ["  " + "x" * 100 + "  "], acting_user=None) == ["x" * 100]


def test_the_cap_refuses_the_whole_request(member):
    cap = AlertWord.MAX_PER_USER
    check_add_alert_words(member, [f"w{n}" for n in range(cap)], acting_user=member)
    refused(f"Too many alert words (limit: {cap})", check_add_alert_words, member, ["new"], acting_user=member)
    # Words the user has do not count again.
    assert len(check_add_alert_words(member, ["W0", "w1"], acting_user=member)) == cap


def test_a_refused_add_leaves_the_callers_transaction_usable(member, admin):
    """The cap is checked under the lock, inside do_add_alert_words' savepoint."""
    check_add_alert_words(member, [f"w{n}" for n in range(AlertWord.MAX_PER_USER)], acting_user=None)
    with transaction.atomic():
        with pytest.raises(JsonableError):
            do_add_alert_words(member, ["one too many"], acting_user=None)
        do_add_alert_words(admin, ["still fine"], acting_user=None)
    assert list(AlertWord.objects.filter(user=admin).values_list("word", flat=True)) == ["still fine"]


def test_the_server_changes_anyones_words(member):
    assert check_add_alert_words(member, ["deploy"], acting_user=None) == ["deploy"]
    assert do_remove_alert_words(member, ["deploy"], acting_user=None) == []


@pytest.mark.django_db(transaction=True)
def test_two_requests_at_once_cannot_pass_the_cap_together(realm):
    """The second waits for the first's lock on the user, then counts its words: refused."""
    user = UserFactory(realm=realm)
    half = AlertWord.MAX_PER_USER // 2 + 10
    first_added, release = threading.Event(), threading.Event()
    outcomes: list[str] = []

    def first() -> None:
        try:
            with transaction.atomic():
                do_add_alert_words(User.objects.get(id=user.id), [f"a{n}" for n in range(half)], acting_user=None)
                first_added.set()
                release.wait(timeout=10)
        finally:
            close_old_connections()

    def second() -> None:
        try:
            first_added.wait(timeout=10)
            do_add_alert_words(User.objects.get(id=user.id), [f"b{n}" for n in range(half)], acting_user=None)
            outcomes.append("done")
        except JsonableError:
            outcomes.append("refused")
        finally:
            close_old_connections()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    assert first_added.wait(timeout=10)
    threads[1].join(timeout=0.5)
    assert threads[1].is_alive()  # waiting for the first's lock, not counting without its words
    release.set()
    for thread in threads:
        thread.join(timeout=30)
    assert outcomes == ["refused"]
    assert AlertWord.objects.filter(user=user).count() == half
