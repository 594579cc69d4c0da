"""The bouncer backend (apps/push/backends.py) against a fake Zulip push bouncer on 127.0.0.1: what it
sends (Zulip's push/register, push/notify and their authentication), tokens the bouncer reports
stale, and a bouncer that is down (the notification is tried again later, never lost or doubled)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.push.models import ActivePushNotification, PushDeviceToken
from tests.api import api_for, assert_error, assert_success
from tests.tasks import run_ready_tasks

FCM = "/users/me/android_gcm_reg_id"


def send_dm(sender, to):
    return assert_success(api_for(sender).post("/messages", {"type": "direct", "to": [to.id], "content": "ping"}))["id"]


def test_tokens_are_registered_with_the_bouncer_and_notifications_sent_through_it(member, admin, bouncer):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    run_ready_tasks()
    [register] = bouncer.received
    assert register.path == "/api/v1/remotes/push/register"
    assert register.credentials == ("6cde5f7a-1f7e-4978-9716-49f69ebfc9fe", "org-key")
    assert register.user_agent.startswith("Parley/")
    assert register.body["token"] == "fcm-1"
    assert register.body["token_kind"] == PushDeviceToken.Kind.FCM
    assert (register.body["user_id"], register.body["user_uuid"]) == (member.id, str(member.uuid))
    bouncer.received.clear()

    message_id = send_dm(admin, member)
    run_ready_tasks()
    [notify] = bouncer.received
    assert notify.path == "/api/v1/remotes/push/notify"
    assert notify.body["android_devices"] == ["fcm-1"]
    assert notify.body["apple_devices"] == []
    assert notify.body["gcm_payload"]["zulip_message_id"] == message_id
    assert notify.body["apns_payload"]["custom"]["zulip"]["message_ids"] == [message_id]
    assert notify.body["gcm_options"] == {"priority": "high"}


def test_removing_a_token_unregisters_it(member, bouncer):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    assert_success(api_for(member).delete(FCM, {"token": "fcm-1"}))
    run_ready_tasks()
    assert [r.path for r in bouncer.received] == ["/api/v1/remotes/push/register", "/api/v1/remotes/push/unregister"]


def test_tokens_the_bouncer_deleted_are_removed(member, admin, bouncer):
    assert_success(api_for(member).post(FCM, {"token": "fcm-stale"}))
    assert_success(api_for(member).post(FCM, {"token": "fcm-good"}))
    bouncer.answers = [
        (200, {"result": "success"}),
        (200, {"result": "success"}),
        (200, {"result": "success", "total_android_devices": 1, "total_apple_devices": 0,
               "deleted_devices": {"android_devices": ["fcm-stale"], "apple_devices": []}}),
    ]  # fmt: skip
    send_dm(admin, member)
    run_ready_tasks()
    assert list(PushDeviceToken.objects.values_list("token", flat=True)) == ["fcm-good"]


def test_a_bouncer_that_is_down_is_tried_again_later(member, admin, bouncer):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    run_ready_tasks()
    bouncer.received.clear()
    bouncer.answers = [(502, {"result": "error", "msg": "Bad gateway"})]
    message_id = send_dm(admin, member)
    run_ready_tasks()
    assert len(bouncer.received) == 1
    assert not ActivePushNotification.objects.exists()
    [later] = DBTaskResult.objects.filter(status="READY")
    assert later.args_kwargs["kwargs"] == {"attempt": 2}
    assert later.run_after > timezone.now() + timedelta(seconds=5)
    # Its time comes; the bouncer is back.
    bouncer.answers = []
    DBTaskResult.objects.filter(id=later.id).update(run_after=timezone.now())
    run_ready_tasks()
    assert [r.body["gcm_payload"]["zulip_message_id"] for r in bouncer.received[1:]] == [message_id]
    assert ActivePushNotification.objects.filter(user=member, message_id=message_id).exists()


def test_a_bouncer_refusing_the_server_fails_the_task_without_retrying(member, admin, bouncer):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    bouncer.answers = [(401, {"result": "error", "msg": "Invalid credentials", "code": "UNAUTHORIZED"})]
    send_dm(admin, member)
    run_ready_tasks()
    assert not DBTaskResult.objects.filter(status="READY").exists()
    failed = DBTaskResult.objects.filter(status="FAILED")
    assert failed.count() == 2  # the token's registration and the notification
    assert "Invalid credentials" in failed.first().traceback


def test_test_notification_through_a_bouncer_that_is_down(member, bouncer):
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    bouncer.answers = [(503, {})]
    response = api_for(member).post("/mobile_push/test_notification")
    assert_error(response, 502, "BAD_REQUEST", None)


def test_send_test_push_command(member, admin, bouncer):
    from io import StringIO

    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="has no phone registered"):
        call_command("send_test_push", "--user", member.delivery_email)
    assert_success(api_for(member).post(FCM, {"token": "fcm-1"}))
    out = StringIO()
    call_command("send_test_push", "--user", member.delivery_email, stdout=out)
    assert "reached 1 of 1 registered phone(s)" in out.getvalue()
    notify = bouncer.received[-1]
    assert notify.path == "/api/v1/remotes/push/notify"
    assert notify.body["gcm_payload"]["event"] == "test"
    assert notify.body["apns_payload"]["alert"]["title"] == "Test notification"
    bouncer.answers = [(503, {})]
    with pytest.raises(CommandError, match="could not be reached"):
        call_command("send_test_push", "--user", member.delivery_email)
