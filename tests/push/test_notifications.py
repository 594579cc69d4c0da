"""Push notifications of messages (apps/push/notifications.py): who gets one and why, sent by the
background task worker through the push backend (the log backend here, a fake bouncer on 127.0.0.1
in test_bouncer.py), once; and the `remove` notification when the message is read or deleted."""

import logging

import pytest
from django_tasks_db.models import DBTaskResult

from apps.groups.models import SystemGroups
from apps.groups.selectors import get_system_group
from apps.push.models import ActivePushNotification
from apps.users.models import AvatarSource, User
from tests.api import api_for, assert_success
from tests.factories import create_group
from tests.tasks import run_ready_tasks

FCM = "/users/me/android_gcm_reg_id"
APNS = "/users/me/apns_device_token"


@pytest.fixture
def pushes(caplog):
    """Runs the queued tasks and returns what the log backend sent: [(user id, to, payload)]."""

    def run() -> list[tuple[int, str, dict]]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="apps.push"):
            run_ready_tasks()
        return [(r.push_user_id, r.push_to, r.push_payload) for r in caplog.records if hasattr(r, "push_payload")]

    return run


def with_phone(user):
    token = f"fcm-token-{user.id}"
    assert_success(api_for(user).post(FCM, {"token": token}))
    return token


def send_dm(sender, *to, content="hello there"):
    response = api_for(sender).post("/messages", {"type": "direct", "to": [u.id for u in to], "content": content})
    return assert_success(response)["id"]


def send_to_channel(sender, stream, content, topic="lunch"):
    response = api_for(sender).post(
        "/messages", {"type": "stream", "to": stream.id, "topic": topic, "content": content}
    )
    return assert_success(response)["id"]


def test_a_spoiler_shows_only_its_header(member, admin, pushes):
    """Zulip's render_spoiler (the notifications QA pass: its hidden part showed on the lock screen)."""
    with_phone(member)
    send_dm(
        admin, member, content="Who dies?\n\n```spoiler Ending\nSnape kills Dumbledore\n```\n\n```spoiler\nsecret\n```"
    )
    [(_, _, payload)] = pushes()
    assert payload["content"] == "Who dies?\nEnding (…)\n(…)"


def test_emoji_as_characters_and_lists_numbered(member, admin, pushes):
    """As Zulip's get_mobile_push_content (the notifications QA pass: ":smile:", numbers dropped)."""
    with_phone(member)
    send_dm(admin, member, content="hi :smile:\n\n1. one\n2. two")
    [(_, _, payload)] = pushes()
    assert payload["content"] == "hi \U0001f642\n\n1. one\n2. two"


def test_the_empty_topic_is_shown_by_its_name(member, admin, make_stream, pushes):
    """Zulip's get_topic_display_name in the payload (the notifications QA pass: "#garden > ")."""
    stream = make_stream("garden", member, admin)
    with_phone(member)
    send_to_channel(admin, stream, "@**Mel Member** look", topic="")
    [(_, _, payload)] = pushes()
    assert payload["topic"] == "general chat"


def test_a_direct_message_notifies_the_recipients_phone_once(member, admin, pushes):
    token = with_phone(member)
    message_id = send_dm(admin, member, content="Are you **there**?")
    [(user_id, to, payload)] = pushes()
    assert (user_id, to) == (member.id, token)
    assert payload["event"] == "message"
    assert payload["zulip_message_id"] == message_id
    assert payload["recipient_type"] == "private"
    assert payload["content"] == "Are you there?"
    assert payload["content_truncated"] is False
    assert payload["sender_id"] == admin.id
    assert payload["sender_full_name"] == admin.full_name
    assert payload["realm_url"] == member.realm.url
    assert payload["user_id"] == member.id
    assert payload["sender_avatar_url"].startswith("https://secure.gravatar.com/avatar/")
    assert ActivePushNotification.objects.filter(user=member, message_id=message_id).exists()
    # The task running again (a worker killed after sending) sends nothing more.
    from apps.push.notifications import send_message_notifications

    send_message_notifications.enqueue(message_id)
    assert pushes() == []


def test_apns_tokens_get_the_apns_payload(member, admin, guest, pushes):
    assert_success(api_for(member).post(APNS, {"token": "ab" * 32, "appid": "org.zulip.Zulip"}))
    group = send_dm(admin, member, guest)
    [(_, _, payload)] = pushes()
    assert payload["alert"]["body"] == "hello there"
    assert payload["alert"]["subtitle"] == f"{admin.full_name}:"
    zulip = payload["custom"]["zulip"]
    assert zulip["message_ids"] == [group]
    assert zulip["recipient_type"] == "private"
    assert zulip["pm_users"] == ",".join(str(uid) for uid in sorted([admin.id, member.id, guest.id]))


def test_nothing_is_queued_in_an_organization_without_phones(member, admin):
    send_dm(admin, member)
    assert not DBTaskResult.objects.filter(task_path__startswith="apps.push").exists()
    assert DBTaskResult.objects.count() == 1  # the email notification's (tests/email_notifications)


def test_no_notification_to_the_sender_to_muted_senders_or_without_a_phone(member, admin, moderator, pushes):
    with_phone(member)
    with_phone(admin)
    send_dm(member, admin, moderator)  # admin is notified, moderator has no phone, member sent it
    assert [user_id for user_id, _, _ in pushes()] == [admin.id]
    assert_success(api_for(member).post(f"/users/me/muted_users/{moderator.id}"))
    send_dm(moderator, member)  # arrives read: muted
    assert pushes() == []


def test_offline_push_setting_off_means_no_direct_message_notifications(member, admin, pushes):
    with_phone(member)
    assert_success(api_for(member).patch("/settings", {"enable_offline_push_notifications": False}))
    send_dm(admin, member)
    assert pushes() == []


def test_someone_active_is_notified_only_with_online_push_on(member, admin, pushes):
    with_phone(member)
    assert_success(api_for(member).post("/users/me/presence", {"status": "active"}))
    send_dm(admin, member)
    assert len(pushes()) == 1  # enable_online_push_notifications is on by default, as in Zulip
    assert_success(api_for(member).patch("/settings", {"enable_online_push_notifications": False}))
    send_dm(admin, member)
    assert pushes() == []
    assert_success(api_for(member).post("/users/me/presence", {"status": "idle"}))
    # Idle pings do not make someone active: still active from the first ping, within 140 s.
    send_dm(admin, member)
    assert pushes() == []


def test_channel_messages_notify_mentions_wildcards_and_channel_push(member, admin, moderator, make_stream, pushes):
    stream = make_stream("kitchen", member, admin, moderator)
    with_phone(member)
    send_to_channel(admin, stream, "nothing for anyone")
    assert pushes() == []
    mention = send_to_channel(admin, stream, f"hi @**{member.full_name}**")
    [(_, _, payload)] = pushes()
    assert (payload["zulip_message_id"], payload["recipient_type"]) == (mention, "stream")
    assert (payload["stream"], payload["stream_id"], payload["topic"]) == ("kitchen", stream.id, "lunch")
    send_to_channel(admin, stream, "@**all** lunch is here")
    assert len(pushes()) == 1
    assert_success(api_for(member).patch("/settings", {"wildcard_mentions_notify": False}))
    send_to_channel(admin, stream, "@**all** lunch is still here")
    assert pushes() == []
    properties = [{"stream_id": stream.id, "property": "push_notifications", "value": True}]
    assert_success(api_for(member).post("/users/me/subscriptions/properties", {"subscription_data": properties}))
    send_to_channel(admin, stream, "for the channel")
    assert len(pushes()) == 1
    muted = [{"stream_id": stream.id, "property": "is_muted", "value": True}]
    assert_success(api_for(member).post("/users/me/subscriptions/properties", {"subscription_data": muted}))
    send_to_channel(admin, stream, "muted channel now")
    assert pushes() == []
    send_to_channel(admin, stream, f"but @**{member.full_name}** is mentioned")
    assert len(pushes()) == 1


def test_a_group_mention_names_the_group(member, admin, moderator, make_stream, pushes):
    """As Zulip (feature level 76): a notification because of a group mention names the group, the
    smallest of those mentioned that the user is in (through subgroups); a mention by name too, or a
    silent group mention beside it, names none (the notifications QA pass: the APNs subtitle said
    "mentioned you")."""
    stream = make_stream("kitchen", member, admin, moderator)
    assert_success(api_for(member).post(APNS, {"token": "ab" * 32, "appid": "org.zulip.Zulip"}))
    cooks = create_group(admin, "cooks", [member])
    staff = create_group(admin, "staff", [moderator], subgroup_ids=[cooks.id])
    send_to_channel(admin, stream, "@*staff* and @*cooks*: lunch")
    [(_, _, payload)] = pushes()
    assert payload["alert"]["subtitle"] == f"{admin.full_name} mentioned @cooks:"
    zulip = payload["custom"]["zulip"]
    assert (zulip["mentioned_user_group_id"], zulip["mentioned_user_group_name"]) == (cooks.id, "cooks")
    send_to_channel(admin, stream, "@*staff*: dinner")
    [(_, _, payload)] = pushes()
    assert payload["custom"]["zulip"]["mentioned_user_group_id"] == staff.id
    send_to_channel(admin, stream, f"@*staff* and @**{member.full_name}**: breakfast")
    send_to_channel(admin, stream, f"@_*cooks* and @**{member.full_name}**: tea")
    both = pushes()
    assert len(both) == 2
    for _, _, payload in both:
        assert payload["alert"]["subtitle"] == f"{admin.full_name} mentioned you:"
        assert "mentioned_user_group_id" not in payload["custom"]["zulip"]
    with_phone(member)
    send_to_channel(admin, stream, "@*cooks*: coffee")
    fcm = [payload for _, _, payload in pushes() if "event" in payload]
    assert [(p["mentioned_user_group_id"], p["mentioned_user_group_name"]) for p in fcm] == [(cooks.id, "cooks")]


def test_a_channel_whose_wildcard_mentions_are_off_pushes_none(member, admin, make_stream, pushes):
    """The subscription's `wildcard_mentions_notify` off, the user's on: its wildcard mentions push
    nothing (they still flag the message: tests/messages), a personal mention does."""
    stream = make_stream("kitchen", member, admin)
    with_phone(member)
    off = [{"stream_id": stream.id, "property": "wildcard_mentions_notify", "value": False}]
    assert_success(api_for(member).post("/users/me/subscriptions/properties", {"subscription_data": off}))
    send_to_channel(member, stream, "joining the topic")
    send_to_channel(admin, stream, "@**all** lunch is here")
    send_to_channel(admin, stream, "@**topic** lunch is here")
    assert pushes() == []
    send_to_channel(admin, stream, f"@**{member.full_name}** lunch is here")
    assert len(pushes()) == 1


def test_an_edit_that_mentions_someone_notifies_them_once(member, admin, moderator, make_stream, pushes):
    """As Zulip's maybe_enqueue_notifications_for_message_update: those an edit newly mentions, not
    those mentioned before, nor those the channel's notifications told already; never for a direct
    message (its people were told of it)."""
    stream = make_stream("kitchen", member, admin, moderator)
    with_phone(member), with_phone(moderator)
    message_id = send_to_channel(admin, stream, "lunch is ready")
    assert pushes() == []
    edit = api_for(admin).patch
    assert_success(edit(f"/messages/{message_id}", {"content": f"lunch is ready @**{member.full_name}**"}))
    [(user_id, _, payload)] = pushes()
    assert (user_id, payload["zulip_message_id"]) == (member.id, message_id)
    assert ActivePushNotification.objects.get(user=member, message_id=message_id)
    assert_success(edit(f"/messages/{message_id}", {"content": f"lunch is **ready** @**{member.full_name}**"}))
    assert pushes() == []  # mentioned before
    properties = [{"stream_id": stream.id, "property": "push_notifications", "value": True}]
    assert_success(api_for(moderator).post("/users/me/subscriptions/properties", {"subscription_data": properties}))
    told = send_to_channel(admin, stream, "for the channel")
    assert [user_id for user_id, _, _ in pushes()] == [moderator.id]
    assert_success(edit(f"/messages/{told}", {"content": f"for the channel, @**{moderator.full_name}**"}))
    assert pushes() == []  # the channel's notification told them
    dm = send_dm(admin, member, content="hello")
    assert len(pushes()) == 1
    assert_success(edit(f"/messages/{dm}", {"content": f"hello @**{member.full_name}**"}))
    assert pushes() == []


def test_followed_topics_notify(member, admin, make_stream, pushes):
    stream = make_stream("garden", member, admin)
    with_phone(member)
    policy = {"stream_id": stream.id, "topic": "Roses", "visibility_policy": 3}
    assert_success(api_for(member).post("/user_topics", policy))
    send_to_channel(admin, stream, "they bloomed", topic="roses")
    send_to_channel(admin, stream, "other topic", topic="tulips")
    [(_, _, payload)] = pushes()
    assert payload["topic"] == "roses"


def test_a_wildcard_in_a_followed_topic_notifies_by_its_own_setting(member, admin, make_stream, pushes):
    """enable_followed_topic_wildcard_mentions_notify (the notifications QA pass: following alone
    pushed a wildcard mention with every setting off)."""
    stream = make_stream("garden", member, admin)
    with_phone(member)
    assert_success(
        api_for(member).post("/user_topics", {"stream_id": stream.id, "topic": "roses", "visibility_policy": 3})
    )
    settings = {"enable_followed_topic_push_notifications": "false", "wildcard_mentions_notify": "false"}
    assert_success(
        api_for(member).patch("/settings", {**settings, "enable_followed_topic_wildcard_mentions_notify": "false"})
    )
    send_to_channel(admin, stream, "@**all** they bloomed", topic="roses")
    assert pushes() == []
    assert_success(api_for(member).patch("/settings", {"enable_followed_topic_wildcard_mentions_notify": "true"}))
    send_to_channel(admin, stream, "@**all** and again", topic="roses")
    [(_, _, payload)] = pushes()
    assert payload["content"] == "@all and again"


def test_reading_the_message_removes_its_notification(member, admin, pushes):
    token = with_phone(member)
    first, second = send_dm(admin, member), send_dm(admin, member)
    assert len(pushes()) == 2
    assert_success(api_for(member).post("/messages/flags", {"messages": [first], "op": "add", "flag": "read"}))
    [(user_id, to, payload)] = pushes()
    assert (user_id, to) == (member.id, token)
    assert (payload["event"], payload["zulip_message_ids"]) == ("remove", str(first))
    assert_success(api_for(member).post("/mark_all_as_read"))
    [(_, _, payload)] = pushes()
    assert payload["zulip_message_ids"] == str(second)
    assert not ActivePushNotification.objects.exists()
    assert_success(api_for(member).post("/mark_all_as_read"))
    assert pushes() == []


def test_a_message_read_before_the_worker_runs_is_not_notified(member, admin, pushes):
    with_phone(member)
    message_id = send_dm(admin, member)
    assert_success(api_for(member).post("/messages/flags", {"messages": [message_id], "op": "add", "flag": "read"}))
    assert pushes() == []


def test_deleting_a_notified_message_removes_its_notification(member, admin, pushes):
    with_phone(member)
    message_id = send_dm(admin, member)
    assert len(pushes()) == 1
    assert_success(api_for(admin).delete(f"/messages/{message_id}"))
    [(user_id, _, payload)] = pushes()
    assert (user_id, payload["event"], payload["zulip_message_ids"]) == (member.id, "remove", str(message_id))


def test_a_message_moved_where_they_may_not_read_it_comes_off_their_phone(
    member, admin, moderator, make_stream, pushes
):
    """Their row of it goes (apps/messages/actions/move.py), so does its notification (it stayed on
    the lock screen, with its content)."""
    kitchen = make_stream("kitchen", member, admin, moderator)
    secret = make_stream("secret", admin, moderator, private=True)
    with_phone(member)
    with_phone(moderator)
    message_id = send_to_channel(admin, kitchen, f"@**{member.full_name}** @**{moderator.full_name}** the plan")
    assert len(pushes()) == 2
    move = {"stream_id": secret.id, "propagate_mode": "change_one"}
    assert_success(api_for(admin).patch(f"/messages/{message_id}", move))
    [(user_id, _, payload)] = pushes()  # the moderator keeps it, and its notification
    assert (user_id, payload["event"], payload["zulip_message_ids"]) == (member.id, "remove", str(message_id))
    assert list(ActivePushNotification.objects.values_list("user_id", flat=True)) == [moderator.id]


def with_encrypted_device(user) -> int:
    api = api_for(user)
    device_id = assert_success(api.post("/register_client_device"))["device_id"]
    assert_success(
        api.post(
            "/mobile_push/register",
            {
                "device_id": device_id,
                "push_key": "MQ" + "A" * 42 + "=",
                "push_key_id": 7,
                "token_kind": "fcm",
                "token_id": "AAAAAAAAAAE=",
                "bouncer_public_key": "bouncer-key",
                "encrypted_push_registration": "opaque",
            },
        )
    )
    return device_id


def test_encrypted_devices_get_the_apps_payload(member, admin, make_stream, pushes):
    device_id = with_encrypted_device(member)
    message_id = send_dm(admin, member, content="x" * 300)
    [(user_id, to, payload)] = pushes()
    assert (user_id, to) == (member.id, f"device {device_id}")
    assert (payload["type"], payload["recipient_type"]) == ("message", "direct")
    assert payload["message_id"] == message_id
    assert payload["recipient_user_ids"] == sorted([admin.id, member.id])
    assert payload["content"] == "x" * 200 + "…"
    # A channel's, its empty topic by its name, as the other forms (the push QA pass: the app titled
    # it "#garden > null").
    stream = make_stream("garden", member, admin)
    send_to_channel(admin, stream, "@**Mel Member** look", topic="")
    [(_, _, payload)] = pushes()
    assert (payload["recipient_type"], payload["channel_id"]) == ("channel", stream.id)
    assert payload["topic"] == "general chat"


def test_a_sender_the_guest_may_not_see_is_an_unknown_user_in_every_form(realm, member, guest, make_stream, pushes):
    """As Zulip's (the push QA pass: their name, address and picture were in the guest's notifications,
    where GET /users/{id} refused them)."""
    realm.can_access_all_users_group = get_system_group(realm.id, SystemGroups.MEMBERS)
    realm.save(update_fields=["can_access_all_users_group"])
    stream = make_stream("lobby", guest)  # the member is not in it (they may write to it): unseen
    assert_success(api_for(guest).post(APNS, {"token": "ab" * 32, "appid": "org.zulip.Zulip"}))
    with_encrypted_device(guest)
    send_to_channel(member, stream, "@**all** hello from a stranger")
    fcm_token = with_phone(guest)
    by_form = {{fcm_token: "fcm", "ab" * 32: "apns"}.get(to, "device"): payload for _, to, payload in pushes()}
    unknown = f"user{member.id}@"
    assert (by_form["fcm"]["sender_full_name"], by_form["fcm"]["sender_email"][: len(unknown)]) == (
        "Unknown user",
        unknown,
    )
    assert "unknown-user-avatar" in by_form["fcm"]["sender_avatar_url"]
    assert by_form["apns"]["alert"]["subtitle"] == "Unknown user mentioned everyone:"
    assert by_form["apns"]["custom"]["zulip"]["sender_email"].startswith(unknown)
    assert (by_form["device"]["sender_full_name"], by_form["device"]["sender_id"]) == ("Unknown user", member.id)
    assert member.full_name not in str(by_form)


def test_an_uploaded_avatar_is_sent_as_an_absolute_address(member, admin, pushes):
    with_phone(member)
    User.objects.filter(id=admin.id).update(avatar_source=AvatarSource.UPLOADED, avatar_hash="ab" * 16)
    send_dm(admin, member)
    [(_, _, payload)] = pushes()
    assert payload["sender_avatar_url"] == f"{member.realm.url}/user_avatars/{admin.realm_id}/{'ab' * 16}.png?version=1"


def test_the_welcome_bots_messages_notify_no_phone_and_no_email(realm, owner, member, pushes):
    """As Zulip's disable_external_notifications (the notifications QA pass: every new person got
    an email "DMs with Welcome Bot", and a phone its push)."""
    from django.core import mail

    from apps.email_notifications import notifications
    from apps.email_notifications.models import EmailNotification
    from apps.invites.actions.welcome import check_send_test_welcome_message, do_send_welcome_message

    with_phone(owner)
    with_phone(member)
    assert check_send_test_welcome_message("Testing", acting_user=owner) is not None  # makes the bot
    assert do_send_welcome_message(member, custom_text="Hello!", acting_user=None) is not None
    assert pushes() == []
    assert not EmailNotification.objects.exists()
    assert notifications.send_due_email_notifications() == 0
    assert mail.outbox == []
