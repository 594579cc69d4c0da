"""The legacy token endpoints (POST/DELETE /users/me/apns_device_token, /users/me/android_gcm_reg_id)
and POST /mobile_push/test_notification: Zulip's checks and words, one row per (user, kind, token),
another person's token, bots."""

import logging

import pytest
from django.db import connection
from django.utils import timezone

from apps.push.models import PushDeviceToken
from tests.api import api_for, assert_error, assert_success
from tests.concurrency import at_once, made_and_gone_meanwhile

APNS = "/users/me/apns_device_token"
FCM = "/users/me/android_gcm_reg_id"
HEX = "ab12cd34" * 8


def tokens() -> list[tuple]:
    return list(PushDeviceToken.objects.order_by("id").values_list("user_id", "kind", "token", "ios_app_id"))


def refused(user, method, path, params, msg, code="BAD_REQUEST"):
    before = tokens()
    assert_error(api_for(user).request(method, path, params), 400, code, msg)
    assert tokens() == before


def test_apns_token_is_stored_once_in_lower_case(member):
    api = api_for(member)
    assert_success(api.post(APNS, {"token": HEX.upper(), "appid": "org.zulip.Zulip"}))
    assert_success(api.post(APNS, {"token": HEX, "appid": "org.zulip.Zulip-beta"}))
    assert tokens() == [(member.id, PushDeviceToken.Kind.APNS, HEX, "org.zulip.Zulip-beta")]
    assert_success(api.delete(APNS, {"token": HEX.upper()}))
    assert tokens() == []


def test_fcm_token_is_stored_as_sent(member, admin):
    assert_success(api_for(member).post(FCM, {"token": "fcm:Token_1"}))
    assert_success(api_for(admin).post(FCM, {"token": "fcm:Token_1"}))
    assert_success(api_for(member).post(FCM, {"token": "fcm:Token_1"}))
    assert [row[:3] for row in tokens()] == [
        (member.id, PushDeviceToken.Kind.FCM, "fcm:Token_1"),
        (admin.id, PushDeviceToken.Kind.FCM, "fcm:Token_1"),
    ]
    assert_success(api_for(member).delete(FCM, {"token": "fcm:Token_1"}))
    assert [row[0] for row in tokens()] == [admin.id]


@pytest.mark.parametrize(
    ("path", "params", "msg"),
    [
        (APNS, {"token": "", "appid": "org.zulip.Zulip"}, "Empty or invalid length token"),
        (APNS, {"token": "ab" * 2049, "appid": "org.zulip.Zulip"}, "Empty or invalid length token"),
        (APNS, {"token": "not hex!", "appid": "org.zulip.Zulip"}, "Invalid APNS token"),
        (APNS, {"token": "abc", "appid": "org.zulip.Zulip"}, "Invalid APNS token"),
        (APNS, {"token": HEX, "appid": "org zulip/Zulip"}, "Invalid app ID"),
        (APNS, {"token": HEX, "appid": ""}, "Invalid app ID"),
        (FCM, {"token": ""}, "Empty or invalid length token"),
        (FCM, {"token": "x" * 4097}, "Empty or invalid length token"),
    ],
)
def test_bad_tokens_are_refused(member, path, params, msg):
    refused(member, "POST", path, params, msg)


def test_missing_parameters(member):
    refused(member, "POST", APNS, {"token": HEX}, "Missing 'appid' argument", "REQUEST_VARIABLE_MISSING")
    refused(member, "POST", FCM, {}, "Missing 'token' argument", "REQUEST_VARIABLE_MISSING")


def test_another_persons_token_does_not_exist(member, admin, foreign_user):
    assert_success(api_for(admin).post(APNS, {"token": HEX, "appid": "org.zulip.Zulip"}))
    assert_success(api_for(admin).post(FCM, {"token": "theirs"}))
    for user in (member, foreign_user):
        refused(user, "DELETE", APNS, {"token": HEX}, "Token does not exist")
        refused(user, "DELETE", FCM, {"token": "theirs"}, "Token does not exist")
    # The same token of the other kind is another token.
    refused(admin, "DELETE", FCM, {"token": HEX}, "Token does not exist")
    refused(admin, "DELETE", APNS, {"token": ""}, "Empty or invalid length token")


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("POST", APNS, {"token": HEX, "appid": "org.zulip.Zulip"}),
        ("DELETE", APNS, {"token": HEX}),
        ("POST", FCM, {"token": "t"}),
        ("DELETE", FCM, {"token": "t"}),
        ("POST", "/mobile_push/test_notification", {}),
    ],
)
def test_bots_are_refused(bot, method, path, params):
    refused(bot, method, path, params, "This endpoint does not accept bot requests.")


def test_test_notification_to_one_token_or_all(member, admin, caplog):
    api = api_for(member)
    assert_success(api.post(APNS, {"token": HEX, "appid": "org.zulip.Zulip"}))
    assert_success(api.post(FCM, {"token": "fcm-token"}))
    assert_success(api_for(admin).post(FCM, {"token": "admins-token"}))
    with caplog.at_level(logging.INFO, logger="apps.push"):
        assert_success(api.post("/mobile_push/test_notification", {"token": "fcm-token"}))
    sent = [r.getMessage() for r in caplog.records if r.name == "apps.push"]
    assert len(sent) == 1
    assert f"to user {member.id}, FCM token fcm-toke" in sent[0]
    assert "'event': 'test'" in sent[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="apps.push"):
        assert_success(api.post("/mobile_push/test_notification"))
    sent = [r.getMessage() for r in caplog.records if r.name == "apps.push"]
    assert len(sent) == 2
    assert all(f"to user {member.id}," in line for line in sent)


def test_test_notification_errors(member, admin):
    api = api_for(member)
    assert_error(api.post("/mobile_push/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE")
    assert_success(api_for(admin).post(FCM, {"token": "admins-token"}))
    assert_success(api.post(FCM, {"token": "mine"}))
    for token in ("admins-token", "unknown", ""):
        response = api.post("/mobile_push/test_notification", {"token": token})
        assert_error(response, 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writing transaction at a time")
@pytest.mark.django_db(transaction=True)
def test_registered_again_while_removed(member):
    # The QA pass's race: a token registered again as it was removed answered a 500.
    for _ in range(3):
        assert_success(api_for(member).post(APNS, {"token": HEX, "appid": "org.zulip.Zulip"}))
        answers = at_once(
            lambda: api_for(member).delete(APNS, {"token": HEX}),
            *(lambda: api_for(member).post(APNS, {"token": HEX, "appid": "org.zulip.Zulip"}) for _ in range(4)),
        )
        assert [answer.status_code for answer in answers] == [200] * 5
        # Whichever came last: at most one row.
        assert tokens() in ([], [(member.id, PushDeviceToken.Kind.APNS, HEX, "org.zulip.Zulip")])


def test_registered_while_another_request_registers_and_removes_it(member):
    """Another request's row made before this one's INSERT, and removed before this one reads it again
    (the race QA pass: two registrations and a removal at once answered 500): this one's is kept."""
    token = {"user": member, "kind": PushDeviceToken.Kind.APNS, "token": HEX, "last_updated": timezone.now()}
    with made_and_gone_meanwhile(PushDeviceToken, **token) as raced:
        assert_success(api_for(member).post(APNS, {"token": HEX, "appid": "org.zulip.Zulip"}))
    assert raced
    assert tokens() == [(member.id, PushDeviceToken.Kind.APNS, HEX, "org.zulip.Zulip")]
