"""Bots of `zulip_bots` (from PyPI, unchanged) keep their state in bot storage: each bundled bot runs
with `zulip-run-bot` in a process of its own against a real server, and a person talks to it with the
official `zulip` client.

- `incrementor` counts the messages it gets: 1, 2, 3, in one answer it edits each time (PATCH
  /messages/{id}), its count and the id of that answer in the server's storage.
- `incident` numbers its tickets from its storage (`StateHandler.get`, then `put`): TICKET0001,
  TICKET0002, then, after the bot's process is stopped and started again, TICKET0003. (The
  incrementor cannot show a restart: its `initialize` asks `StateHandler.contains`, which in
  zulip_bots 0.9.1 looks only at what the running process has cached, so it starts again at 0
  whatever the server keeps.)
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import zulip

from tests.factories import BotFactory
from tests.server import wait_for

pytestmark = pytest.mark.e2e

RUN_BOT = Path(sys.executable).parent / "zulip-run-bot"


class BotProcess:
    """`zulip-run-bot <name>` with a zuliprc of the bot's, its output in a file."""

    def __init__(self, name: str, zuliprc: Path, log_path: Path) -> None:
        self.name, self.zuliprc, self.log_path = name, zuliprc, log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [str(RUN_BOT), self.name, "--config-file", str(self.zuliprc)],
            stdout=self.log_path.open("ab"),
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def run_bot(parley_server, people, tmp_path):
    """`run_bot(name)`: a bot of the owner's, and its process started and listening for messages."""
    realm, owner, _ = people
    processes: list[BotProcess] = []

    def run(name: str) -> tuple[BotProcess, zulip.Client, object]:
        bot = BotFactory(realm=realm, bot_owner=owner, delivery_email=f"{name}-bot@e2e.example", full_name=name)
        zuliprc = tmp_path / f"{name}.zuliprc"
        zuliprc.write_text(f"[api]\nemail={bot.delivery_email}\nkey={bot.api_key}\nsite={parley_server.url}\n")
        process = BotProcess(name, zuliprc, tmp_path / f"{name}.log")
        processes.append(process)
        start_listening(process, bot)
        return process, zulip.Client(config_file=str(zuliprc)), bot

    def start_listening(process: BotProcess, bot) -> None:
        """Start the process; return once it registered its event queue (the server's access log)."""
        registered = "POST /api/v1/register 200"
        before = sum(registered in line and f"user={bot.id}" in line for line in parley_server.log().splitlines())
        process.start()

        def listening() -> bool:
            lines = parley_server.log().splitlines()
            return sum(registered in line and f"user={bot.id}" in line for line in lines) > before

        wait_for(listening, f"{process.name} to register", log=lambda: process.log() + parley_server.log())

    run.restart = lambda process, bot: (process.stop(), start_listening(process, bot))
    yield run
    for process in processes:
        process.stop()
    assert "Traceback" not in parley_server.log()


def direct_message(person: zulip.Client, bot, content: str) -> None:
    sent = person.send_message({"type": "private", "to": [bot.id], "content": content})
    assert sent["result"] == "success", sent


def messages_from(person: zulip.Client, bot) -> list[dict]:
    narrow = [{"operator": "sender", "operand": bot.id}]
    found = person.get_messages({"anchor": "newest", "num_before": 20, "num_after": 0, "narrow": narrow})
    assert found["result"] == "success", found
    return found["messages"]


def test_incrementor_counts_across_messages(run_bot, people, parley_server):
    _, owner, _ = people
    person = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=parley_server.url)
    process, bot_client, bot = run_bot("incrementor")

    for count in (1, 2, 3):
        direct_message(person, bot, "count, please")

        def counted(count=count) -> list[dict]:
            replies = messages_from(person, bot)
            return replies if replies and replies[-1]["content"] == f"<p>{count}</p>" else []

        replies = wait_for(counted, f"the count {count}", log=process.log)
    [reply] = replies  # one answer, edited from 1 to 3
    assert reply["content"] == "<p>3</p>"
    assert "last_edit_timestamp" in reply
    # zulip_bots writes its storage when the handler returns, after it edited the message: wait.
    expected = {"number": "3", "message_id": str(replies[-1]["id"])}

    def stored() -> dict | None:
        storage = bot_client.get_storage()
        assert storage["result"] == "success", storage
        return storage if storage["storage"] == expected else None

    wait_for(stored, "the bot's storage to hold 3", log=process.log, timeout=10)


def test_incident_keeps_its_ticket_count_across_a_restart(run_bot, people, parley_server):
    _, owner, _ = people
    person = zulip.Client(email=owner.delivery_email, api_key=owner.api_key, site=parley_server.url)
    process, bot_client, bot = run_bot("incident")

    def report(what: str, ticket: str) -> None:
        direct_message(person, bot, f"new {what}")

        def answered() -> bool:
            replies = messages_from(person, bot)
            return bool(replies) and f"answer {ticket}" in replies[-1]["content"] and what in replies[-1]["content"]

        wait_for(answered, ticket, log=process.log)

    report("printer on fire", "TICKET0001")
    report("coffee machine empty", "TICKET0002")
    assert bot_client.get_storage({"keys": ["ticket_id"]})["storage"] == {"ticket_id": "2"}

    run_bot.restart(process, bot)
    report("lift stuck", "TICKET0003")
    assert bot_client.get_storage()["storage"] == {"ticket_id": "3"}
    assert len(messages_from(person, bot)) == 3
