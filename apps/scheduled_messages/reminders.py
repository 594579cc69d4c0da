"""What a reminder says (Zulip's get_reminder_formatted_content): that the user asked for it, their
note, and the message it is about, quoted (a poll or a to-do list named instead), with a link to it.
The whole fits in a message: the quote is cut to make room."""

import re

from apps.core.errors import JsonableError
from apps.messages.actions.report import unused_fence
from apps.messages.actions.send import TRUNCATED
from apps.messages.models import Message
from apps.messages.rendering import channel_narrow, silent_mention
from apps.messages.selectors import dm_users_by_recipient
from apps.realms.limits import MAX_MESSAGE_LENGTH, MAX_REMINDER_NOTE_LENGTH
from apps.users.models import User

WIDGETS = {"/poll": "poll", "/todo": "todo list"}
MARKDOWN_PUNCTUATION = re.compile(r"[\\`*_\[\]<>~|$]")


def normalize_note(note: str | None) -> str:
    """The note as the reminder quotes it (trailing space and leading blank lines dropped), or
    Zulip's error past MAX_REMINDER_NOTE_LENGTH."""
    note = (note or "").rstrip().lstrip("\n")
    if len(note) > MAX_REMINDER_NOTE_LENGTH:
        raise JsonableError(f"Maximum reminder note length: {MAX_REMINDER_NOTE_LENGTH} characters")
    return note


def reminder_content(user: User, message: Message, note: str) -> str:
    """The reminder's Markdown, for `user` about `message` (one they may read), with `note`
    (normalized)."""
    what = "message" if message.stream_id is not None else "direct message"
    header = f"You requested a reminder for the following {what}."
    if note:
        header += f" Note:\n > {note}"
    widget = next((name for prefix, name in WIDGETS.items() if message.content.startswith(prefix)), None)
    intro = _introduction(user, message, widget)
    if widget is not None:
        return f"{header}\n\n{intro}"
    fence = unused_fence(message.content)
    frame = f"{header}\n\n{intro}\n{fence}quote\n\n{fence}"
    quoted = message.content
    room = MAX_MESSAGE_LENGTH - len(frame)
    if len(quoted) > room:
        quoted = quoted[: room - len(TRUNCATED)] + TRUNCATED
    return f"{header}\n\n{intro}\n{fence}quote\n{quoted}\n{fence}"


def _introduction(user: User, message: Message, widget: str | None) -> str:
    """Who sent it, linked to it, and where: "@_**Ann|5** [said](link) in #**design>plans@42**:"."""
    realm = message.realm
    if message.stream_id is not None:
        narrow = channel_narrow(message.stream_id, message.stream.name, message.topic)
        url = f"{realm.url}/{narrow}/near/{message.id}"
        # A plain link, not #**channel>topic@id**: the Notification Bot sends it, and a link to a
        # private channel it is not in would stay as written.
        where = f"in [#{_escaped(message.stream.name)} > {_escaped(message.topic)}]({narrow}/with/{message.id})"
    else:
        people = dm_users_by_recipient([message])[(message.recipient_id, message.sender_id)]
        url = f"{realm.url}/#narrow/dm/{','.join(str(person.id) for person in people)}/near/{message.id}"
        others = [person for person in people if person.id != message.sender_id] or [message.sender]
        if [person.id for person in people] == [user.id]:  # a note to themselves
            return f"You [sent]({url}) yourself a {widget}." if widget else f"You [sent]({url}) a note to yourself:"
        where = f"to {_listed([silent_mention(person) for person in others])}"
    sender = silent_mention(message.sender)
    return f"{sender} [sent]({url}) a {widget} {where}." if widget else f"{sender} [said]({url}) {where}:"


def _escaped(text: str) -> str:
    """`text` as a link's text shows it: Markdown's punctuation escaped."""
    return MARKDOWN_PUNCTUATION.sub(r"\\\g<0>", text)


def _listed(names: list[str]) -> str:
    """ "A", "A and B", "A, B, and C"."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])}, and {names[-1]}"
