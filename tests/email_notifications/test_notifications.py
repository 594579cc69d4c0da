"""Email notifications (Zulip's missed-message emails): an offline person is emailed about the
direct messages, mentions, followed topics and chosen channels' messages they did not read, once
their batching period has passed, one email per conversation; read messages, active people, bots,
muted conversations and those who turned the setting off get none; a mail server that is down
keeps them for the next run."""

import json
import threading
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection, transaction
from django.utils import timezone

from apps.core.tasks import PERIODIC_JOBS
from apps.email_notifications import notifications
from apps.email_notifications.models import EmailNotification
from apps.messages.models import Message
from apps.users.models import User
from tests.api import ApiClient, assert_success
from tests.factories import UserFactory
from tests.tasks import run_ready_tasks


def dm(sender, *to, content="hello there"):
    params = {"type": "direct", "to": json.dumps([u.id for u in to]), "content": content}
    return assert_success(ApiClient(sender).post("/messages", params))["id"]


def to_channel(sender, stream, content, topic="plans"):
    params = {"type": "stream", "to": stream.name, "topic": topic, "content": content}
    return assert_success(ApiClient(sender).post("/messages", params))["id"]


def pending() -> list[tuple[int, int, str]]:
    rows = EmailNotification.objects.order_by("id")
    return [(row.user_id, row.message_id, row.trigger) for row in rows]


def send_due(later_by: float = 0) -> int:
    """Runs the queued tasks, then the job, `later_by` seconds after now (the batching period)."""
    run_ready_tasks()
    EmailNotification.objects.update(scheduled_at=timezone.now() - timedelta(seconds=later_by))
    return notifications.send_due_email_notifications()


@pytest.fixture
def channel(make_stream, owner, member, admin):
    return make_stream("design", owner, member, admin)


def test_the_job_runs_every_30_seconds():
    assert (30, notifications.send_due_email_notifications) in PERIODIC_JOBS


def test_a_direct_message_is_emailed_once_the_batching_period_passed(realm, owner, member):
    first = dm(member, owner, content="Are you coming **tonight**?")
    second = dm(member, owner, content="Say yes")
    run_ready_tasks()
    assert pending() == [(owner.id, first, "direct_message"), (owner.id, second, "direct_message")]
    due = EmailNotification.objects.get(message_id=first).scheduled_at - timezone.now()
    assert timedelta(seconds=110) < due <= timedelta(seconds=120)  # Zulip's default period
    assert notifications.send_due_email_notifications() == 0  # not yet
    assert send_due() == 1
    [email] = mail.outbox
    assert email.to == [owner.delivery_email]
    assert email.subject == "DMs with Mel Member"
    assert "Are you coming **tonight**?" in email.body
    assert "Say yes" in email.body
    assert f"{realm.url}/#narrow/dm/{member.id}-dm" in email.body
    assert pending() == []
    assert send_due() == 0  # sent once


def test_one_email_per_conversation(realm, owner, member, admin):
    dm(member, owner, content="from Mel")
    dm(admin, owner, content="from Adam")
    dm(admin, owner, member, content="to the three")
    assert send_due() == 4  # three to Olivia, one to Mel
    to_owner = {email.subject: email.body for email in mail.outbox if email.to == [owner.delivery_email]}
    assert sorted(to_owner) == [
        "DMs with Adam Admin",
        "DMs with Mel Member",
        "Group DMs with Adam Admin, Mel Member",
    ]
    assert "from Adam" in to_owner["DMs with Adam Admin"]
    assert "from Mel" not in to_owner["DMs with Adam Admin"]
    group = to_owner["Group DMs with Adam Admin, Mel Member"]
    assert "to the three" in group
    assert f"#narrow/dm/{admin.id},{member.id}-group" in group or f"#narrow/dm/{member.id},{admin.id}-group" in group


def test_mentions_by_conversation_and_plain_messages_not(realm, channel, owner, member, admin):
    to_channel(member, channel, "no mention here")
    mention = to_channel(member, channel, "@**Olivia Owner** look", topic="plans")
    other = to_channel(member, channel, "@**Olivia Owner** and here", topic="other")
    direct = dm(member, owner)
    run_ready_tasks()
    assert sorted(pending()) == [
        (owner.id, mention, "mention"),
        (owner.id, other, "mention"),
        (owner.id, direct, "direct_message"),
    ]
    assert send_due() == 3
    subjects = sorted(email.subject for email in mail.outbox)
    assert subjects == [
        "#design > other",
        "#design > plans",
        "DMs with Mel Member",
    ]
    assert "You were mentioned in #design > plans" in next(e.body for e in mail.outbox if "plans" in e.subject)


def test_wildcard_mentions_follow_the_setting_and_muting(channel, owner, member, admin):
    assert_success(ApiClient(admin).patch("/settings", {"wildcard_mentions_notify": "false"}))
    muted = {"stream_id": channel.id, "topic": "plans", "visibility_policy": "1"}
    assert_success(ApiClient(member).post("/user_topics", muted))
    to_channel(owner, channel, "@**all** meeting now")
    run_ready_tasks()
    assert pending() == []  # the admin turned it off; the member muted the topic
    other = to_channel(owner, channel, "@**all** again", topic="other")
    run_ready_tasks()
    assert pending() == [(member.id, other, "wildcard_mention")]
    # The channel's own setting wins over the user's, both ways (its wildcard mentions still flag
    # the message: tests/messages).
    for user, value in ((member, False), (admin, True)):
        change = [{"stream_id": channel.id, "property": "wildcard_mentions_notify", "value": value}]
        assert_success(ApiClient(user).post("/users/me/subscriptions/properties", {"subscription_data": change}))
    third = to_channel(owner, channel, "@**all** and again", topic="other")
    run_ready_tasks()
    assert [row for row in pending() if row[1] == third] == [(admin.id, third, "wildcard_mention")]


def test_read_messages_active_people_bots_and_the_setting(realm, owner, member, admin, bot):
    read = dm(member, owner)
    assert_success(ApiClient(owner).post("/messages/flags", {"messages": f"[{read}]", "op": "add", "flag": "read"}))
    assert send_due() == 0  # read before it was due: dropped unsent
    assert pending() == []

    assert_success(ApiClient(admin).post("/users/me/presence", {"status": "active"}))
    assert_success(ApiClient(member).patch("/settings", {"enable_offline_email_notifications": "false"}))
    dm(owner, admin, member, bot)
    run_ready_tasks()
    assert pending() == []  # active, turned off, a bot
    assert mail.outbox == []


def test_the_content_is_left_out_when_asked(owner, member, admin):
    """Its senders and conversation too, as Zulip (the notifications QA pass: the subject and the
    body named them)."""
    assert_success(ApiClient(owner).patch("/settings", {"message_content_in_email_notifications": "false"}))
    dm(member, owner, content="the secret plan")
    dm(admin, owner, member, content="group plan")
    send_due()
    to_owner = [email for email in mail.outbox if email.to == [owner.delivery_email]]
    assert len(to_owner) == 2
    for email in to_owner:
        assert email.subject == "New messages"
        assert "plan" not in email.body
        assert member.full_name not in email.body
        assert admin.full_name not in email.body
        assert "keep their content, senders and\nconversation out of email notifications" in email.body


@pytest.mark.parametrize(("policy", "shown"), [(1, False), (2, True), (3, False)])
def test_the_organizations_name_in_the_subject_as_the_user_chose(realm, owner, member, policy, shown):
    """realm_name_in_email_notifications_policy (the notifications QA pass: always there)."""
    assert_success(ApiClient(owner).patch("/settings", {"realm_name_in_email_notifications_policy": policy}))
    dm(member, owner)
    assert send_due() == 1
    assert mail.outbox[0].subject == "DMs with Mel Member" + (f" ({realm.name})" if shown else "")


def test_automatic_names_the_organization_for_an_address_with_accounts_in_others(realm, other_realm, owner, member):
    UserFactory(realm=other_realm, delivery_email=owner.delivery_email)
    dm(member, owner)
    assert send_due() == 1
    assert mail.outbox[0].subject == f"DMs with Mel Member ({realm.name})"


def test_nothing_once_the_setting_is_off_or_the_message_edited_away(owner, member, admin):
    """As Zulip's handle_missedmessage_emails (the notifications QA pass: pending ones were sent,
    and "(deleted)")."""
    dm(member, owner, content="for the owner")
    emptied = dm(member, admin, content="soon nothing")
    run_ready_tasks()
    assert_success(ApiClient(owner).patch("/settings", {"enable_offline_email_notifications": "false"}))
    assert_success(ApiClient(member).patch(f"/messages/{emptied}", {"content": ""}))
    assert send_due() == 0
    assert mail.outbox == []


def test_a_deactivated_user_or_a_deleted_message_gets_nothing(owner, member, admin):
    message_id = dm(member, owner)
    dm(member, admin)
    run_ready_tasks()
    assert_success(ApiClient(owner).delete(f"/messages/{message_id}"))
    User.objects.filter(id=admin.id).update(is_active=False)
    assert send_due() == 0
    assert pending() == []


@pytest.mark.django_db(transaction=True)
def test_a_deletion_under_way_is_waited_for(owner, member):
    """The deletion's transaction holds the message while the task runs: the task waits, then finds
    it gone (it wrote rows naming it, refused at its commit)."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: PostgreSQL")
    message_id = dm(member, owner)
    deleting, finish = threading.Event(), threading.Event()

    def delete():
        try:
            with transaction.atomic():
                Message.objects.select_for_update().get(id=message_id).delete()
                deleting.set()
                finish.wait(10)
        finally:
            connection.close()

    deleter = threading.Thread(target=delete)
    deleter.start()
    assert deleting.wait(10)
    threading.Timer(0.3, finish.set).start()  # the deletion commits while the task waits
    assert notifications.schedule_email_notifications.func(message_id) == {"scheduled": 0}
    deleter.join(10)
    assert pending() == []


def test_a_mail_server_down_keeps_them_for_the_next_run(settings, owner, member, caplog):
    dm(member, owner)
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 1, 2  # nothing listens
    assert send_due() == 0
    assert "wait for the next run" in caplog.text
    assert len(pending()) == 1
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert send_due() == 1
    assert pending() == []


def test_the_server_setting_turns_them_off(settings, owner, member):
    settings.EMAIL_NOTIFICATIONS = False
    dm(member, owner)
    assert send_due() == 0
    assert pending() == []


def test_a_followed_topic_is_emailed_without_a_mention(realm, channel, owner, member, admin):
    follow = {"stream_id": channel.id, "topic": "plans", "visibility_policy": "3"}
    assert_success(ApiClient(owner).post("/user_topics", follow))
    assert_success(ApiClient(admin).post("/user_topics", follow))
    assert_success(ApiClient(admin).patch("/settings", {"enable_followed_topic_email_notifications": "false"}))
    followed = to_channel(member, channel, "news in plans")
    to_channel(member, channel, "elsewhere", topic="other")
    run_ready_tasks()
    assert pending() == [(owner.id, followed, "followed_topic")]  # the admin turned them off
    assert send_due() == 1
    [email] = mail.outbox
    assert email.subject == "#design > plans"
    assert "New messages in #design > plans, a topic you follow" in email.body
    # A follower's own message, and nobody else's follow: nothing queued.
    to_channel(owner, channel, "my own", topic="plans")
    assert run_ready_tasks() == 0


def test_an_edit_that_mentions_someone_emails_them_once(realm, channel, owner, member, admin):
    """Those an edit newly mentions (Zulip's maybe_enqueue_notifications_for_message_update), not a
    follower of the topic (emailed when it was sent), nor for a direct message."""
    follow = {"stream_id": channel.id, "topic": "plans", "visibility_policy": "3"}
    assert_success(ApiClient(admin).post("/user_topics", follow))
    message_id = to_channel(member, channel, "the plan is ready")
    run_ready_tasks()
    assert pending() == [(admin.id, message_id, "followed_topic")]
    assert send_due() == 1
    content = f"the plan is ready, @**{owner.full_name}** and @**{admin.full_name}**"
    assert_success(ApiClient(member).patch(f"/messages/{message_id}", {"content": content}))
    run_ready_tasks()
    assert pending() == [(owner.id, message_id, "mention")]
    assert_success(ApiClient(member).patch(f"/messages/{message_id}", {"content": content + "!"}))
    direct = dm(member, owner)
    assert_success(ApiClient(member).patch(f"/messages/{direct}", {"content": f"hello @**{owner.full_name}**"}))
    run_ready_tasks()
    assert pending() == [(owner.id, message_id, "mention"), (owner.id, direct, "direct_message")]


def emails_of(channel, value: bool) -> dict:
    """The subscription property change asking (or not) for an email about every message."""
    change = {"stream_id": channel.id, "property": "email_notifications", "value": value}
    return {"subscription_data": json.dumps([change])}


def test_a_channel_chosen_for_emails_is_emailed_unless_muted(realm, channel, owner, member, admin, moderator):
    # The owner asks it of this channel; the admin of all channels (the setting) and mutes one topic;
    # the moderator asks it of all channels but turns it off for this one.
    assert_success(ApiClient(owner).post("/users/me/subscriptions/properties", emails_of(channel, True)))
    assert_success(ApiClient(admin).patch("/settings", {"enable_stream_email_notifications": "true"}))
    mute = {"stream_id": channel.id, "topic": "quiet", "visibility_policy": "1"}
    assert_success(ApiClient(admin).post("/user_topics", mute))
    assert_success(ApiClient(moderator).post("/users/me/subscriptions", {"subscriptions": '[{"name": "design"}]'}))
    assert_success(ApiClient(moderator).patch("/settings", {"enable_stream_email_notifications": "true"}))
    assert_success(ApiClient(moderator).post("/users/me/subscriptions/properties", emails_of(channel, False)))
    news = to_channel(member, channel, "news for everyone")
    hush = to_channel(member, channel, "hush", topic="quiet")
    run_ready_tasks()
    expected = [(owner.id, news, "channel"), (owner.id, hush, "channel"), (admin.id, news, "channel")]
    assert sorted(pending()) == sorted(expected)
    assert send_due() == 3  # the owner's two topics, the admin's one
    email = next(e for e in mail.outbox if e.to == [owner.delivery_email] and "plans" in e.subject)
    assert email.subject == "#design > plans"
    assert "New messages in #design > plans in" in email.body
    assert "news for everyone" in email.body


def test_nobody_wanting_channel_emails_queues_nothing(channel, owner, member):
    to_channel(member, channel, "plain")
    assert run_ready_tasks() == 0
    assert_success(ApiClient(member).post("/users/me/subscriptions/properties", emails_of(channel, True)))
    to_channel(member, channel, "my own message")  # the sender's own wish is no reason
    assert run_ready_tasks() == 0
