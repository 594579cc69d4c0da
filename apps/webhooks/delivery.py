"""Delivering a message to an outgoing-webhook bot's service, in the task worker (never in the request
that sent the message), and posting its answer; Zulip's zerver/lib/outgoing_webhook.py and
zerver/worker/outgoing_webhooks.py are the reference.

- The payload is Zulip's generic interface: bot_email, bot_full_name, data (the message's Markdown),
  trigger, token (the service's), message (the Message object, its content in Markdown, with
  rendered_content), as JSON, with a User-Agent naming Parley and its version
  (apps/webhooks/outgoing.py, which also keeps the server from reaching refused addresses). A
  service whose interface is Slack's gets Zulip's Slack-compatible form instead (token, team_id,
  channel_name, text, trigger_word, ...: channel messages only) and answers with `text`.
- No answer (a connection error, a timeout): tried again with backoff (apps.core.tasks), up to 3
  times; then "Failure! Bot is unavailable" in the conversation.
- An address refused by the SSRF guard: "Failure! Bot is unavailable" at once, and a warning for
  the operator.
- A non-2xx answer: "Failure! Third party responded with N" in the conversation, not retried (a 3xx
  too: redirects are not followed).
- Every failure is also told to the bot's owner, by the bot in a direct message (Zulip's
  notify_bot_owner: a link to the message, what went wrong, the start of the answer).
- A 2xx answer: its `content` (or Zulip's legacy `response_string`) is posted by the bot in the same
  conversation (same channel and topic, or a direct message to the same people); nothing for
  `response_not_required: true`, an empty body, a JSON "" or blank content (`response_string` first,
  as Zulip; a content that is not a string is posted as its JSON text); an answer that is not a
  JSON object or longer than OUTGOING_WEBHOOK_MAX_RESPONSE_BYTES is refused with a "Failure! ..."
  message. (Zulip's `widget_content` is not supported: ignored.)
Each delivery is logged (logger apps.webhooks: bot, message, status, duration, attempt, outcome);
failures are kept for the operator too (FailedDelivery, in the Django admin).

The task may run twice (apps/core/tasks.py): a service can get a message twice, as with Zulip.
"""

import json
import logging
import time
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from pydantic_core import from_json

from apps.core.errors import JsonableError
from apps.core.tasks import WEBHOOKS_QUEUE, TemporaryFailure, retried_task
from apps.messages.actions.move import message_link
from apps.messages.actions.report import unused_fence
from apps.messages.actions.send import do_send_message, normalize_content
from apps.messages.models import Message
from apps.messages.rendering import silent_mention
from apps.messages.selectors import dm_users_by_recipient, reactions_by_message, submessages_by_message, topic_links_of
from apps.messages.serializers import message_to_dict
from apps.users.models import BotService, User
from apps.users.selectors import api_email
from apps.webhooks.models import FailedDelivery
from apps.webhooks.outgoing import FORM, JSON, Failed, Refused, Unreachable, post_to_service
from apps.webhooks.selectors import bot_service

logger = logging.getLogger("apps.webhooks")

# The first try and up to 3 more on connection errors and timeouts (Zulip's MAX_REQUEST_RETRIES).
MAX_ATTEMPTS = 4
# The client name of the bot's answers (Zulip's).
ANSWER_CLIENT = "OutgoingWebhookResponse"
UNAVAILABLE = "Bot is unavailable"


class BadAnswer(Exception):
    """A 2xx answer the server cannot use; its text is what the conversation is told."""


@retried_task(max_attempts=MAX_ATTEMPTS, pass_attempt=True, queue_name=WEBHOOKS_QUEUE)
def deliver_message(bot_id: int, message_id: int, trigger: str, *, attempt: int = 1) -> None:
    bot = User.objects.select_related("realm").filter(id=bot_id, is_active=True).first()
    message = Message.objects.select_related("realm", "sender", "stream").filter(id=message_id).first()
    service = bot_service(bot) if bot is not None else None
    if bot is None or message is None or service is None:
        # Since it was queued: said, for a bot's author asking why nothing came (the bots QA pass).
        why = (
            "the bot is deactivated"
            if bot is None
            else "the message is deleted"
            if message is None
            else "the bot has no service"
        )
        logger.info("Outgoing webhook of message %d to bot %d not delivered: %s", message_id, bot_id, why)
        return
    delivery = Delivery(bot, service, message, trigger, attempt)
    delivery.run()


class Delivery:
    """One attempt at delivering one message to one bot's service."""

    def __init__(self, bot: User, service: BotService, message: Message, trigger: str, attempt: int) -> None:
        self.bot, self.service, self.message, self.trigger, self.attempt = bot, service, message, trigger, attempt
        self.people = (
            dm_users_by_recipient([message]).get((message.recipient_id, message.sender_id))
            if message.stream_id is None
            else None
        )

    def run(self) -> None:
        slack = self.service.interface == BotService.Interface.SLACK
        if slack and self.message.stream_id is None:
            text = "Slack outgoing webhooks don't support direct messages."
            self.fail(text, FailedDelivery.Outcome.ERROR, notice="")
            return
        if slack:
            body, content_type = urlencode(self.slack_payload()).encode(), FORM
        else:
            body, content_type = json.dumps(self.payload()).encode(), JSON
        started = time.monotonic()
        try:
            answer = post_to_service(self.service.base_url, body, content_type=content_type)
        except Unreachable as exc:
            self.log(logging.INFO, "unreachable", started, detail=str(exc))
            if self.attempt < MAX_ATTEMPTS:
                raise TemporaryFailure(str(exc)) from None
            logger.warning("outgoing webhook of bot %d: no answer after %d attempts", self.bot.id, self.attempt)
            if exc.timed_out:
                seconds = f"{settings.OUTGOING_WEBHOOK_TIMEOUT_SECONDS:g}"
                notice = f"Request timed out after {seconds} seconds."
            else:
                notice = "A connection error occurred. Is my bot server down?"
            self.fail(UNAVAILABLE, FailedDelivery.Outcome.UNAVAILABLE, notice, detail=str(exc))
            return
        except Refused as exc:
            self.log(logging.WARNING, "refused", started, detail=str(exc))
            notice = "The URL configured for the webhook is for a private or disallowed network."
            self.fail(UNAVAILABLE, FailedDelivery.Outcome.REFUSED, notice, detail=str(exc))
            return
        except Failed as exc:
            self.log(logging.WARNING, "failed", started, detail=str(exc))
            notice = f"When trying to send a request to the webhook service, an error occurred:\n```\n{exc}\n```"
            self.fail(
                "An error occurred while reaching the bot's service.", FailedDelivery.Outcome.ERROR, notice, str(exc)
            )
            return
        outcome = "answered" if 200 <= answer.status < 300 else "status"
        self.log(logging.INFO, outcome, started, status=answer.status, address=answer.address)
        if outcome == "status":
            self.fail(
                f"Third party responded with {answer.status}", FailedDelivery.Outcome.HTTP_STATUS,
                f"The webhook got a response with status code *{answer.status}*.", excerpt(answer.body), answer.status,
            )  # fmt: skip
            return
        try:
            if answer.too_large:
                raise BadAnswer("The bot's answer is too large.")
            content = answer_content(answer.body, keys=("text",) if slack else ("response_string", "content"))
            if content is not None:
                self.post(content)
        except (BadAnswer, JsonableError) as exc:
            text = exc.msg if isinstance(exc, JsonableError) else str(exc)
            logger.warning("outgoing webhook of bot %d: unusable answer: %s", self.bot.id, text)
            notice = (
                "The outgoing webhook server attempted to send a message in Zulip, but that request resulted in "
                f"the following error:\n> {text}"
            )
            self.fail(text, FailedDelivery.Outcome.BAD_ANSWER, notice, excerpt(answer.body), answer.status)

    def payload(self) -> dict[str, Any]:
        message = self.message
        shape = message_to_dict(
            message,
            flags=None,
            dm_users=self.people,
            apply_markdown=False,
            client_gravatar=False,
            topic_links=topic_links_of(message) if message.stream_id is not None else None,
            reactions=reactions_by_message([message.id]).get(message.id, ()),
            submessages=submessages_by_message([message.id]).get(message.id, ()),
        )
        shape["rendered_content"] = message.rendered_content
        return {
            "bot_email": api_email(self.bot),
            "bot_full_name": self.bot.full_name,
            "data": message.content,
            "trigger": self.trigger,
            "token": self.service.token,
            "message": shape,
        }

    def slack_payload(self) -> list[tuple[str, str]]:
        """Zulip's Slack-compatible interface (Slack's legacy outgoing webhooks), for a channel message."""
        message = self.message
        timestamp = str(int(message.date_sent.timestamp()))
        return [
            ("token", self.service.token),
            ("team_id", f"T{message.realm_id}"),
            ("team_domain", message.realm.host),
            ("channel_id", f"C{message.stream_id}"),
            ("channel_name", message.stream.name),
            ("thread_ts", timestamp),
            ("timestamp", timestamp),
            ("user_id", f"U{message.sender_id}"),
            ("user_name", message.sender.full_name),
            ("text", message.content),
            ("trigger_word", self.trigger),
            ("service_id", str(self.bot.id)),
        ]

    def post(self, content: str) -> None:
        """The bot says `content` where the message was (where it is now, if it was moved)."""
        content = normalize_content(content)
        if self.message.stream_id is not None:
            do_send_message(
                self.bot, stream=self.message.stream, topic=self.message.topic, content=content,
                client=ANSWER_CLIENT, acting_user=None,
            )  # fmt: skip
        else:
            others = [user for user in self.people or () if user.id != self.bot.id]
            do_send_message(self.bot, dm_with=others, content=content, client=ANSWER_CLIENT, acting_user=None)

    def fail(self, text: str, outcome: str, notice: str, detail: str = "", status: int | None = None) -> None:
        """Tell the conversation ("Failure! `text`", as Zulip) and the bot's owner (`notice`, with
        the answer's start when there was one), and keep the failure for the operator."""
        FailedDelivery.objects.create(
            bot=self.bot, message_id=self.message.id, trigger=self.trigger, url=self.service.base_url[:2000],
            outcome=outcome, status=status, detail=detail, attempts=self.attempt,
        )  # fmt: skip
        try:
            self.post(f"Failure! {text}")
        except JsonableError as exc:
            logger.warning("outgoing webhook of bot %d: cannot post its failure: %s", self.bot.id, exc.msg)
        try:
            if notice:
                self.tell_owner(notice, detail if status is not None else "")
        except JsonableError as exc:
            logger.warning("outgoing webhook of bot %d: cannot tell its owner: %s", self.bot.id, exc.msg)

    def tell_owner(self, notice: str, answer: str) -> None:
        """Zulip's notify_bot_owner: the bot tells its owner, in a direct message, what went wrong."""
        owner = self.bot.bot_owner
        if owner is None or not owner.is_active:
            return
        message = self.message
        if message.stream_id is not None:
            url = message_link(message.realm, message.stream, message.topic, message.id)
        else:
            people = ",".join(str(person.id) for person in self.people or ())
            url = f"{message.realm.url}/#narrow/dm/{people}/near/{message.id}"
        content = f"[A message]({url}) to your bot {silent_mention(self.bot)} triggered an outgoing webhook.\n{notice}"
        if answer:
            payload = repr(answer)
            fence = unused_fence(payload)
            # After a quoted error, a blank line: the text would go on quoting (the Python-client QA pass).
            gap = "\n\n" if notice.rsplit("\n", 1)[-1].startswith(">") else "\n"
            content += f"{gap}The response contains the following payload:\n{fence}\n{payload}\n{fence}"
        do_send_message(
            self.bot, dm_with=[owner], content=normalize_content(content), client=ANSWER_CLIENT, acting_user=None
        )

    def log(self, level: int, outcome: str, started: float, **fields: Any) -> None:
        data = {
            "bot_id": self.bot.id,
            "bot": self.bot.delivery_email,
            "message_id": self.message.id,
            "trigger": self.trigger,
            "attempt": self.attempt,
            "outcome": outcome,
            "duration_ms": round((time.monotonic() - started) * 1000),
            **fields,
        }
        text = " ".join(f"{key}={value}" for key, value in data.items())
        logger.log(level, "outgoing webhook delivery %s", text, extra={"data": data})


def excerpt(body: bytes) -> str:
    """The start of an answer, as text a database keeps (PostgreSQL's text holds no NUL)."""
    return body[:1000].decode(errors="replace").replace("\x00", "\N{REPLACEMENT CHARACTER}")


def answer_content(body: bytes, *, keys: tuple[str, ...]) -> str | None:
    """What the bot says, from its service's 2xx answer (the first of `keys` it has); None: nothing
    to say. Raises BadAnswer."""
    if not body.strip():
        return None
    try:
        answer = from_json(body)
    except ValueError:
        raise BadAnswer("Invalid JSON in response") from None
    if answer == "":
        return None  # zulip-botserver before 2021 answered a JSON "" for nothing to say
    if not isinstance(answer, dict):
        raise BadAnswer("Invalid response format")
    if answer.get("response_not_required"):
        return None
    # Zulip's process_success: the generic interface's legacy response_string first, then content;
    # the Slack interface's text. Any value as its text (a null as nothing to say).
    content = next((answer[key] for key in keys if key in answer), None)
    if content is None:
        return None
    content = content if isinstance(content, str) else json.dumps(content)
    return content if content.strip() else None
