"""Resolving a topic (renaming it to add or remove "✔ "): the Notification Bot's notice, as Zulip
sends it (maybe_send_resolve_topic_notifications): its text, where, who it arrives read for, the
undo within the grace period, and what does not send one."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.groups.models import UserGroup
from apps.messages.models import Message, NotificationBot, UserMessage
from apps.subscriptions.actions.user_topics import do_set_user_topic_visibility_policy
from apps.subscriptions.models import UserTopic
from apps.users.settings_values import ResolvedTopicNoticeAutoRead
from tests.api import api_for, assert_success
from tests.messages.test_edit_message import edit, refused, set_group, shown, topic_ids
from tests.messages.test_move_between_channels import mention, notices


@pytest.fixture
def design(make_stream, member, admin, moderator):
    """A channel of the member, admin and moderator."""
    return make_stream("design", member, admin, moderator)


RESOLVED = "{} has marked this topic as resolved."
UNRESOLVED = "{} has marked this topic as unresolved."


def bot_messages(stream) -> list[tuple[str, str]]:
    bot = NotificationBot.objects.get(realm=stream.realm).bot
    return list(Message.objects.filter(stream=stream, sender=bot).order_by("id").values_list("topic", "content"))


def age_notices(stream, seconds: int) -> None:
    bot = NotificationBot.objects.get(realm=stream.realm).bot
    Message.objects.filter(stream=stream, sender=bot).update(date_sent=timezone.now() - timedelta(seconds=seconds))


def test_resolving_and_unresolving_post_notices_in_the_topic(design, send, member, admin, capture_events):
    ids = [send(member, design, topic="lunch") for _ in range(2)]
    with capture_events(member) as received:
        assert_success(edit(member, ids[0], topic="✔ lunch", propagate_mode="change_all"))
    assert bot_messages(design) == [("✔ lunch", RESOLVED.format(mention(member)))]
    notice = [e["message"] for e in received[member.id] if e["type"] == "message"]
    assert [(m["subject"], m["sender_full_name"]) for m in notice] == [("✔ lunch", "Notification Bot")]
    age_notices(design, 61)  # past the grace period: unresolving posts its own notice
    assert_success(edit(admin, ids[1], topic="lunch", propagate_mode="change_all"))
    assert bot_messages(design) == [
        ("lunch", RESOLVED.format(mention(member))),
        ("lunch", UNRESOLVED.format(mention(admin))),
    ]
    assert len(topic_ids(design, "lunch")) == 4


def test_an_undo_within_the_grace_period_deletes_the_notice(design, send, member, admin, capture_events):
    message_id = send(member, design, topic="lunch")
    assert_success(edit(member, message_id, topic="✔ lunch", propagate_mode="change_all"))
    [(_, _)] = bot_messages(design)
    notice_id = topic_ids(design, "✔ lunch")[-1]
    with capture_events(admin) as received:
        assert_success(edit(member, message_id, topic="lunch", propagate_mode="change_all"))
    assert bot_messages(design) == []
    deleted = [e for e in received[admin.id] if e["type"] == "delete_message"]
    assert [e.get("message_ids", [e.get("message_id")]) for e in deleted] == [[notice_id]]
    # A message sent after the notice: the notice is no longer the topic's last, so it stays.
    assert_success(edit(member, message_id, topic="✔ lunch", propagate_mode="change_all"))
    send(admin, design, topic="✔ lunch")
    assert_success(edit(member, message_id, topic="lunch", propagate_mode="change_all"))
    assert [content for _, content in bot_messages(design)] == [
        RESOLVED.format(mention(member)),
        UNRESOLVED.format(mention(member)),
    ]


def test_the_notice_arrives_read_as_each_user_chose(design, send, member, admin, moderator):
    message_id = send(member, design, topic="lunch")
    do_set_user_topic_visibility_policy(
        admin, design, "lunch", visibility_policy=UserTopic.VisibilityPolicy.FOLLOWED, acting_user=admin
    )
    moderator.resolved_topic_notice_auto_read_policy = ResolvedTopicNoticeAutoRead.NEVER
    moderator.save()
    assert_success(edit(member, message_id, topic="✔ lunch", propagate_mode="change_all"))
    notice_id = topic_ids(design, "✔ lunch")[-1]
    flags = dict(UserMessage.objects.filter(message_id=notice_id).values_list("user_id", "flags"))
    read = {user_id for user_id, bits in flags.items() if bits & UserMessage.READ}
    # The resolver (always); the admin follows the topic (its policy moved with it), so unread under
    # the default "except_followed"; the moderator never has them read.
    assert member.id in read
    assert admin.id not in read
    assert moderator.id not in read


def test_the_default_policy_marks_it_read_for_those_not_following(design, send, member, admin):
    message_id = send(member, design, topic="lunch")
    assert_success(edit(admin, message_id, topic="✔ lunch"))  # change_one resolves too
    notice_id = topic_ids(design, "✔ lunch")[-1]
    assert UserMessage.objects.get(message_id=notice_id, user=member).flags & UserMessage.READ


def test_what_sends_no_resolve_notice(design, make_stream, send, member, admin):
    kitchen = make_stream("kitchen", member, admin)
    message_id = send(member, design, topic="lunch")
    # Any other rename of a topic, resolved or not.
    assert_success(edit(admin, message_id, topic="✔ food", propagate_mode="change_all",
                        send_notification_to_new_thread="false"))  # fmt: skip
    assert_success(edit(admin, message_id, topic="✔ dinner", propagate_mode="change_all",
                        send_notification_to_new_thread="false"))  # fmt: skip
    # Resolving while moving to another channel: the move's notices only.
    assert_success(edit(admin, message_id, stream_id=kitchen.id, topic="dinner", propagate_mode="change_all",
                        send_notification_to_new_thread="false"))  # fmt: skip
    assert not Message.objects.filter(sender__full_name="Notification Bot").exists()


def test_old_thread_notice_when_resolving_only_if_asked(design, send, member, admin):
    message_id = send(member, design, topic="lunch")
    assert_success(edit(admin, message_id, topic="✔ lunch", send_notification_to_old_thread="true"))
    # The topic's only message moved: the old topic is told the whole topic moved.
    assert notices(design, "lunch") == [f"This topic was moved to #**design>✔ lunch** by {mention(admin)}."]
    assert notices(design, "✔ lunch") == [RESOLVED.format(mention(admin))]


def test_general_chat_cannot_be_resolved(design, send, member):
    message_id = send(member, design, topic="lunch")
    for topic in ("✔", "✔ general chat"):
        refused(member, message_id, "General chat cannot be marked as resolved", topic=topic)


def test_no_notice_when_the_bot_is_deactivated(design, send, member, admin):
    from apps.messages.actions.notification_bot import do_create_notification_bot

    bot = do_create_notification_bot(design.realm)
    bot.is_active = False
    bot.save()
    message_id = send(member, design, topic="lunch")
    assert_success(edit(admin, message_id, topic="✔ lunch"))
    assert bot_messages(design) == []


def test_resolving_alone_is_not_a_move_clients_show(design, send, member):
    message_id = send(member, design, topic="lunch")
    assert_success(edit(member, message_id, topic="✔ lunch", propagate_mode="change_all"))
    assert_success(edit(member, message_id, topic="lunch", propagate_mode="change_all"))
    message = shown(member, message_id)
    assert [entry["topic"] for entry in message["edit_history"]] == ["lunch", "✔ lunch"]
    assert "last_moved_timestamp" not in message  # Zulip's: absent when only resolved or unresolved
    assert_success(edit(member, message_id, topic="✔ dinner", propagate_mode="change_all"))
    assert "last_moved_timestamp" in shown(member, message_id)


def test_a_topic_of_the_longest_length_is_resolved_not_renamed(realm, design, send, member, admin):
    """The new name is compared as sent, before it is cut to 60 characters (Zulip's
    pre_truncation_target_topic_name): a member who may resolve but not move topics resolves it."""
    set_group(realm, "can_move_messages_between_topics_group", "role:administrators")
    longest = "L" * 60
    message_id = send(member, design, topic=longest)
    assert_success(edit(member, message_id, topic="✔ " + longest, propagate_mode="change_all"))
    [(topic, content)] = bot_messages(design)
    assert (topic, content) == (shown(member, message_id)["subject"], RESOLVED.format(mention(member)))
    assert topic.startswith("✔ L")
    assert len(topic) == 60
    refused(member, message_id, "You don't have permission to edit this message", topic="renamed")


def test_a_channels_own_group_may_resolve_its_topics(realm, design, make_stream, send, member, admin):
    """Zulip's feature level 402: the channel's can_resolve_topics_group adds to the organization's."""
    set_group(realm, "can_resolve_topics_group", "role:nobody")
    other = make_stream("other", member, admin)
    here, there = send(member, design, topic="lunch"), send(member, other, topic="lunch")
    refused(member, here, "You don't have permission to resolve topics in this channel.", topic="✔ lunch")
    members = UserGroup.objects.get(realm=realm, name="role:members").id
    assert_success(
        api_for(admin).patch(f"/streams/{design.id}", {"can_resolve_topics_group": json.dumps({"new": members})})
    )
    assert_success(edit(member, here, topic="✔ lunch"))
    refused(member, there, "You don't have permission to resolve topics in this channel.", topic="✔ lunch")


def test_the_channel_moved_to_may_grant_resolving(realm, design, make_stream, send, member, admin):
    """As Zulip's can_resolve_topics: the setting of the channel moved from or of the one moved to."""
    set_group(realm, "can_resolve_topics_group", "role:nobody")
    other = make_stream("other", member, admin)
    here = send(member, design, topic="lunch")
    refused(member, here, "You don't have permission to resolve topics in this channel.",
            topic="✔ lunch", stream_id=other.id)  # fmt: skip
    members = UserGroup.objects.get(realm=realm, name="role:members").id
    assert_success(
        api_for(admin).patch(f"/streams/{other.id}", {"can_resolve_topics_group": json.dumps({"new": members})})
    )
    assert_success(edit(member, here, topic="✔ lunch", stream_id=other.id))
    assert Message.objects.get(id=here).stream_id == other.id


def test_one_more_mark_on_a_resolved_topic_is_a_rename(realm, design, send, member, admin):
    """The permissions QA pass: "✔ x" → "✔ ✔ x" (and back) counted as resolving (and unresolving),
    so someone who may resolve but not rename did both, past the time limit too, with notices for a
    topic that stayed resolved. As Zulip, they are renames; "✔ ✔ x" → "x" is unresolving it."""
    set_group(realm, "can_move_messages_between_topics_group", "role:nobody")
    message_id = send(member, design, topic="lunch")
    assert_success(edit(member, message_id, topic="✔ lunch", propagate_mode="change_all"))
    age_notices(design, 3600)
    no_permission = "You don't have permission to edit this message"
    refused(member, message_id, no_permission, topic="✔ ✔ lunch", propagate_mode="change_all")
    assert_success(edit(admin, message_id, topic="✔ ✔ lunch", propagate_mode="change_all",
                        send_notification_to_new_thread="false"))  # fmt: skip
    refused(member, message_id, no_permission, topic="✔ lunch", propagate_mode="change_all")
    assert bot_messages(design) == [("✔ ✔ lunch", RESOLVED.format(mention(member)))]
    assert_success(edit(member, message_id, topic="lunch", propagate_mode="change_all"))
    assert bot_messages(design)[-1] == ("lunch", UNRESOLVED.format(mention(member)))
