"""A message's edit history as people are shown it, by the organization's
message_edit_history_visibility_policy: everything ("all"), only moves ("moves"), or nothing."""

from typing import Any

import lxml.html
from lxml.html.diff import htmldiff

from apps.core.errors import JsonableError
from apps.messages.models import Message
from apps.realms.models import Realm
from apps.subscriptions.topics import topic_for_client

TOPIC_KEYS = ("prev_topic", "topic")
CONTENT_KEYS = ("prev_content", "prev_rendered_content")


def visible_edit_history(message: Message, policy: str, *, allow_empty_topic_name: bool) -> list[dict[str, Any]] | None:
    """The `edit_history` of a Message object (newest first), or None when it has none to show;
    its topics as the client is shown topics (the empty one named, unless it takes "")."""
    entries = message.edit_history or []
    if policy == Realm.EditHistoryVisibility.NONE or not entries:
        return None
    if policy == Realm.EditHistoryVisibility.MOVES:
        entries = [_without(entry, CONTENT_KEYS) for entry in entries if _is_move(entry)]
    return [_topics_for_client(message, entry, allow_empty_topic_name) for entry in entries] or None


def message_history(message: Message, *, allow_empty_topic_name: bool) -> list[dict[str, Any]]:
    """GET /messages/{id}/history: each version of the message, oldest first (Zulip's
    fill_edit_history_entries): its topic, content and rendered content as they were, who made it
    and when, with `prev_*` fields naming what the edit changed (and `content_html_diff`, for a
    content edit)."""
    policy = message.realm.message_edit_history_visibility_policy
    if policy == Realm.EditHistoryVisibility.NONE:
        raise JsonableError("Message edit history is disabled in this organization")
    shows_content = policy == Realm.EditHistoryVisibility.ALL
    topic, content, rendered = message.topic, message.content, message.rendered_content
    versions = []
    for entry in message.edit_history or []:  # newest first: walk back from today's message
        if not shows_content and not _is_move(entry):
            continue
        version = {**(entry if shows_content else _without(entry, CONTENT_KEYS)), "topic": topic}
        version.update(content=content, rendered_content=rendered)
        if "prev_topic" in entry:
            topic = entry["prev_topic"]
        if shows_content and "prev_content" in entry:
            version["content_html_diff"] = content_html_diff(entry["prev_rendered_content"], rendered)
            content, rendered = entry["prev_content"], entry["prev_rendered_content"]
        versions.append(version)
    versions.append(
        {
            "topic": topic,
            "content": content,
            "rendered_content": rendered,
            "timestamp": int(message.date_sent.timestamp()),
            "user_id": message.sender_id,
        }
    )
    return [_topics_for_client(message, version, allow_empty_topic_name) for version in reversed(versions)]


def content_html_diff(before: str, after: str) -> str:
    """What an edit changed in the HTML, as Zulip shows it: lxml's htmldiff, its <ins> and <del> made
    `<span class="highlight_text_inserted">` and `<span class="highlight_text_deleted">`, the whole
    in a <div>."""
    fragment = lxml.html.fragment_fromstring(htmldiff(before, after), create_parent="div")
    for tag, css_class in (("ins", "highlight_text_inserted"), ("del", "highlight_text_deleted")):
        for element in fragment.iter(tag):
            element.tag = "span"
            element.set("class", css_class)
    return lxml.html.tostring(fragment, encoding="unicode")


def _topics_for_client(message: Message, entry: dict[str, Any], allow_empty_topic_name: bool) -> dict[str, Any]:
    """The entry with its topics as the client is shown them (a direct message has none)."""
    shown = dict(entry)
    for key in TOPIC_KEYS:
        if key in entry and message.stream_id is not None:
            shown[key] = topic_for_client(entry[key], allow_empty_topic_name=allow_empty_topic_name)
    return shown


def _is_move(entry: dict[str, Any]) -> bool:
    """Whether the edit moved the message (to another topic or channel)."""
    return "prev_topic" in entry or "prev_stream" in entry


def _without(entry: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key not in keys}
