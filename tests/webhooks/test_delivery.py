"""Outgoing webhooks (apps/webhooks): what triggers a bot, the payload its service gets, what becomes
of the answer, and the failures (a 500, timeouts and their retries), against a real HTTP listener
on 127.0.0.1 run by the task code as the worker runs it."""

import json
import logging
import socket

import pytest
from django_tasks_db.models import DBTaskResult

from apps.core.version import PARLEY_VERSION
from apps.messages.models import Message, UserMessage
from apps.users.actions.activation import do_deactivate_user
from apps.users.actions.bot_services import do_update_bot_service
from apps.users.models import BotService, BotType
from apps.users.selectors import api_email
from apps.webhooks.models import FailedDelivery
from tests.api import api_for, assert_success
from tests.factories import BotFactory
from tests.tasks import run_ready_tasks
from tests.webhooks.conftest import run_tasks_and_retries

MESSAGE_KEYS = {
    "id", "type", "sender_id", "sender_email", "sender_full_name", "sender_realm_str", "avatar_url", "client",
    "content", "content_type", "rendered_content", "display_recipient", "recipient_id", "subject", "is_me_message",
    "timestamp", "reactions", "submessages", "topic_links",
}  # fmt: skip


def send_to_channel(sender, stream, content, topic="lunch"):
    params = {"type": "stream", "to": stream.id, "topic": topic, "content": content}
    return assert_success(api_for(sender).post("/messages", params))["id"]


def send_dm(sender, *to, content="hello"):
    response = api_for(sender).post("/messages", {"type": "direct", "to": [u.id for u in to], "content": content})
    return assert_success(response)["id"]


def latest(after_id):
    """The messages since `after_id`, but the bot's notices to its owner (see owner_notices)."""
    return list(Message.objects.filter(id__gt=after_id).exclude(content__startswith=NOTICE).order_by("id"))


NOTICE = "[A message]("


def owner_notices(bot) -> list[str]:
    """What the bot told its owner (Zulip's notify_bot_owner), oldest first."""
    sent = Message.objects.filter(sender=bot, stream__isnull=True, user_messages__user=bot.bot_owner)
    return list(sent.filter(content__startswith=NOTICE).order_by("id").values_list("content", flat=True))


def notice_intro(bot, message_id: int) -> str:
    people = ",".join(str(i) for i in sorted({Message.objects.get(id=message_id).sender_id, bot.id}))
    link = f"http://testserver/#narrow/dm/{people}/near/{message_id}"
    return f"[A message]({link}) to your bot @_**{bot.full_name}|{bot.id}** triggered an outgoing webhook.\n"


def test_a_mention_posts_the_payload_and_the_answer_appears_in_the_topic(hook_bot, service, owner, member, make_stream):
    stream = make_stream("general", owner, member, hook_bot)
    service.body = {"content": "beep boop"}
    message_id = send_to_channel(member, stream, "@**Hook Bot** hello *there*")
    assert service.received == []  # nothing is posted in the request: the worker does it
    assert run_ready_tasks() == 1

    (received,) = service.received
    assert received.headers["User-Agent"] == f"ZulipOutgoingWebhook/{PARLEY_VERSION} Parley/{PARLEY_VERSION}"
    assert received.headers["Content-Type"] == "application/json"
    payload = received.body
    token = hook_bot.services.get().token
    assert set(payload) == {"bot_email", "bot_full_name", "data", "trigger", "token", "message"}
    assert payload["bot_email"] == hook_bot.delivery_email
    assert payload["bot_full_name"] == "Hook Bot"
    assert payload["data"] == "@**Hook Bot** hello *there*"
    assert (payload["trigger"], payload["token"]) == ("mention", token)
    message = payload["message"]
    assert MESSAGE_KEYS | {"stream_id"} == set(message)
    assert message["id"] == message_id
    assert (message["type"], message["display_recipient"], message["subject"]) == ("stream", "general", "lunch")
    assert (message["stream_id"], message["sender_id"], message["sender_email"]) == (
        stream.id,
        member.id,
        api_email(member),
    )
    assert (message["content"], message["content_type"]) == ("@**Hook Bot** hello *there*", "text/x-markdown")
    assert "<em>there</em>" in message["rendered_content"]
    assert message["sender_realm_str"] == member.realm.string_id

    (answer,) = latest(message_id)
    assert (answer.sender_id, answer.stream_id, answer.topic) == (hook_bot.id, stream.id, "lunch")
    assert (answer.content, answer.sending_client) == ("beep boop", "OutgoingWebhookResponse")
    # The bot's answer triggers nothing, so the conversation does not loop.
    assert run_ready_tasks() == 0
    assert len(service.received) == 1


def test_a_mentioned_bot_not_subscribed_still_gets_the_message(hook_bot, service, owner, member, make_stream):
    """Through its webhook only: no row of it, as in Zulip, whose service bots get none."""
    stream = make_stream("general", owner, member)
    service.body = {"content": "here"}
    message_id = send_to_channel(member, stream, "hi @**Hook Bot**")
    assert not UserMessage.objects.filter(user=hook_bot, message_id=message_id).exists()
    run_ready_tasks()
    assert len(service.received) == 1
    assert service.received[0].body["message"]["id"] == message_id
    assert [m.content for m in latest(message_id)] == ["here"]


def test_a_bot_mentioned_in_a_private_channel_cannot_read_it_afterwards(hook_bot, service, member, admin, make_stream):
    """(The security QA pass: the row the mention gave it let its owner, not in the channel, read
    the message with the bot's key, and its later edits.)"""
    secret = make_stream("secret", member, admin, private=True)
    message_id = send_to_channel(member, secret, "@**Hook Bot** the launch code is 1234")
    run_ready_tasks()
    assert len(service.received) == 1  # the mention still reaches its service, as in Zulip
    bot = api_for(hook_bot)
    assert bot.get(f"/messages/{message_id}").status_code == 400
    narrow = json.dumps([{"operator": "id", "operand": message_id}])
    found = assert_success(
        bot.get("/messages", {"narrow": narrow, "anchor": "newest", "num_before": 1, "num_after": 0})
    )
    assert found["messages"] == []
    everything = assert_success(bot.get("/messages", {"anchor": "newest", "num_before": 50, "num_after": 0}))
    assert message_id not in [m["id"] for m in everything["messages"]]


def test_a_direct_message_triggers_and_the_answer_goes_to_the_same_people(hook_bot, service, member, owner):
    service.body = {"response_string": "legacy answer"}
    message_id = send_dm(member, hook_bot, owner, content="group hello")
    run_ready_tasks()
    (received,) = service.received
    assert received.body["trigger"] == "direct_message"
    message = received.body["message"]
    assert set(message) == MESSAGE_KEYS
    assert message["display_recipient"] == [
        {"id": u.id, "email": api_email(u), "full_name": u.full_name, "is_mirror_dummy": False}
        for u in sorted([member, hook_bot, owner], key=lambda u: u.id)
    ]
    assert message["subject"] == ""
    (answer,) = latest(message_id)
    assert answer.sender_id == hook_bot.id
    assert answer.recipient_id == Message.objects.get(id=message_id).recipient_id
    assert answer.content == "legacy answer"


@pytest.mark.parametrize("body", [{"response_not_required": True}, b"", {"content": "  "}, "", {}])
def test_nothing_to_say_posts_nothing(hook_bot, service, member, body):
    service.body = body
    message_id = send_dm(member, hook_bot)
    run_ready_tasks()
    assert len(service.received) == 1
    assert latest(message_id) == []
    assert not FailedDelivery.objects.exists()


def test_what_does_not_trigger(hook_bot, service, owner, member, realm, make_stream):
    stream = make_stream("general", owner, member, hook_bot)
    other_bot = BotFactory(realm=realm, bot_owner=owner)
    send_to_channel(member, stream, "no mention of the bot")
    send_to_channel(member, stream, "silent @_**Hook Bot**")
    send_to_channel(other_bot, stream, "@**Hook Bot** from a bot")
    send_dm(other_bot, hook_bot)
    send_dm(hook_bot, member)
    do_deactivate_user(hook_bot, acting_user=None)
    send_to_channel(member, stream, "@**Hook Bot** after its deactivation")
    assert run_ready_tasks() == 0
    assert service.received == []


def test_a_generic_bot_mentioned_has_no_webhook(service, owner, member, realm, make_stream):
    bot = BotFactory(realm=realm, bot_owner=owner, full_name="Plain Bot", bot_type=BotType.GENERIC)
    stream = make_stream("general", owner, member, bot)
    send_to_channel(member, stream, "@**Plain Bot** hi")
    assert run_ready_tasks() == 0


def test_a_500_is_reported_in_the_conversation_and_not_retried(hook_bot, service, member):
    service.status, service.body = 500, {"error": "boom"}
    message_id = send_dm(member, hook_bot)
    assert run_tasks_and_retries() == 1
    assert len(service.received) == 1
    assert [m.content for m in latest(message_id)] == ["Failure! Third party responded with 500"]
    failure = FailedDelivery.objects.get()
    assert (failure.outcome, failure.status, failure.attempts, failure.message_id) == ("status", 500, 1, message_id)
    assert "boom" in failure.detail
    # The owner is told, by the bot, with the start of the answer (Zulip's notify_bot_owner).
    assert owner_notices(hook_bot) == [
        notice_intro(hook_bot, message_id) + "The webhook got a response with status code *500*.\n"
        'The response contains the following payload:\n```\n\'{"error": "boom"}\'\n```'
    ]


def test_a_redirect_is_not_followed(hook_bot, service, member):
    service.status, service.headers = 302, {"Location": service.url + "elsewhere"}
    message_id = send_dm(member, hook_bot)
    run_tasks_and_retries()
    assert [r.path for r in service.received] == ["/"]
    assert [m.content for m in latest(message_id)] == ["Failure! Third party responded with 302"]


def test_a_timeout_is_retried_three_times_then_the_bot_is_unavailable(hook_bot, service, member, settings, caplog):
    settings.OUTGOING_WEBHOOK_TIMEOUT_SECONDS = 0.3
    service.delay, service.body = 1.0, {"content": "too late"}
    message_id = send_dm(member, hook_bot)
    with caplog.at_level(logging.INFO, logger="apps.webhooks"):
        assert run_tasks_and_retries() == 4
    assert len(service.received) == 4
    assert [m.content for m in latest(message_id)] == ["Failure! Bot is unavailable"]
    failure = FailedDelivery.objects.get()
    assert (failure.outcome, failure.attempts) == ("unavailable", 4)
    assert owner_notices(hook_bot) == [notice_intro(hook_bot, message_id) + "Request timed out after 0.3 seconds."]
    deliveries = [r.data for r in caplog.records if getattr(r, "data", None)]
    assert [(d["attempt"], d["outcome"]) for d in deliveries] == [(n, "unreachable") for n in (1, 2, 3, 4)]
    assert all(d["bot_id"] == hook_bot.id and d["duration_ms"] >= 250 for d in deliveries)


def test_a_message_deleted_before_its_delivery_is_not_delivered_and_that_is_logged(hook_bot, service, admin, caplog):
    """The bots QA pass: a bot's author asking why nothing came found nothing in the log."""
    message_id = send_dm(admin, hook_bot)
    assert_success(api_for(admin).delete(f"/messages/{message_id}"))
    with caplog.at_level(logging.INFO, logger="apps.webhooks"):
        run_ready_tasks()
    assert service.received == []
    expected = f"Outgoing webhook of message {message_id} to bot {hook_bot.id} not delivered: the message is deleted"
    assert expected in caplog.messages


def test_a_service_down_is_retried_and_a_later_answer_counts(make_hook_bot, service, member):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    bot = make_hook_bot(f"http://127.0.0.1:{closed.getsockname()[1]}/")
    closed.close()  # nothing listens there: connection refused
    message_id = send_dm(member, bot)
    assert run_ready_tasks() == 1
    assert latest(message_id) == []
    retry = DBTaskResult.objects.get(status="READY")
    assert retry.args_kwargs["kwargs"] == {"attempt": 2}
    # The service is back (at its new address) before the retry.
    do_update_bot_service(bot.services.get(), base_url=service.url, acting_user=None)
    service.body = {"content": "back"}
    run_tasks_and_retries()
    assert [m.content for m in latest(message_id)] == ["back"]
    assert not FailedDelivery.objects.exists()


def test_a_service_down_at_every_attempt_is_told_as_down_not_as_slow(make_hook_bot, service, member):
    """Connection refused four times: the owner hears Zulip's "Is my bot server down?" (the bots QA
    pass: urllib3's NewConnectionError is a kind of ConnectTimeoutError, and was told as a timeout)."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    bot = make_hook_bot(f"http://127.0.0.1:{closed.getsockname()[1]}/")
    closed.close()
    message_id = send_dm(member, bot)
    assert run_tasks_and_retries() == 4
    assert [m.content for m in latest(message_id)] == ["Failure! Bot is unavailable"]
    assert owner_notices(bot) == [notice_intro(bot, message_id) + "A connection error occurred. Is my bot server down?"]
    failure = FailedDelivery.objects.get()
    assert (failure.outcome, failure.attempts) == ("unavailable", 4)
    assert "NewConnectionError" in failure.detail


def test_an_answer_too_large_or_malformed_is_refused(hook_bot, service, member, settings):
    settings.OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES = 3000
    service.body = {"content": "x" * 3000}
    first = send_dm(member, hook_bot)
    run_ready_tasks()
    assert [m.content for m in latest(first)] == ["Failure! The bot's answer is too large."]
    service.body = b"not json"
    second = send_dm(member, hook_bot)
    run_ready_tasks()
    assert [m.content for m in latest(second)] == ["Failure! Invalid JSON in response"]
    service.body = ["a", "list"]
    third = send_dm(member, hook_bot)
    run_ready_tasks()
    assert [m.content for m in latest(third)] == ["Failure! Invalid response format"]
    assert FailedDelivery.objects.filter(outcome="answer").count() == 3
    # Nested too deep for a parser (the hostile-input QA pass: the task crashed, nobody was told).
    service.body = b"[" * 2000
    fourth = send_dm(member, hook_bot)
    run_ready_tasks()
    assert [m.content for m in latest(fourth)] == ["Failure! Invalid JSON in response"]
    assert owner_notices(hook_bot)[1] == (
        notice_intro(hook_bot, second) + "The outgoing webhook server attempted to send a message in Zulip, but that "
        "request resulted in the following error:\n> Invalid JSON in response\n\n"
        "The response contains the following payload:\n```\n'not json'\n```"
    )
    assert len(owner_notices(hook_bot)) == 4


@pytest.mark.parametrize(
    ("body", "posted"),
    [
        ({"response_string": "legacy", "content": "new"}, "legacy"),  # Zulip reads response_string first
        ({"content": 42}, "42"),
        ({"content": ["a", "list"]}, '["a", "list"]'),
    ],
)
def test_the_answer_is_read_as_zulip_reads_it(hook_bot, service, member, body, posted):
    service.body = body
    message_id = send_dm(member, hook_bot)
    run_ready_tasks()
    assert [m.content for m in latest(message_id)] == [posted]
    assert owner_notices(hook_bot) == []


def test_a_bot_another_process_created_is_triggered_at_once(service, member, admin, owner, realm):
    """Which people are webhook bots is read with each message, not remembered by the process: a
    bot another process created (`manage.py create_user` beside an embedded server, whose memory it
    cannot reach) gets the next message."""
    send_dm(member, admin)
    # The other process's writes, as they reach the database (none of this process's hooks run).
    bot = BotFactory(realm=realm, bot_owner=owner, bot_type=BotType.OUTGOING_WEBHOOK, full_name="Other Hook")
    BotService.objects.create(bot=bot, name="Other Hook", base_url=service.url, token="t" * 32)
    send_dm(member, bot)
    assert run_ready_tasks() == 1
    assert len(service.received) == 1


def test_a_quoted_mention_does_not_trigger(hook_bot, service, owner, member, make_stream):
    stream = make_stream("general", owner, member, hook_bot)
    send_to_channel(member, stream, "> @**Hook Bot** hello\n\nas it said")
    assert run_ready_tasks() == 0
    assert service.received == []


@pytest.fixture
def slack_bot(hook_bot):
    BotService.objects.filter(bot=hook_bot).update(interface=BotService.Interface.SLACK)
    return hook_bot


def test_the_slack_interface_posts_slacks_form_and_reads_its_text(slack_bot, service, owner, member, make_stream):
    """Zulip's Slack-compatible interface (the bots QA pass: Zulip's JSON was posted whatever the
    interface)."""
    stream = make_stream("general", owner, member, slack_bot)
    service.body = {"text": "pong"}
    message_id = send_to_channel(member, stream, "@**Hook Bot** ping")
    run_ready_tasks()
    (received,) = service.received
    assert received.headers["Content-Type"] == "application/x-www-form-urlencoded"
    timestamp = str(int(Message.objects.get(id=message_id).date_sent.timestamp()))
    assert received.body == {
        "token": slack_bot.services.get().token,
        "team_id": f"T{member.realm_id}",
        "team_domain": "testserver",
        "channel_id": f"C{stream.id}",
        "channel_name": "general",
        "thread_ts": timestamp,
        "timestamp": timestamp,
        "user_id": f"U{member.id}",
        "user_name": member.full_name,
        "text": "@**Hook Bot** ping",
        "trigger_word": "mention",
        "service_id": str(slack_bot.id),
    }
    [answer] = latest(message_id)
    assert (answer.sender_id, answer.stream_id, answer.topic, answer.content) == (
        slack_bot.id, stream.id, "lunch", "pong",
    )  # fmt: skip


def test_the_slack_interface_takes_no_direct_messages(slack_bot, service, member):
    message_id = send_dm(member, slack_bot)
    run_ready_tasks()
    assert service.received == []
    assert [m.content for m in latest(message_id)] == [
        "Failure! Slack outgoing webhooks don't support direct messages."
    ]
    assert owner_notices(slack_bot) == []


def test_an_answer_holding_nul_is_refused_and_told(hook_bot, service, member):
    """NUL, which no message and no PostgreSQL text holds (the fuzzing QA pass: the task crashed on
    PostgreSQL, and nobody was told): refused as Zulip refuses it, the failure kept and told."""
    service.body = {"content": "bad \u0000 reply"}
    first = send_dm(member, hook_bot)
    run_ready_tasks()
    assert [m.content for m in latest(first)] == ["Failure! Message must not contain null bytes"]
    service.status, service.body = 500, b"error \x00 body"
    second = send_dm(member, hook_bot)
    run_tasks_and_retries()
    assert [m.content for m in latest(second)] == ["Failure! Third party responded with 500"]
    details = list(FailedDelivery.objects.order_by("id").values_list("detail", flat=True))
    assert details[-1] == "error \N{REPLACEMENT CHARACTER} body"
    assert all("\x00" not in detail for detail in details)
    assert len(owner_notices(hook_bot)) == 2
