"""Outgoing webhooks end to end: a real server with its task worker, and `zulip-botserver` (from PyPI,
unchanged) running the bundled `helloworld` bot, configured with the bot's email, API key and
service token. A mention of the bot in a channel reaches the botserver, and its reply ("beep boop",
sent through the API by the botserver) appears in the topic; a direct message to the bot too."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
import zulip

from apps.users.actions.create_user import do_create_user
from apps.users.models import BotType
from tests.factories import create_stream
from tests.server import free_port, wait_for

pytestmark = pytest.mark.e2e

BOTSERVER = Path(sys.executable).parent / "zulip-botserver"


@pytest.fixture
def botserver(transactional_db, live_server_factory, people, tmp_path):
    realm, owner, _ = people
    server = live_server_factory(TASK_WORKER="1", OUTGOING_WEBHOOK_ALLOWED_NETWORKS="127.0.0.1/32")
    port = free_port()
    bot = do_create_user(
        realm, "hello-bot@e2e.example", "Hello Bot", bot_type=BotType.OUTGOING_WEBHOOK, bot_owner=owner,
        service_url=f"http://127.0.0.1:{port}/", acting_user=None,
    )  # fmt: skip
    config = {
        "helloworld": {
            "email": bot.delivery_email,
            "key": bot.api_key,
            "site": server.url,
            "token": bot.services.get().token,
        }
    }
    log_path = tmp_path / "botserver.log"
    process = subprocess.Popen(
        [str(BOTSERVER), "--use-env-vars", "--bot-name", "helloworld", "--hostname", "127.0.0.1", "--port", str(port)],
        stdout=log_path.open("ab"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "ZULIP_BOTSERVER_CONFIG": json.dumps(config), "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )

    def log() -> str:
        return log_path.read_text(errors="replace") + "\n--- server ---\n" + server.log()[-5000:]

    def listening() -> bool:
        try:
            requests.get(f"http://127.0.0.1:{port}/", timeout=1)  # Flask: 405 for a GET, once it listens
            return True
        except requests.RequestException:
            return process.poll() is not None

    wait_for(listening, "zulip-botserver to listen", log=log)
    assert process.poll() is None, log()
    yield server, bot, log
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=10)
    assert "Traceback" not in server.log()


def messages_of(client: zulip.Client, narrow: list[dict]) -> list[dict]:
    found = client.get_messages({"anchor": "newest", "num_before": 20, "num_after": 0, "narrow": narrow})
    assert found["result"] == "success", found
    return found["messages"]


def test_a_mention_reaches_the_botserver_and_its_reply_appears_in_the_topic(botserver, people):
    server, bot, log = botserver
    realm, owner, member = people
    stream = create_stream(realm, "lobby", owner, member)
    client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    sent = client.send_message({"type": "stream", "to": "lobby", "topic": "greetings", "content": "@**Hello Bot** hi"})
    assert sent["result"] == "success", sent
    narrow = [{"operator": "channel", "operand": stream.id}, {"operator": "topic", "operand": "greetings"}]

    def replied() -> list[dict]:
        return [m for m in messages_of(client, narrow) if m["sender_id"] == bot.id]

    (reply,) = wait_for(replied, "the bot's reply in the topic", log=log)
    assert reply["content"] == "<p>beep boop</p>"
    assert reply["id"] > sent["id"]
    # The delivery is logged once its answer is posted: wait for the line rather than race it.
    wait_for(lambda: "outgoing webhook delivery" in server.log(), "the delivery's log line", log=log)


def test_a_direct_message_to_the_bot_gets_its_reply(botserver, people):
    server, bot, log = botserver
    _, _, member = people
    client = zulip.Client(email=member.delivery_email, api_key=member.api_key, site=server.url)
    sent = client.send_message({"type": "private", "to": [bot.id], "content": "hello bot"})
    assert sent["result"] == "success", sent
    narrow = [{"operator": "dm", "operand": [bot.id]}]

    def replied() -> list[dict]:
        return [m for m in messages_of(client, narrow) if m["sender_id"] == bot.id]

    (reply,) = wait_for(replied, "the bot's direct reply", log=log)
    assert reply["content"] == "<p>beep boop</p>"
